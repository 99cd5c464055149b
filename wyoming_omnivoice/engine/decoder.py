"""The batched masked-diffusion decode loop (upstream ``_generate_iterative``).

Each step runs three graphs on the whole batch:

* the published embeddings graph on the token grid (the current target tokens are written
  into both the conditional and the unconditional copies first),
* the bidirectional backbone on all rows of the batch in one call,
* our scoring graph (:mod:`.scoring`) on the scored positions only, returning ``[B, 8, T]``
  argmax tokens and confidences.

Host work per step is ``O(8 T)``: position scores, Gumbel noise from each item's own
``numpy.random.Generator``, top-k and the token update.

Two row layouts are exact to upstream:

* ``"rows"``: upstream's layout, ``2B`` rows (conditional rows, then unconditional rows that
  hold only the target frames), right-padded, ``[2B, 1, L, L]`` boolean mask with a diagonal
  on every padded position so no mask row is all-False;
* ``"packed"``: each item's unconditional target frames follow its conditional sequence in
  the same row with a block-diagonal mask. Attention inside each block only sees relative
  positions, so rotary attention gives the same result while the backbone processes
  ``S + T`` instead of ``2 S`` positions per item.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .prompt import Prompt
from .schedule import unmask_counts
from .scoring import (
    COND_INDEX,
    CONF,
    GUIDANCE,
    HIDDEN,
    MASK_ID,
    NUM_CODEBOOKS,
    PRED,
    TOPK_INDICES,
    TOPK_VALUES,
    UNCOND_INDEX,
    USE_CFG,
)
from .sessions import Graph

LAYOUTS = ("packed", "rows", "auto")
#: Row length at which a backbone forward's attention (quadratic) costs as much as its
#: projections and MLP (linear): a forward over L positions costs about L * (1 + L / this).
#: Measured on the real-width model (onnxruntime CPU: 1.66 ms/pos + 6.0e-4 ms/pos^2).
ATTENTION_BREAK_EVEN = 2800
#: Row-length buckets (positions). Lengths beyond the last round up to a multiple of it.
BUCKETS = (64, 96, 128, 192, 256, 384, 512, 768, 1024)
_BEYOND = 256


def bucket_for(length: int, buckets: tuple[int, ...] = BUCKETS) -> int:
    """The smallest bucket holding ``length`` positions (multiples of 256 past the last)."""
    for size in buckets:
        if length <= size:
            return size
    return -(-length // _BEYOND) * _BEYOND


def choose_layout(prompts: list[Prompt]) -> str:
    """The cheaper exact layout for a batch under the forward cost model.

    Packing saves the prompt's text positions of the unconditional copy but makes one long
    row; for long targets two shorter rows cost less attention than one packed row.
    """
    def cost(rows: int, length: int) -> float:
        return rows * length * (1.0 + length / ATTENTION_BREAK_EVEN)

    size = len(prompts)
    packed = cost(size, natural_length(prompts, "packed"))
    rows = cost(2 * size, natural_length(prompts, "rows"))
    return "packed" if packed <= rows else "rows"


def natural_length(prompts: list[Prompt], layout: str) -> int:
    """Row length of a batch before bucketing."""
    if layout == "packed":
        return max(p.length + p.num_target for p in prompts)
    return max(p.length for p in prompts)


@dataclass(frozen=True)
class DecodeOptions:
    """Decoding parameters, with upstream ``OmniVoiceGenerationConfig`` names and defaults."""

    num_step: int = 32
    guidance_scale: float = 2.0
    t_shift: float = 0.1
    layer_penalty_factor: float = 5.0
    position_temperature: float = 5.0
    class_temperature: float = 0.0
    denoise: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.num_step, int) or not 1 <= self.num_step <= 256:
            raise ValueError(f"num_step must be an integer from 1 to 256, not {self.num_step!r}")
        if not 0.0 <= float(self.guidance_scale) <= 20.0:
            raise ValueError(f"guidance_scale must be between 0 and 20, not {self.guidance_scale}")
        if not 0.0 < float(self.t_shift) <= 10.0:
            raise ValueError(f"t_shift must be in (0, 10], not {self.t_shift}")
        if float(self.position_temperature) < 0 or float(self.class_temperature) < 0:
            raise ValueError("temperatures must not be negative")


@dataclass
class DecodeItem:
    """One request inside a batch: its conditional prompt and its own random generator."""

    prompt: Prompt
    rng: np.random.Generator


@dataclass
class DecodeStats:
    """Where the time of the last decode went (seconds)."""

    total_s: float = 0.0
    backbone_s: float = 0.0
    embed_s: float = 0.0
    scoring_s: float = 0.0
    steps: int = 0
    rows: int = 0
    length: int = 0
    layout: str = ""
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def outside_backbone_share(self) -> float:
        return 0.0 if self.total_s <= 0 else 1.0 - self.backbone_s / self.total_s


class _Batch:
    """The static layout of one batch: the token grid, mask and gather indices.

    ``pad_to`` rounds the row length up (length buckets); padded positions attend only to
    themselves and no valid position attends to them, so valid outputs are unchanged.
    """

    def __init__(self, prompts: list[Prompt], layout: str, pad_to: int | None = None,
                 pad_rows_to: int | None = None) -> None:
        self.prompts = prompts
        self.layout = layout
        size = len(prompts)
        self.t_lens = [p.num_target for p in prompts]
        self.t_max = max(self.t_lens)
        rows = size if layout == "packed" else 2 * size
        length = natural_length(prompts, layout)
        if pad_to is not None:
            length = max(length, pad_to)
        if pad_rows_to is not None:
            # Extra rows are all padding (each position attends to itself only).
            rows = max(rows, pad_rows_to)
        self.rows, self.length = rows, length
        self.ids = np.full((rows, NUM_CODEBOOKS, length), MASK_ID, dtype=np.int64)
        self.audio_mask = np.zeros((rows, length), dtype=bool)
        self.mask = np.zeros((rows, 1, length, length), dtype=bool)
        # Where each item's target frames sit: (row, start) for the cond and uncond copies.
        self.cond_slot: list[tuple[int, int]] = []
        self.uncond_slot: list[tuple[int, int]] = []
        used_per_row = [0] * rows
        for i, p in enumerate(prompts):
            s_len, t_len = p.length, p.num_target
            if layout == "packed":
                cond_row = uncond_row = i
                uncond_start = s_len
            else:
                cond_row, uncond_row = i, size + i
                uncond_start = 0
            self.ids[cond_row, :, :s_len] = p.ids
            self.audio_mask[cond_row, :s_len] = p.audio_mask
            self.audio_mask[uncond_row, uncond_start:uncond_start + t_len] = True
            self.mask[cond_row, 0, :s_len, :s_len] = True
            self.mask[uncond_row, 0, uncond_start:uncond_start + t_len,
                      uncond_start:uncond_start + t_len] = True
            used_per_row[cond_row] = max(used_per_row[cond_row], s_len)
            used_per_row[uncond_row] = max(used_per_row[uncond_row], uncond_start + t_len)
            self.cond_slot.append((cond_row, s_len - t_len))
            self.uncond_slot.append((uncond_row, uncond_start))
        # Padded positions attend to themselves only: no all-False mask row, no NaN.
        for row, used in enumerate(used_per_row):
            pad = np.arange(used, length)
            self.mask[row, 0, pad, pad] = True
        self.cond_index = np.zeros((size, self.t_max), dtype=np.int64)
        self.uncond_index = np.zeros((size, self.t_max), dtype=np.int64)
        for i, t_len in enumerate(self.t_lens):
            frames = np.arange(t_len)
            row, start = self.cond_slot[i]
            self.cond_index[i, :t_len] = row * length + start + frames
            row, start = self.uncond_slot[i]
            self.uncond_index[i, :t_len] = row * length + start + frames
        # Where every valid target cell of every item sits in ``ids`` (both copies), so the
        # whole batch's tokens are written with one fancy-indexed assignment per step.
        item = np.concatenate([np.full(t, i, dtype=np.intp) for i, t in enumerate(self.t_lens)])
        frame = np.concatenate([np.arange(t, dtype=np.intp) for t in self.t_lens])
        self._src = (item, frame)
        self._dst = []
        for slots in (self.cond_slot, self.uncond_slot):
            slot_rows = np.array([r for r, _ in slots], dtype=np.intp)[item]
            slot_cols = np.array([c for _, c in slots], dtype=np.intp)[item] + frame
            self._dst.append((slot_rows, slot_cols))

    def put_all(self, tokens: np.ndarray) -> None:
        """Write the batch's current tokens ``[B, 8, T_max]`` into both copies."""
        values = tokens[self._src[0], :, self._src[1]]
        for rows, cols in self._dst:
            self.ids[rows, :, cols] = values


