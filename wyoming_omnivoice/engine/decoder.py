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

LAYOUTS = ("packed", "rows")


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
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def outside_backbone_share(self) -> float:
        return 0.0 if self.total_s <= 0 else 1.0 - self.backbone_s / self.total_s


class _Batch:
    """The static layout of one batch: the token grid, mask and gather indices.

    ``pad_to`` rounds the row length up (length buckets); padded positions attend only to
    themselves and no valid position attends to them, so valid outputs are unchanged.
    """

    def __init__(self, prompts: list[Prompt], layout: str, pad_to: int | None = None) -> None:
        self.prompts = prompts
        self.layout = layout
        size = len(prompts)
        self.t_lens = [p.num_target for p in prompts]
        self.t_max = max(self.t_lens)
        if layout == "packed":
            rows = size
            length = max(p.length + p.num_target for p in prompts)
        else:
            rows = 2 * size
            length = max(p.length for p in prompts)
        if pad_to is not None:
            length = max(length, pad_to)
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

    def put_tokens(self, i: int, tokens: np.ndarray) -> None:
        """Write item ``i``'s current target tokens ``[8, T_i]`` into both copies."""
        t_len = self.t_lens[i]
        row, start = self.cond_slot[i]
        self.ids[row, :, start:start + t_len] = tokens
        row, start = self.uncond_slot[i]
        self.ids[row, :, start:start + t_len] = tokens


class Decoder:
    """Runs the decode loop over the embeddings, backbone and scoring graphs."""

    def __init__(
        self,
        embeddings: Graph,
        backbone: Graph,
        scorer: Graph,
        sampling_scorer_factory: Callable[[], Graph],
        hidden_size: int,
        layout: str = "packed",
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

    # -- the loop ----------------------------------------------------------------------
    def decode(self, items: list[DecodeItem], options: DecodeOptions,
               pad_to: int | None = None) -> list[np.ndarray]:
        """Decode a batch; returns int64 ``[8, T_i]`` per item, all cells filled."""
        started = time.perf_counter()
        stats = DecodeStats()
        batch = _Batch([item.prompt for item in items], self.layout, pad_to)
        stats.rows, stats.length = batch.rows, batch.length
        size = len(items)
        tokens = [np.full((NUM_CODEBOOKS, t), MASK_ID, dtype=np.int64) for t in batch.t_lens]
        schedules = [
            unmask_counts(NUM_CODEBOOKS * t, options.num_step, options.t_shift)
            for t in batch.t_lens
        ]
        penalty = (np.arange(NUM_CODEBOOKS, dtype=np.float32)[:, None]
                   * np.float32(options.layer_penalty_factor))
        scorer = self._scorer_for(options)
        guidance = np.array(options.guidance_scale, dtype=np.float32)
        use_cfg = np.array(options.guidance_scale != 0, dtype=bool)
        want = [PRED, CONF] + ([TOPK_VALUES, TOPK_INDICES] if options.class_temperature > 0
                               else [])

        for step in range(options.num_step):
            results = self.forward(batch, scorer, guidance, use_cfg, want, stats)
            pred_all, conf_all = results[0], results[1]
            for i, item in enumerate(items):
                count = schedules[i][step]
                if count <= 0:
                    continue
                t_len = batch.t_lens[i]
                pred = pred_all[i, :, :t_len]
                if options.class_temperature > 0:
                    pred = _sample_classes(
                        results[2][i, :, :t_len], results[3][i, :, :t_len],
                        options.class_temperature, item.rng,
                    )
                scores = conf_all[i, :, :t_len] - penalty
                if options.position_temperature > 0:
                    scores = scores / np.float32(options.position_temperature) + _gumbel(
                        item.rng, scores.shape
                    )
                current = tokens[i]
                scores = np.where(current != MASK_ID, np.float32(-np.inf), scores)
                chosen = _top_k(scores.reshape(-1), count)
                flat = current.reshape(-1)
                flat[chosen] = pred.reshape(-1)[chosen]
                batch.put_tokens(i, current)
            stats.steps += 1

        stats.total_s = time.perf_counter() - started
        self.last_stats = stats
        if size and any(np.any(t == MASK_ID) for t in tokens):
            raise RuntimeError("decode finished with MASK cells left; schedule bug")
        return tokens


def _gumbel(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gumbel noise as upstream: ``-log(-log(u + 1e-10) + 1e-10)``, ``u ~ U[0, 1)``."""
    u = rng.random(shape, dtype=np.float32)
    eps = np.float32(1e-10)
    return -np.log(-np.log(u + eps) + eps)


def _top_k(scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the ``count`` largest scores; ties go to the lower index."""
    if count >= scores.size:
        return np.argsort(-scores, kind="stable")
    return np.argsort(-scores, kind="stable")[:count]


def _sample_classes(
    values: np.ndarray, indices: np.ndarray, temperature: float, rng: np.random.Generator
) -> np.ndarray:
    """Gumbel-max sampling among the top-10 % classes (the rest are -inf upstream)."""
    noisy = values / np.float32(temperature) + _gumbel(rng, values.shape)
    choice = np.argmax(noisy, axis=-1)
    return np.take_along_axis(indices, choice[..., None], axis=-1)[..., 0]
