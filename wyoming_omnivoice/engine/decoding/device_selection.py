"""The decode's step loop on the device: scoring, guidance, Gumbel noise, the choice of
cells and the token update in one session, bound with IO binding.

Per step the host uploads this step's counts (and each item's step index: a few bytes)
and nothing comes down until :meth:`DeviceSelection.tokens` at the item's end. The graph
is :mod:`.selection_graph` appended to the scoring graph (:mod:`.scoring`); it writes the
new tokens into the next step's embeddings grid on the device (two grid buffers and two
token buffers, used in turn).

How a decode loop uses it (greedy classes, ``class_temperature == 0``; class sampling
stays on the host path: its top-k candidates and noise are ``[B, 8, T, 103]`` per step)::

    selection = DeviceSelection(graph)          # graph: selection_session(graphs, ...)
    bound = runner.prepare(batch, scorer, guidance, want)   # iobinding.BoundStep
    selection.prepare(bound, batch, tokens, guidance=..., penalty=...,
                      position_temperature=..., noise=noise)  # noise [B, S, 8, T] or None
    for step in range(num_step):
        selection.step(counts[:, step], steps=np.full(B, step), stats=stats)
    tokens = selection.tokens()                 # [B, 8, T_max], the only download

``noise`` is each item's Gumbel noise for all its steps, drawn when the item starts from
its own generator in upstream's order (:func:`draw_position_noise`), uploaded once per
decode and indexed on the device by each item's own step (``steps``: the items of a
continuously batched decode may be at different steps). :func:`decode_on_device` is the
whole loop for a batch, the reference the tests hold against the host decode.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID
from wyoming_omnivoice.engine.decoding.decode_types import DecodeItem, DecodeOptions, DecodeStats
from wyoming_omnivoice.engine.decoding.schedule import unmask_counts
from wyoming_omnivoice.engine.forward.layouts import Batch
from wyoming_omnivoice.engine.graphs import selection_graph as sg
from wyoming_omnivoice.engine.graphs.scoring import (
    COND_INDEX,
    CONF,
    GUIDANCE,
    HIDDEN,
    PRED,
    UNCOND_INDEX,
)
from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

_LOGGER = logging.getLogger(__name__)



def selection_session(graphs: GraphSet, *, guided: bool, noisy: bool) -> Graph:
    """The scoring + selection session on the engine's providers (built with onnx on
    first use, then kept in ``graphs.selections``)."""
    from wyoming_omnivoice.engine.graphs.scoring_cache import build_scoring_bytes

    found = graphs.selections.get((guided, noisy))
    if found is not None:
        return found
    started = time.perf_counter()
    scoring = build_scoring_bytes(graphs.heads_path, graphs.hidden_size, sampling=False,
                                  guided=guided)
    model = sg.compose_scoring_selection(scoring, noisy=noisy)
    graph = Graph(graphs.heads_path, graphs.providers, threads=graphs.threads,
                  label=f"scoring+selection ({'noisy' if noisy else 'deterministic'})",
                  model_bytes=model)
    graphs.load_seconds[graph.label] = time.perf_counter() - started
    graphs.selections[(guided, noisy)] = graph
    return graph


def draw_position_noise(rngs: list[np.random.Generator], schedules: np.ndarray,
                        t_lens: list[int], t_max: int) -> np.ndarray:
    """Each item's Gumbel noise for all its steps, ``[B, S, 8, T_max]`` float32: drawn from
    its own generator on the steps where it unmasks, in step order, as the host loop draws
    it (zeros elsewhere and past the item's length)."""
    size, steps = schedules.shape
    noise = np.zeros((size, steps, 8, t_max), dtype=np.float32)
    eps = np.float32(1e-10)
    for i, rng in enumerate(rngs):
        for step in np.flatnonzero(schedules[i] > 0):
            u = rng.random((8, t_lens[i]), dtype=np.float32)
            noise[i, step, :, :t_lens[i]] = -np.log(-np.log(u + eps) + eps)
    return noise


class DeviceSelection:
    """One decode's device-resident step loop (see the module doc)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.noisy = sg.NOISE in graph.inputs
        self._bound: Any = None
        self._tokens: list[Any] = []
        self._ids: list[Any] = []
        self._bindings: list[Any] = []
        self._counts: Any = None
        self._steps: Any = None
        self._turn = 0

    def prepare(self, bound: Any, batch: Batch, tokens: np.ndarray, *, guidance: float,
                penalty: np.ndarray, position_temperature: float,
                noise: np.ndarray | None) -> None:
        """Bind one decode: ``bound`` (an :class:`.iobinding.BoundStep` of ``batch``),
        the starting ``tokens [B, 8, T_max]`` (MASK on targets, 0 past an item's length),
        ``noise [B, S, 8, T_max]`` when ``position_temperature > 0`` (else None)."""
        if self.noisy != (position_temperature > 0 and noise is not None):
            raise ValueError("this selection graph is for "
                             f"{'noisy' if self.noisy else 'deterministic'} decodes")
        runner = bound.runner
        self._bound = bound
        size = tokens.shape[0]
        grid = batch.grids[0]
        self._tokens = [runner.upload(tokens.astype(np.int64)),
                        runner.empty(tokens.shape, np.int64)]
        self._ids = [runner.upload(grid.ids), runner.empty(grid.ids.shape, np.int64)]
        self._counts = runner.upload(np.zeros(size, np.int64))
        src, dst = batch.flat_cells()
        fixed = {
            COND_INDEX: runner.upload(batch.cond_index),
            UNCOND_INDEX: runner.upload(batch.uncond_index),
            GUIDANCE: runner.upload(np.asarray(guidance, dtype=np.float32)),
            sg.PENALTY: runner.upload(np.asarray(penalty, dtype=np.float32)),
            sg.SRC_CELLS: runner.upload(src), sg.DST_CELLS: runner.upload(dst),
            sg.COUNTS: self._counts,
        }
        if self.noisy:
            self._steps = runner.upload(np.zeros(size, np.int64))
            fixed.update({sg.NOISE: runner.upload(np.asarray(noise, dtype=np.float32)),
                          sg.STEPS: self._steps,
                          sg.TEMPERATURE: runner.upload(
                              np.asarray(position_temperature, dtype=np.float32))})
        self._keep = fixed
        self._bindings = []
        for turn in (0, 1):
            binding = self.graph.session.io_binding()
            binding.bind_ortvalue_input(HIDDEN, bound.hidden_value)
            for name, value in fixed.items():
                binding.bind_ortvalue_input(name, value)
            binding.bind_ortvalue_input(sg.TOKENS, self._tokens[turn])
            binding.bind_ortvalue_input(sg.GRID_IDS, self._ids[turn])
            binding.bind_ortvalue_output(sg.NEW_TOKENS, self._tokens[1 - turn])
            binding.bind_ortvalue_output(sg.NEW_GRID_IDS, self._ids[1 - turn])
            if bound.target_ids is not None:  # the text table on the host
                binding.bind_ortvalue_output(sg.NEW_TARGET_IDS, bound.target_ids)
            self._bindings.append(binding)
        self._turn = 0
        bound.bind_ids(self._ids[0])

    def step(self, counts: np.ndarray, steps: np.ndarray | None = None,
             stats: Any = None) -> None:
        """One step: ``counts [B]`` cells to unmask per item (0: none), ``steps [B]`` each
        item's step index into its noise (noisy graphs). Only these go up."""
        self._counts.update_inplace(np.ascontiguousarray(counts, dtype=np.int64))
        if self.noisy:
            if steps is None:
                raise ValueError("a noisy selection needs each item's step index")
            self._steps.update_inplace(np.ascontiguousarray(steps, dtype=np.int64))
        self._bound.run_model(stats if stats is not None else DecodeStats())
        t0 = time.perf_counter()
        self.graph.session.run_with_iobinding(self._bindings[self._turn])
        self._turn = 1 - self._turn
        self._bound.bind_ids(self._ids[self._turn])
        if stats is not None:
            stats.scoring_s += time.perf_counter() - t0
            stats.steps += 1

    def tokens(self) -> np.ndarray:
        """The current tokens ``[B, 8, T_max]``, copied to the host."""
        # A CPU OrtValue's numpy() is a view of its buffer, which dies with this object.
        result: np.ndarray = np.array(self._tokens[self._turn].numpy(), copy=True)
        return result


def decode_on_device(decoder: Any, graph: Graph, items: list[DecodeItem],
                     options: DecodeOptions) -> list[np.ndarray]:
    """:meth:`.decoder.Decoder.decode` with the step loop on the device (IO binding; greedy
    classes): the same codes, per item ``[8, T_i]``. ``graph``: :func:`selection_session`
    for ``guided = options.guidance_scale != 0`` and ``noisy = position_temperature > 0``."""
    if decoder.runner is None:
        raise ValueError("the device step loop needs the IO-binding step runner")
    if options.class_temperature > 0:
        raise ValueError("class sampling runs on the host path (class_temperature > 0)")
    started = time.perf_counter()
    stats = DecodeStats()
    prompts = [item.prompt for item in items]
    layout = decoder.layout_for(prompts)
    padded, pad_rows = decoder.shape_for(prompts, None, layout)
    batch = Batch(prompts, layout, padded, pad_rows)
    stats.layout, stats.grids = layout, [(g.rows, g.length) for g in batch.grids]
    size, t_max, t_lens = len(items), batch.t_max, batch.t_lens
    valid = np.arange(t_max)[None, :] < np.array(t_lens)[:, None]
    tokens = np.where(np.broadcast_to(valid[:, None, :], (size, 8, t_max)), MASK_ID,
                      0).astype(np.int64)
    schedules = np.array([unmask_counts(8 * t, options.num_step, options.t_shift)
                          for t in t_lens], dtype=np.int64).reshape(size, options.num_step)
    penalty = (np.arange(8, dtype=np.float32)[:, None]
               * np.float32(options.layer_penalty_factor))
    guidance = np.array(options.guidance_scale, dtype=np.float32)
    noisy = options.position_temperature > 0
    noise = draw_position_noise([item.rng for item in items], schedules, t_lens, t_max) \
        if noisy else None
    bound = decoder.runner.prepare(batch, decoder.scorer, guidance, [PRED, CONF])
    selection = DeviceSelection(graph)
    t0 = time.perf_counter()
    selection.prepare(bound, batch, tokens, guidance=float(guidance), penalty=penalty,
                      position_temperature=options.position_temperature, noise=noise)
    # The whole decode's noise goes up here, once: its size and the time of the uploads.
    stats.extra["prepare_s"] = time.perf_counter() - t0
    stats.extra["noise_mib"] = 0.0 if noise is None else noise.nbytes / 2**20
    for step in range(options.num_step):
        selection.step(schedules[:, step], np.full(size, step, dtype=np.int64), stats)
    tokens = selection.tokens()
    stats.total_s = time.perf_counter() - started
    decoder.last_stats = stats
    out = [np.ascontiguousarray(tokens[i, :, :t]) for i, t in enumerate(t_lens)]
    if any(np.any(t == MASK_ID) for t in out):
        raise RuntimeError("decode finished with MASK cells left; schedule bug")
    return out
