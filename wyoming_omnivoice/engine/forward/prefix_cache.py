"""``--prefix-cache N``: decode steps that reuse the prefix's keys and values (opt-in).

Every step changes only the target positions' tokens; the rest of a row (the text, the
reference or anchor codes: most of every forward) keeps its inputs. Like the prompt caches
of diffusion language models (Fast-dLLM, dLLM-Cache, dKV-Cache), a step ``k`` with
``k % N == 0`` is a refresh: the whole row is computed and every layer's prefix keys and
values are kept; the other steps compute only the positions from the first target column
on (the conditional target, the unconditional copy, padding), attending to the kept prefix
keys and values and to their own (:mod:`.prefix_cache_graph`).

Not exact for ``N >= 2``: the prefix's hidden states at layers >= 1 depend on the target
through the bidirectional attention, and between refreshes they are those of the last
refresh. With the int8 backbone a cached step is also quantized over fewer positions (its
activation scales are per tensor). ``N`` of 0 or 1 is the exact decode, the same code path.
Its effect on the sound cannot be judged without the real weights; docs/performance.md,
"Prefix cache", has the measured speed and agreement on random weights.

Runs on the numpy step path (CPU, no IO binding) with a prepared fp32 or int8 backbone: a
second onnxruntime session of the same weights (its own packed copy of them in memory).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, ProviderChoice
from wyoming_omnivoice.engine.store.model_files import ModelError

# onnx and the graph rewrite (engine/graphs/prefix_cache_graph.py) are imported when the
# session is made, not with this module: the decoder imports it at every start, and a
# restart without --prefix-cache never imports onnx (about 0.6 s on a small CPU).
POSITION_IDS = "position_ids"
#: Graph inputs and outputs of each layer's cache (``.format(layer)``), as the rewrite
#: names them (tests/engine/test_scoring_cache.py checks they agree).
PAST_KEY, PAST_VALUE = "past_key_{}", "past_value_{}"
PRESENT_KEY, PRESENT_VALUE = "present_key_{}", "present_value_{}"

if TYPE_CHECKING:  # pragma: no cover
    from wyoming_omnivoice.engine.forward.layouts import Batch, Grid
    from wyoming_omnivoice.engine.store.prepared_store import PreparedBackbone

_LOGGER = logging.getLogger(__name__)

#: Prepared variants whose attention core the rewrite handles (fp16 casts around it).
CACHE_VARIANTS = ("fp32", "int8")
#: Largest refresh interval accepted (``num_step`` is at most 256).
MAX_PREFIX_CACHE = 256


def check_prefix_cache(value: object) -> int:
    """``value`` as a refresh interval (0 = off), else ValueError saying what is accepted."""
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 0 <= value <= MAX_PREFIX_CACHE:
        raise ValueError(f"prefix_cache must be a whole number from 0 (off) to "
                         f"{MAX_PREFIX_CACHE} (refresh every N steps), not {value!r}")
    return value


class CachedBackbone:
    """The prefix-cache session of a prepared backbone."""

    def __init__(self, graph: Graph, layers: int) -> None:
        self.graph, self.layers = graph, layers
        self.presents = [name.format(i) for i in range(layers)
                         for name in (PRESENT_KEY, PRESENT_VALUE)]
        self.pasts = [name.format(i) for i in range(layers) for name in (PAST_KEY, PAST_VALUE)]

    @classmethod
    def load(cls, prepared: PreparedBackbone, providers: ProviderChoice,
             threads: int | None) -> CachedBackbone:
        """The rewritten graph of ``prepared`` (in memory; its weights where they lie)."""
        if prepared.variant not in CACHE_VARIANTS:
            raise ValueError(f"the prefix cache runs with the prepared "
                             f"{' or '.join(CACHE_VARIANTS)} backbone, not "
                             f"{prepared.variant}; use --precision int8 or fp32, or "
                             "--prefix-cache 0")
        import onnx

        from wyoming_omnivoice.engine.graphs.prefix_cache_graph import (
            PrefixCacheUnsupported,
            prefix_cache_graph,
        )

        try:
            model = onnx.load(str(prepared.path), load_external_data=False)
            layers = prefix_cache_graph(model)
        except PrefixCacheUnsupported as err:
            raise ModelError(f"{prepared.path}: the prefix cache cannot rewrite this "
                             f"backbone ({err}); run with --prefix-cache 0") from err
        graph = Graph(prepared.path, providers, threads=threads,
                      model_bytes=model.SerializeToString(),
                      external_data_dir=prepared.weights_dir,
                      label=f"{prepared.variant} prefix-cache backbone")
        _LOGGER.info("Prefix cache: the %s backbone's %d attention layers read cached "
                     "prefix keys and values (a second session of its weights)",
                     prepared.variant, layers)
        return cls(graph, layers)

    def full(self, embeds: np.ndarray, mask: np.ndarray
             ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Every position computed: hidden states and each layer's keys and values."""
        rows = embeds.shape[0]
        empty = np.zeros((rows, 1, 0, 1), dtype=np.float32)
        # The published embeddings graph gives float16: the backbone takes float32.
        feeds: dict[str, Any] = {"inputs_embeds": embeds.astype(np.float32, copy=False),
                                 "attention_mask": mask,
                                 POSITION_IDS: np.arange(embeds.shape[1], dtype=np.int64)}
        feeds.update((name, empty) for name in self.pasts)
        hidden, *presents = self.graph.session.run(
            ["hidden_states", *self.presents], feeds, self.graph.run_options)
        return hidden, presents

    def tail(self, embeds: np.ndarray, mask: np.ndarray, start: int,
             cache: list[np.ndarray]) -> np.ndarray:
        """Positions ``start..L-1`` computed against the cached keys and values of
        ``0..start-1``: ``embeds [B, L - start, H]``, ``mask [B, 1, L - start, L]``."""
        stop = start + embeds.shape[1]
        feeds: dict[str, Any] = {"inputs_embeds": embeds.astype(np.float32, copy=False),
                                 "attention_mask": mask,
                                 POSITION_IDS: np.arange(start, stop, dtype=np.int64)}
        feeds.update(zip(self.pasts, cache, strict=True))
        (hidden,) = self.graph.session.run(["hidden_states"], feeds, self.graph.run_options)
        return np.asarray(hidden)


