"""The batched masked-diffusion decode loop (upstream ``_generate_iterative``).

Each step runs three graphs on the whole batch:

* the published embeddings graph on the token grid (the current target tokens are written
  into both the conditional and the unconditional copies first),
* the bidirectional backbone on all rows of the batch in one call,
* our scoring graph (:mod:`.scoring`) on the scored positions only, returning ``[B, 8, T]``
  argmax tokens and confidences.

Host work per step is ``O(8 T)``: position scores, Gumbel noise from each item's own
``numpy.random.Generator`` (drawn when the item starts), top-k and the token update
(:func:`.selection.choose_cells`). The decode is resumable per item (:mod:`.stepping`):
:meth:`Decoder.decode` starts all items together and steps them to the end.

The row layouts of a batch (packed, rows, split) are in :mod:`.layouts`; the opt-in prefix
cache (``DecodeOptions.prefix_cache``, not exact) in :mod:`.prefix_cache`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.decoding.decode_types import DecodeItem, DecodeOptions, DecodeStats
from wyoming_omnivoice.engine.decoding.stepping import Stepper, run_to_end
from wyoming_omnivoice.engine.forward.layouts import (
    LAYOUTS,
    Batch,
    Grid,
    bucket_for,
    choose_layout,
    grid_shapes,
    natural_length,
)
from wyoming_omnivoice.engine.forward.prefix_cache import CachedBackbone, PrefixCacheStep
from wyoming_omnivoice.engine.graphs.scoring import (
    COND_INDEX,
    CONF,
    GUIDANCE,
    HIDDEN,
    PRED,
    UNCOND_INDEX,
)
from wyoming_omnivoice.engine.prompt.builder import Prompt
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

__all__ = ["DecodeItem", "DecodeOptions", "DecodeStats", "Decoder"]


class _PlainStep:
    """The numpy path: each graph's outputs come back to the host as numpy arrays.

    The embeddings of a position depend on its own tokens only (a table lookup, and a sum
    over the codebooks at audio positions), and only the target positions change between
    steps. So the whole grid is embedded once, and each later step embeds the target
    positions alone and writes them into that copy: the same values, for a fraction of
    the embeddings graph's work on an anchored reply (its text and reference are most of
    the row)."""

    def __init__(self, decoder: Decoder, batch: Batch, scorer: Graph, guidance: np.ndarray,
                 want: list[str]) -> None:
        self.decoder, self.batch, self.scorer = decoder, batch, scorer
        self.guidance, self.want = guidance, want
        self.embeds: list[np.ndarray | None] = [None] * len(batch.grids)
        self.targets = [batch.target_cells(grid) for grid in batch.grids]

    def run(self, stats: DecodeStats) -> list[np.ndarray]:
        return self.decoder.forward(self.batch, self.scorer, self.guidance,
                                    self.want, stats, embed=self._embed)

    def _embed(self, index: int, grid: Grid) -> np.ndarray:
        embeddings = self.decoder.embeddings
        cached = self.embeds[index]
        rows, cols = self.targets[index]
        if cached is None or len(cols) == 0:
            (full,) = embeddings.session.run(
                ["inputs_embeds"],
                embeddings.cast_inputs({"input_ids": grid.ids, "audio_mask": grid.audio_mask}),
                embeddings.run_options)
            self.embeds[index] = full
            return np.asarray(full)
        ids = grid.ids[rows, :, cols].T[None]  # [1, 8, targets]
        (part,) = embeddings.session.run(
            ["inputs_embeds"],
            embeddings.cast_inputs({"input_ids": np.ascontiguousarray(ids),
                                    "audio_mask": grid.audio_mask[rows, cols][None]}),
            embeddings.run_options)
        cached[rows, cols] = part[0]
        return cached


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
        scorer_factory: Callable[[bool, bool], Graph],
        hidden_size: int,
        layout: str = "packed",
        *,
        runner: Any = None,
        buckets: tuple[int, ...] | None = None,
        row_buckets: tuple[int, ...] | None = None,
        max_positions: int | None = None,
        cached_backbone: Callable[[], CachedBackbone] | None = None,
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, not {layout!r}")
        if layout == "split" and runner is not None:
            raise ValueError("layout 'split' runs two backbone calls per step and cannot use "
                             "IO binding; use 'packed', 'rows' or 'auto'")
        self.embeddings = embeddings
        self.backbone = backbone
        #: The default scoring graph: greedy classes, guided.
        self.scorer = scorer
        self._scorer_factory = scorer_factory
        #: Scoring graphs by (sampling, guided); the others are built on first use.
        self._scorers: dict[tuple[bool, bool], Graph] = {(False, True): scorer}
        self.hidden_size = hidden_size
        self.layout = layout
        self.runner = runner
        self.buckets = buckets
        self.row_buckets = row_buckets
        #: Longest backbone input the graph accepts (a prepared backbone's rotary table).
        self.max_positions = max_positions
        #: The prefix-cache session (:mod:`.prefix_cache`), loaded on first use.
        self.cached_backbone = cached_backbone
        self.last_stats = DecodeStats()
        #: ``(guided, noisy) -> StepSession``: the step session of the step loop on the
        #: device (:mod:`.device_selection`; set by the engine with IO binding), or None
        #: (also once the device loop has failed: :func:`.device_selection.leave_device_loop`).
        self.selection_graph: Callable[..., Any] | None = None
        #: One row per backbone forward: set by the engine when the backbone failed its
        #: multi-row check at load (:mod:`.row_check`).
        self.one_row = False

    def _scorer(self, *, sampling: bool, guided: bool) -> Graph:
        key = (sampling, guided)
        if key not in self._scorers:
            self._scorers[key] = self._scorer_factory(sampling, guided)
        return self._scorers[key]

    def scorer_for(self, options: DecodeOptions) -> Graph:
        """The scoring session of a decode of ``options`` (sampling, guided)."""
        return self._scorer(sampling=options.class_temperature > 0,
                            guided=options.guidance_scale != 0)

    def forward(self, batch: Batch, scorer: Graph, guidance: np.ndarray,
                want: list[str], stats: DecodeStats,
                embed: Callable[[int, Grid], np.ndarray] | None = None,
                backbone: Callable[[int, Grid, np.ndarray], np.ndarray] | None = None,
                ) -> list[np.ndarray]:
        """One model evaluation: embeddings -> backbone per grid -> scoring, ``[B, 8, T]``.

        ``embed(index, grid)``: the grid's embeddings (default: the embeddings graph on the
        whole grid); ``backbone(index, grid, embeds)``: its hidden states (default:
        :meth:`run_backbone`)."""
        hidden_parts = []
        for index, grid in enumerate(batch.grids):
            t0 = time.perf_counter()
            if embed is not None:
                embeds = embed(index, grid)
            else:
                (embeds,) = self.embeddings.session.run(
                    ["inputs_embeds"],
                    self.embeddings.cast_inputs({"input_ids": grid.ids,
                                                 "audio_mask": grid.audio_mask}),
                    self.embeddings.run_options,
                )
            t1 = time.perf_counter()
            hidden = backbone(index, grid, embeds) if backbone is not None \
                else self.run_backbone(grid, embeds)
            stats.embed_s += t1 - t0
            stats.backbone_s += time.perf_counter() - t1
            hidden_parts.append(hidden)
        t2 = time.perf_counter()
        if len(hidden_parts) > 1:
            # One flat [positions, hidden] array; the scorer's indices address it.
            hidden = np.concatenate([h.reshape(-1, h.shape[-1]) for h in hidden_parts])[None]
        results = scorer.run(
            {HIDDEN: hidden, COND_INDEX: batch.cond_index, UNCOND_INDEX: batch.uncond_index,
             GUIDANCE: guidance},
            want,
        )
        stats.scoring_s += time.perf_counter() - t2
        return results

    def run_backbone(self, grid: Grid, embeds: np.ndarray) -> np.ndarray:
        """The exact backbone on one grid: ``[rows, length, hidden]`` (with
        :attr:`one_row`, a forward per row)."""
        if self.one_row and embeds.shape[0] > 1:
            return np.concatenate([self._backbone(embeds[i:i + 1], grid.mask[i:i + 1])
                                   for i in range(embeds.shape[0])])
        return self._backbone(embeds, grid.mask)

    def _backbone(self, embeds: np.ndarray, mask: np.ndarray) -> np.ndarray:
        (hidden,) = self.backbone.session.run(
            ["hidden_states"],
            self.backbone.cast_inputs({"inputs_embeds": embeds, "attention_mask": mask}),
            self.backbone.run_options,
        )
        return np.asarray(hidden)

    def layout_for(self, prompts: list[Prompt]) -> str:
        """The row layout of a batch (``auto`` picks the cheapest exact one)."""
        if self.layout != "auto":
            return self.layout
        # The IO-binding runner binds one grid per step.
        return choose_layout(prompts, ("packed", "rows") if self.runner is not None
                             else ("packed", "split"))

    def shape_for(self, prompts: list[Prompt], pad_to: int | None = None,
                  layout: str | None = None) -> tuple[int | tuple[int, ...] | None, int | None]:
        """``(pad_to, pad_rows_to)`` for a batch under the decoder's bucket settings."""
        layout = layout or self.layout_for(prompts)
        shapes = grid_shapes(prompts, layout)
        padded: int | tuple[int, ...] | None = pad_to
        if pad_to is None and self.buckets:
            buckets = self.buckets
            padded = tuple(bucket_for(length, buckets) for _, length in shapes)
        pad_rows = None
        if self.row_buckets:
            rows = max(r for r, _ in shapes)
            pad_rows = next((r for r in self.row_buckets if r >= rows), None)
        return padded, pad_rows

    def prepare_step(self, batch: Batch, scorer: Graph, guidance: np.ndarray,
                     want: list[str], prefix_cache: int = 0) -> Any:
        """One forward of ``batch`` made ready: an object whose ``run(stats)`` runs it and
        returns the ``want``-ed outputs (plain, IO binding, or prefix cache)."""
        return self._step(batch, scorer, guidance, want, prefix_cache)

    def _step(self, batch: Batch, scorer: Graph, guidance: np.ndarray,
              want: list[str], prefix_cache: int = 0) -> Any:
        """(Tests watch the decode's forwards by wrapping this.)"""
        if prefix_cache >= 2:
            if self.runner is not None or self.cached_backbone is None:
                raise ValueError("the prefix cache runs on the CPU step path with a prepared "
                                 "fp32 or int8 backbone; this engine has none (use "
                                 "prefix_cache 0)")
            plain = _PlainStep(self, batch, scorer, guidance, want)
            return PrefixCacheStep(plain, self.cached_backbone(), prefix_cache, plain._embed)
        if self.runner is not None:
            return self.runner.prepare(batch, scorer, guidance, want)
        return _PlainStep(self, batch, scorer, guidance, want)

    def warm_up(self, prompt: Prompt, lengths: tuple[int, ...], rows: int = 1,
                prefix_cache: int = 0) -> int:
        """Run one forward per bucket length (allocations, CUDA graph capture); with
        ``prefix_cache`` a refresh and a cached step too."""
        done = 0
        stats = DecodeStats()
        guidance = np.array(2.0, dtype=np.float32)
        layout = self.layout_for([prompt] * rows)
        for length in lengths:
            if natural_length([prompt], layout) > length:
                continue
            _, pad_rows = self.shape_for([prompt] * rows, layout=layout)
            batch = Batch([prompt] * rows, layout, length, pad_rows)
            self._step(batch, self.scorer, guidance, [PRED, CONF]).run(stats)
            if prefix_cache >= 2:
                cached = self._step(batch, self.scorer, guidance, [PRED, CONF], prefix_cache)
                cached.run(stats)
                cached.run(stats)
            done += 1
        return done

    # -- the loop ----------------------------------------------------------------------
    def stepper(self, options: DecodeOptions, pad_to: int | None = None, *,
                host_only: bool = False) -> Stepper:
        """A resumable decode of ``options`` (:mod:`.stepping`): items join and leave at
        step boundaries; ``host_only``: on the host loop even with the device loop."""
        return Stepper(self, options, pad_to, host_only=host_only)

    def decode(self, items: list[DecodeItem], options: DecodeOptions,
               pad_to: int | None = None) -> list[np.ndarray]:
        """Decode a batch; returns int64 ``[8, T_i]`` per item, all cells filled.

        All items start together; between steps this thread's
        :func:`.stepping.between_steps` hook runs (the worker serves requests there)."""
        stepper = self.stepper(options, pad_to)
        states = [stepper.start(item.prompt, item.rng) for item in items]
        failed: list[BaseException] = []
        run_to_end(stepper, lambda state: failed.append(state.error)
                   if state.error is not None else None)
        self.last_stats = stepper.stats
        if failed:
            raise failed[0]
        return [state.codes for state in states]