class _PlainStep:
    """The numpy path: each graph's outputs come back to the host as numpy arrays."""

    def __init__(self, decoder: Decoder, batch: _Batch, scorer: Graph, guidance: np.ndarray,
                 use_cfg: np.ndarray, want: list[str]) -> None:
        self.decoder, self.batch, self.scorer = decoder, batch, scorer
        self.guidance, self.use_cfg, self.want = guidance, use_cfg, want

    def run(self, stats: DecodeStats) -> list[np.ndarray]:
        return self.decoder.forward(self.batch, self.scorer, self.guidance, self.use_cfg,
                                    self.want, stats)


class Decoder:
    """Runs the decode loop over the embeddings, backbone and scoring graphs.

    ``runner`` (an :class:`.iobinding.StepRunner`) keeps tensors on the device between the
    graphs of a step; ``buckets`` pads every batch to a bucket length (and ``row_buckets``
    its row count) so shapes repeat and CUDA graphs can be reused.
    """

    def __init__(
        self,
        embeddings: Graph,
        backbone: Graph,
        scorer: Graph,
        sampling_scorer_factory: Callable[[], Graph],
        hidden_size: int,
        layout: str = "packed",
        *,
        runner: Any = None,
        buckets: tuple[int, ...] | None = None,
        row_buckets: tuple[int, ...] | None = None,
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
        self.embeddings = embeddings
        self.backbone = backbone
        self.scorer = scorer
        self._sampling_scorer_factory = sampling_scorer_factory
        self._sampling_scorer: Graph | None = None
        self.hidden_size = hidden_size
        self.layout = layout
        self.runner = runner
        self.buckets = buckets
        self.row_buckets = row_buckets
        self.last_stats = DecodeStats()

    def _scorer_for(self, options: DecodeOptions) -> Graph:
        if options.class_temperature <= 0:
            return self.scorer
        if self._sampling_scorer is None:
            self._sampling_scorer = self._sampling_scorer_factory()
        return self._sampling_scorer

    def forward(self, batch: _Batch, scorer: Graph, guidance: np.ndarray,
                use_cfg: np.ndarray, want: list[str], stats: DecodeStats) -> list[np.ndarray]:
        """One model evaluation: embeddings -> backbone -> scoring, ``[B, 8, T]`` out."""
        t0 = time.perf_counter()
        (embeds,) = self.embeddings.session.run(
            ["inputs_embeds"],
            self.embeddings.cast_inputs({"input_ids": batch.ids, "audio_mask": batch.audio_mask}),
        )
        t1 = time.perf_counter()
        (hidden,) = self.backbone.session.run(
            ["hidden_states"],
            self.backbone.cast_inputs({"inputs_embeds": embeds, "attention_mask": batch.mask}),
            self.backbone.run_options,
        )
        t2 = time.perf_counter()
        results = scorer.run(
            {HIDDEN: hidden, COND_INDEX: batch.cond_index, UNCOND_INDEX: batch.uncond_index,
             GUIDANCE: guidance, USE_CFG: use_cfg},
            want,
        )
        t3 = time.perf_counter()
        stats.embed_s += t1 - t0
        stats.backbone_s += t2 - t1
        stats.scoring_s += t3 - t2
        return results

    def layout_for(self, prompts: list[Prompt]) -> str:
        """The row layout of a batch (``auto`` picks the cheaper exact one)."""
        return choose_layout(prompts) if self.layout == "auto" else self.layout

    def shape_for(self, prompts: list[Prompt], pad_to: int | None = None,
                  layout: str | None = None) -> tuple[int | None, int | None]:
        """``(pad_to, pad_rows_to)`` for a batch under the decoder's bucket settings."""
        layout = layout or self.layout_for(prompts)
        if pad_to is None and self.buckets:
            pad_to = bucket_for(natural_length(prompts, layout), self.buckets)
        pad_rows = None
        if self.row_buckets:
            rows = len(prompts) * (1 if layout == "packed" else 2)
            pad_rows = next((r for r in self.row_buckets if r >= rows), None)
        return pad_to, pad_rows

    def _step(self, batch: _Batch, scorer: Graph, guidance: np.ndarray, use_cfg: np.ndarray,
              want: list[str]) -> Any:
        if self.runner is not None:
            return self.runner.prepare(batch, scorer, guidance, use_cfg, want)
        return _PlainStep(self, batch, scorer, guidance, use_cfg, want)

    def warm_up(self, prompt: Prompt, lengths: tuple[int, ...], rows: int = 1) -> int:
        """Run one forward per bucket length (allocations, CUDA graph capture)."""
        done = 0
        stats = DecodeStats()
        guidance = np.array(2.0, dtype=np.float32)
        use_cfg = np.array(True)
        layout = self.layout_for([prompt] * rows)
        for length in lengths:
            if natural_length([prompt], layout) > length:
                continue
            _, pad_rows = self.shape_for([prompt] * rows, layout=layout)
            batch = _Batch([prompt] * rows, layout, length, pad_rows)
            self._step(batch, self.scorer, guidance, use_cfg, [PRED, CONF]).run(stats)
            done += 1
        return done

    # -- the loop ----------------------------------------------------------------------
    def decode(self, items: list[DecodeItem], options: DecodeOptions,
               pad_to: int | None = None) -> list[np.ndarray]:
        """Decode a batch; returns int64 ``[8, T_i]`` per item, all cells filled."""
        started = time.perf_counter()
        stats = DecodeStats()
        prompts = [item.prompt for item in items]
        layout = self.layout_for(prompts)
        pad_to, pad_rows = self.shape_for(prompts, pad_to, layout)
        batch = _Batch(prompts, layout, pad_to, pad_rows)
        stats.rows, stats.length, stats.layout = batch.rows, batch.length, layout
        size = len(items)
        t_max = batch.t_max
        t_lens = np.array(batch.t_lens)
        # All items' tokens in one [B, 8, T_max] grid; cells past an item's length hold 0
        # (never MASK), so they are never scored or chosen.
        valid = np.arange(t_max)[None, :] < t_lens[:, None]
        tokens = np.where(np.broadcast_to(valid[:, None, :], (size, NUM_CODEBOOKS, t_max)),
                          MASK_ID, 0).astype(np.int64)
        schedules = np.array([
            unmask_counts(NUM_CODEBOOKS * t, options.num_step, options.t_shift)
            for t in batch.t_lens
        ], dtype=np.int64).reshape(size, options.num_step)
        penalty = (np.arange(NUM_CODEBOOKS, dtype=np.float32)[:, None]
                   * np.float32(options.layer_penalty_factor))
        scorer = self._scorer_for(options)
        guidance = np.array(options.guidance_scale, dtype=np.float32)
        use_cfg = np.array(options.guidance_scale != 0, dtype=bool)
        sampling = options.class_temperature > 0
        want = [PRED, CONF] + ([TOPK_VALUES, TOPK_INDICES] if sampling else [])
        position_temp = np.float32(options.position_temperature)
        step_runner = self._step(batch, scorer, guidance, use_cfg, want)
        cells = NUM_CODEBOOKS * t_max
        ranks = np.arange(cells)[None, :]

        for step in range(options.num_step):
            results = step_runner.run(stats)
            pred_all, conf_all = results[0], results[1]
            counts = schedules[:, step]
            active = counts > 0
            if sampling:
                pred_all = pred_all.copy()
            scores = conf_all - penalty
            if position_temp > 0:
                scores = scores / position_temp
            # Each item draws from its own generator, in upstream's order (classes, then
            # positions), and only on steps where it unmasks something.
            for i in np.flatnonzero(active):
                t_len = batch.t_lens[i]
                if sampling:
                    pred_all[i, :, :t_len] = _sample_classes(
                        results[2][i, :, :t_len], results[3][i, :, :t_len],
                        options.class_temperature, items[i].rng,
                    )
                if position_temp > 0:
                    scores[i, :, :t_len] += _gumbel(items[i].rng, (NUM_CODEBOOKS, t_len))
            scores = np.where(tokens != MASK_ID, np.float32(-np.inf), scores)
            # Stable sort on the [8, T_max] grid keeps upstream's tie order (lower flat
            # index of [8, T_i] first): padding cells are -inf and sort last.
            order = np.argsort(-scores.reshape(size, cells), axis=1, kind="stable")
            chosen = np.zeros((size, cells), dtype=bool)
            np.put_along_axis(chosen, order, ranks < counts[:, None], axis=1)
            chosen = chosen.reshape(tokens.shape)
            tokens = np.where(chosen, pred_all, tokens)
            batch.put_all(tokens)
            stats.steps += 1

        stats.total_s = time.perf_counter() - started
        self.last_stats = stats
        out = [tokens[i, :, :t] for i, t in enumerate(batch.t_lens)]
        if size and any(np.any(t == MASK_ID) for t in out):
            raise RuntimeError("decode finished with MASK cells left; schedule bug")
        return [np.ascontiguousarray(t) for t in out]


def _gumbel(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gumbel noise as upstream: ``-log(-log(u + 1e-10) + 1e-10)``, ``u ~ U[0, 1)``."""
    u = rng.random(shape, dtype=np.float32)
    eps = np.float32(1e-10)
    return -np.log(-np.log(u + eps) + eps)


def _sample_classes(
    values: np.ndarray, indices: np.ndarray, temperature: float, rng: np.random.Generator
) -> np.ndarray:
    """Gumbel-max sampling among the top-10 % classes (the rest are -inf upstream)."""
    noisy = values / np.float32(temperature) + _gumbel(rng, values.shape)
    choice = np.argmax(noisy, axis=-1)
    return np.take_along_axis(indices, choice[..., None], axis=-1)[..., 0]
