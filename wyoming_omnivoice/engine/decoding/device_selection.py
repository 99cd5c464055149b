"""The decode's step loop on the device: per step the backbone and one step session, both
bound with IO binding, nothing uploaded or downloaded, each a CUDA graph per shape.

The step session (:mod:`.graphs.step_graph`) goes from the backbone's hidden states to
the next step's backbone input: scoring, each item's count from its schedule at its own
step, the Gumbel noise of that step, a full sort, the token update, the step counters, the
embeddings of the new target tokens merged into the grid's embeddings (``base``: the whole
grid embedded once per set of items). How a decode uses it (greedy classes,
``class_temperature == 0``; class sampling stays on the host loop)::

    step = DeviceStep(step_session(graphs, guided=..., noisy=...))
    step.prepare(bound, batch, tokens, schedule, steps, guidance=..., penalty=...,
                 position_temperature=..., noise=noise)  # noise [B, S, 8, T] or None
    for _ in range(num_step):
        step.step(stats)
    tokens = step.tokens()                      # [B, 8, T_max], the only download

Shapes are fixed per ``(rows, length)`` bucket of the backbone: the item slots are the
grid's rows (half of them in the ``rows`` layout) and the frames a length bucket
(:data:`.forward.layouts.BUCKETS`), padded items unmasking nothing. Every buffer of a
shape (:class:`_Slot`) is kept and reused by the next decode of that shape, so its CUDA
graph (one per turn: the tokens and step counters live in two buffers used in turn) is
captured once and replayed. A decode that takes a shape's slot from another one still
running (a request and a background anchor of one shape) first makes the other bring its
tokens back (``on_evict``); the other prepares again at its next step.

Any error of the step session (building it, binding it, running it) is a
:class:`DeviceLoopError`: the decode moves to the host loop for good
(:func:`leave_device_loop`) and its step runs again there. :func:`decode_on_device` is the
whole loop for a batch, the reference the tests hold against the host decode.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.decoding.decode_types import DecodeStats
from wyoming_omnivoice.engine.forward.layouts import Batch, bucket_for
from wyoming_omnivoice.engine.graphs import selection_graph as sg
from wyoming_omnivoice.engine.graphs import step_graph as stg
from wyoming_omnivoice.engine.graphs.scoring import COND_INDEX, GUIDANCE, HIDDEN, UNCOND_INDEX
from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.runtime.onnx_sessions import CudaGraphUnavailable, Graph

_LOGGER = logging.getLogger(__name__)

#: Slots kept for shapes whose backbone runs without a CUDA graph (as the step runner).
_MAX_LOOSE = 4
_ELEM = {np.float32: 1, np.float16: 10}


class DeviceLoopError(RuntimeError):
    """The step session failed: the step loop leaves the device (see the module doc)."""


def leave_device_loop(decoder: Any, reason: str) -> None:
    """The engine of ``decoder`` runs the step loop on the host from now on (one warning)."""
    if decoder.selection_graph is not None:
        decoder.selection_graph = None
        _LOGGER.warning("Step loop on the device turned off: %s; this engine runs the step "
                        "loop on the host from now on (same codes, slower)", reason)


@dataclass(eq=False)
class StepSession:
    """The step session of one ``(guided, noisy)`` kind and its slots per shape."""

    graph: Graph
    capture: bool
    slots: OrderedDict[tuple[int, ...], _Slot] = field(default_factory=OrderedDict)
    next_graph_id: int = 1_000_000  # apart from the backbone's ids (another session)


def step_model(graphs: GraphSet, *, guided: bool, noisy: bool) -> bytes:
    """The step graph of ``graphs`` (:func:`.graphs.step_graph.compose_step_model`)."""
    from wyoming_omnivoice.engine.forward.target_embeddings import audio_rows_model
    from wyoming_omnivoice.engine.graphs.scoring_cache import build_scoring_bytes

    return stg.compose_step_model(
        build_scoring_bytes(graphs.heads_path, graphs.hidden_size, sampling=False,
                            guided=guided),
        audio_rows_model(graphs.embeddings.path), noisy=noisy,
        hidden_size=graphs.hidden_size,
        hidden_type=_ELEM[graphs.backbone.outputs["hidden_states"].dtype],
        base_type=_ELEM[graphs.embeddings.outputs["inputs_embeds"].dtype],
        out_type=_ELEM[graphs.backbone.inputs["inputs_embeds"].dtype])


def step_session(graphs: GraphSet, *, guided: bool, noisy: bool) -> StepSession:
    """The step session on the engine's providers (built with onnx on first use, then kept
    in ``graphs.selections``); DeviceLoopError when it cannot be built."""
    found: StepSession | None = graphs.selections.get((guided, noisy))
    if found is not None:
        return found
    started = time.perf_counter()
    label = f"step ({'guided' if guided else 'unguided'}, " \
            f"{'noisy' if noisy else 'deterministic'})"
    try:
        model = step_model(graphs, guided=guided, noisy=noisy)
        cuda = graphs.providers.device == "cuda" and graphs.backbone.cuda_graph
        try:
            graph = Graph(graphs.heads_path, graphs.providers, threads=graphs.threads,
                          label=label, model_bytes=model, cuda_graph=cuda)
        except CudaGraphUnavailable as err:
            _LOGGER.warning("%s; the step session runs without CUDA graphs", err)
            cuda = False
            graph = Graph(graphs.heads_path, graphs.providers, threads=graphs.threads,
                          label=label, model_bytes=model)
    except Exception as err:  # onnx and onnxruntime errors have no common type
        raise DeviceLoopError(f"the {label} session cannot be built: {err}") from err
    graphs.load_seconds[label] = time.perf_counter() - started
    found = graphs.selections[(guided, noisy)] = StepSession(graph, capture=cuda)
    return found


@dataclass(eq=False)
class _Slot:
    """The step session's buffers of one shape (addresses fixed: CUDA graphs)."""

    values: dict[str, Any]
    tokens: tuple[Any, Any]
    steps: tuple[Any, Any]
    graph_ids: tuple[int, int]
    owner: DeviceStep | None = None