class PrefixCacheStep:
    """One decode's steps with the prefix cache: refresh on every ``every``-th step.

    ``plain`` is the decode's :class:`.decoder._PlainStep` and ``embed`` its embeddings
    (computed again only at the target positions); ``backbone`` the exact session, used for
    a grid with no constant prefix (the unconditional rows of the ``rows`` and ``split``
    layouts)."""

    def __init__(self, plain: Any, cached: CachedBackbone, every: int,
                 embed: Callable[[int, Grid], np.ndarray]) -> None:
        self.plain, self.cached, self.every = plain, cached, every
        #: The plain step's embeddings of a grid (computed again at the targets only).
        self.embed = embed
        self.batch: Batch = plain.batch
        self.step = 0
        # The first column of a grid whose tokens change (its target cells): before it,
        # every row's inputs are the same at every step.
        self.prefix = [int(cols.min()) if len(cols) else 0 for _, cols in plain.targets]
        self.cache: list[list[np.ndarray] | None] = [None] * len(self.batch.grids)
        self.hidden: list[np.ndarray | None] = [None] * len(self.batch.grids)

    def run(self, stats: Any) -> list[np.ndarray]:
        """One step (``stats``: the decode's ``DecodeStats``)."""
        refresh = self.step % self.every == 0
        self.step += 1
        key = "prefix_refreshes" if refresh else "prefix_cached_steps"
        stats.extra[key] = stats.extra.get(key, 0.0) + 1
        plain = self.plain

        def backbone(index: int, grid: Grid, embeds: np.ndarray) -> np.ndarray:
            return self._forward(index, grid, embeds, refresh)

        result: list[np.ndarray] = plain.decoder.forward(
            self.batch, plain.scorer, plain.guidance, plain.want, stats,
            embed=self.embed, backbone=backbone)
        return result

    def _forward(self, index: int, grid: Grid, embeds: np.ndarray, refresh: bool
                 ) -> np.ndarray:
        start = self.prefix[index]
        if start == 0:
            exact: np.ndarray = self.plain.decoder.run_backbone(grid, embeds)
            return exact
        cache = self.cache[index]
        hidden = self.hidden[index]
        if refresh or cache is None or hidden is None:
            hidden, presents = self.cached.full(embeds, grid.mask)
            self.cache[index] = [np.ascontiguousarray(p[:, :, :start]) for p in presents]
            self.hidden[index] = hidden
            return hidden
        hidden[:, start:] = self.cached.tail(
            np.ascontiguousarray(embeds[:, start:]),
            np.ascontiguousarray(grid.mask[:, :, start:, :]), start, cache)
        return hidden