def _shape_key(batch: Batch, num_step: int) -> tuple[int, int, int, int, int]:
    grid = batch.grids[0]
    items = grid.rows if batch.layout == "packed" else grid.rows // 2
    return grid.rows, grid.length, items, bucket_for(batch.t_max), num_step


def _pad(array: np.ndarray, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    out = np.zeros(shape, dtype=dtype)
    out[tuple(slice(0, n) for n in array.shape)] = array
    return out


class DeviceStep:
    """One decode's device-resident step loop (see the module doc)."""

    def __init__(self, session: StepSession,
                 on_evict: Callable[[], None] | None = None) -> None:
        self.session = session
        self.graph = session.graph
        self.noisy = sg.NOISE in self.graph.inputs
        self.on_evict = on_evict
        self._slot: _Slot | None = None
        self._bound: Any = None
        self._batch: Batch | None = None
        self._bindings: list[Any] = []
        self._options: list[Any] = []
        self._turn = 0
        self._size = 0

    # -- binding ---------------------------------------------------------------------------
    def prepare(self, bound: Any, batch: Batch, tokens: np.ndarray, schedule: np.ndarray,
                steps: np.ndarray, *, guidance: float, penalty: np.ndarray,
                position_temperature: float, noise: np.ndarray | None) -> None:
        """Bind one set of items: ``bound`` (an :class:`.iobinding.BoundStep` of
        ``batch``), their ``tokens [B, 8, T_max]`` (MASK on targets not yet decoded, 0 past
        an item's length), ``schedule [B, S]`` (cells unmasked per step), ``steps [B]``
        (each item's next step), ``noise [B, S, 8, T_max]`` when ``position_temperature > 0``
        (else None). DeviceLoopError when the step session cannot take them."""
        if self.noisy != (position_temperature > 0 and noise is not None):
            raise ValueError("this step session is for "
                             f"{'noisy' if self.noisy else 'deterministic'} decodes")
        try:
            self._prepare(bound, batch, tokens, schedule, steps, guidance, penalty,
                          position_temperature, noise)
        except ValueError:
            raise
        except Exception as err:
            raise DeviceLoopError(f"binding the {self.graph.label} session failed: {err}") \
                from err

    def _prepare(self, bound: Any, batch: Batch, tokens: np.ndarray, schedule: np.ndarray,
                 steps: np.ndarray, guidance: float, penalty: np.ndarray,
                 temperature: float, noise: np.ndarray | None) -> None:
        rows, length, items, frames, num_step = key = _shape_key(batch, schedule.shape[1])
        slot = self._take_slot(key, bound)
        values = slot.values
        size = tokens.shape[0]
        uploads = {
            COND_INDEX: _pad(batch.cond_index, (items, frames), np.int64),
            UNCOND_INDEX: _pad(batch.uncond_index, (items, frames), np.int64),
            GUIDANCE: np.asarray(guidance, np.float32),
            sg.PENALTY: np.asarray(penalty, np.float32),
            sg.SCHEDULE: _pad(schedule, (items, num_step + 1), np.int64),
        }
        index = np.zeros((rows, length), np.int64)
        target = np.zeros((rows, length, 1), bool)
        grid_rows, grid_cols = batch.target_cells(batch.grids[0])
        item, frame = batch.target_slots()
        index[grid_rows, grid_cols] = np.tile(item * frames + frame, len(grid_rows) //
                                              max(len(item), 1))
        target[grid_rows, grid_cols, 0] = True
        uploads.update({stg.EMBED_INDEX: index, stg.IS_TARGET: target})
        if self.noisy:
            uploads[sg.NOISE] = _pad(noise, (items, num_step, 8, frames),  # type: ignore[arg-type]
                                     np.float32)
            uploads[sg.TEMPERATURE] = np.asarray(temperature, np.float32)
        for name, array in uploads.items():
            values[name].update_inplace(np.ascontiguousarray(array))
        slot.tokens[0].update_inplace(_pad(tokens, (items, 8, frames), np.int64))
        slot.steps[0].update_inplace(_pad(steps, (items,), np.int64))
        self._bound, self._batch, self._turn, self._size = bound, batch, 0, size
        batch.put_all(tokens)
        bound.embed_grid(values[stg.BASE])
        self._bind(slot, bound)

    def _take_slot(self, key: tuple[int, ...], bound: Any) -> _Slot:
        session = self.session
        slot = session.slots.get(key)
        if slot is None:
            slot = self._new_slot(key, bound)
            session.slots[key] = slot
            loose = [k for k, s in session.slots.items() if s.graph_ids[0] < 0]
            while len(loose) > _MAX_LOOSE:
                session.slots.pop(loose.pop(0))
        session.slots.move_to_end(key)
        previous, slot.owner = slot.owner, self
        if previous is not None and previous is not self:
            previous.evict()
        self._slot = slot
        return slot

    def _new_slot(self, key: tuple[int, ...], bound: Any) -> _Slot:
        rows, length, items, frames, num_step = key
        runner = bound.runner
        hidden = bound.backbone_output.shape()[-1]

        def empty(shape: tuple[int, ...], dtype: Any) -> Any:
            return runner.empty(shape, dtype)

        values = {COND_INDEX: empty((items, frames), np.int64),
                  UNCOND_INDEX: empty((items, frames), np.int64),
                  GUIDANCE: empty((), np.float32), sg.PENALTY: empty((8, 1), np.float32),
                  sg.SCHEDULE: empty((items, num_step + 1), np.int64),
                  stg.EMBED_INDEX: empty((rows, length), np.int64),
                  stg.IS_TARGET: empty((rows, length, 1), np.bool_),
                  stg.TARGET_MASK: runner.upload(np.ones((1, items * frames), bool)),
                  stg.BASE: empty((rows, length, hidden), runner.embed_type)}
        if self.noisy:
            values[sg.NOISE] = empty((items, num_step, 8, frames), np.float32)
            values[sg.TEMPERATURE] = empty((), np.float32)
        ids = (-1, -1)
        if self.session.capture and bound.captured:
            first = self.session.next_graph_id
            self.session.next_graph_id += 2
            ids = (first, first + 1)
        return _Slot(values=values, graph_ids=ids,
                     tokens=(empty((items, 8, frames), np.int64),
                             empty((items, 8, frames), np.int64)),
                     steps=(empty((items,), np.int64), empty((items,), np.int64)))

    def _bind(self, slot: _Slot, bound: Any) -> None:
        session = self.graph.session
        self._bindings, self._options = [], []
        for turn in (0, 1):
            binding = session.io_binding()
            binding.bind_ortvalue_input(HIDDEN, bound.backbone_output)
            for name, value in slot.values.items():
                binding.bind_ortvalue_input(name, value)
            binding.bind_ortvalue_input(sg.TOKENS, slot.tokens[turn])
            binding.bind_ortvalue_input(sg.STEPS, slot.steps[turn])
            binding.bind_ortvalue_output(sg.NEW_TOKENS, slot.tokens[1 - turn])
            binding.bind_ortvalue_output(sg.NEW_STEPS, slot.steps[1 - turn])
            binding.bind_ortvalue_output(stg.NEXT_EMBEDS, bound.backbone_input)
            self._bindings.append(binding)
            self._options.append(self._run_options(slot.graph_ids[turn]))

    def _run_options(self, graph_id: int) -> Any:
        if not self.session.capture:
            return self.graph.run_options
        from wyoming_omnivoice.engine.runtime.onnx_sessions import import_onnxruntime

        options = import_onnxruntime().RunOptions()
        options.add_run_config_entry("gpu_graph_id", str(graph_id))
        return options

    def evict(self) -> None:
        """Another decode takes this one's slot: bring the tokens back (``on_evict``)."""
        if self.on_evict is not None:
            self.on_evict()
        self._slot = None

    # -- steps -----------------------------------------------------------------------------
    def step(self, stats: Any = None) -> None:
        """One step: the backbone, then the step session (nothing goes up or down)."""
        stats = stats if stats is not None else DecodeStats()
        slot, bound = self._slot, self._bound
        if slot is None or slot.owner is not self:
            raise RuntimeError("this decode's step buffers were taken by another")
        t0 = time.perf_counter()
        if not bound.owns_buffers:  # another decode of this backbone shape ran since
            self._refill()
        bound.run_backbone()
        t1 = time.perf_counter()
        self._run(slot)
        self._turn = 1 - self._turn
        stats.backbone_s += t1 - t0
        stats.scoring_s += time.perf_counter() - t1

    def _run(self, slot: _Slot) -> None:
        session = self.graph.session
        try:
            session.run_with_iobinding(self._bindings[self._turn], self._options[self._turn])
        except Exception as err:
            if slot.graph_ids[self._turn] < 0:
                raise DeviceLoopError(f"the {self.graph.label} session failed: {err}") \
                    from err
            from wyoming_omnivoice.engine.runtime.cuda_graphs import capture_failure_message

            _LOGGER.warning("%s", capture_failure_message(
                self.graph.label, err, "capture failed on its first run"))
            slot.graph_ids = (-1, -1)
            self._options = [self._run_options(-1)] * 2
            try:
                session.run_with_iobinding(self._bindings[self._turn],
                                           self._options[self._turn])
            except Exception as again:
                raise DeviceLoopError(f"the {self.graph.label} session failed: {again}") \
                    from again

    def _refill(self) -> None:
        """The backbone's input again from this decode's tokens (its shape's buffers were
        used by another decode in between)."""
        tokens = self.tokens()
        assert self._batch is not None
        self._batch.put_all(tokens)
        self._bound.embed_grid(self._slot.values[stg.BASE])  # type: ignore[union-attr]

    def tokens(self) -> np.ndarray:
        """The current tokens ``[B, 8, T_max]``, copied to the host."""
        if self._slot is None or self._batch is None:
            raise RuntimeError("this decode's step buffers were taken by another")
        # A CPU OrtValue's numpy() is a view of its buffer: copied before it changes.
        padded = self._slot.tokens[self._turn].numpy()
        return np.array(padded[:self._size, :, :self._batch.t_max], copy=True)

    def release(self) -> None:
        """This decode is done with its slot."""
        if self._slot is not None and self._slot.owner is self:
            self._slot.owner = None
        self._slot = None
