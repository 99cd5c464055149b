"""Device-resident decode steps with onnxruntime IO binding.

One step runs three sessions: embeddings -> backbone -> scoring. The plain path hands numpy
arrays between them, so on CUDA the ``[R, L, H]`` embeddings and hidden states travel to the
host and back twice per step. Here they live in :class:`onnxruntime.OrtValue` buffers on the session
device: only the int64 token grid goes up each step and only the ``[B, 8, T]`` predictions
and confidences (plus the top-k candidates when sampling classes) come down.

Buffers are kept per ``(rows, length)`` shape, so the addresses stay fixed from one decode
to the next of the same length bucket. That is what CUDA graphs need: when the backbone
session was created with ``enable_cuda_graph``, each bucket shape gets its own
``gpu_graph_id`` (captured on its first run, replayed afterwards). On CPU the same code runs
with CPU OrtValues and gives the same codes as the plain path.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, import_onnxruntime

_LOGGER = logging.getLogger(__name__)

#: Buffers kept for shapes outside the bucket set (no CUDA graph for those).
_MAX_LOOSE_SHAPES = 4
#: Largest ``rows x length`` captured as a CUDA graph. Every captured shape keeps its
#: buffers (embeddings, hidden states, masks) and its graph for the life of the session;
#: past this size a forward is long enough that launching its kernels one by one costs
#: little, so such shapes run without a graph and share the few loose buffers.
CAPTURE_POSITIONS = 2048
#: onnx's TensorProto element types (FLOAT, FLOAT16): onnx itself is imported only when a
#: cast graph is built (CUDA), not at a CPU start (its import costs about 0.6 s).
_NP_TO_ONNX = {np.float32: 1, np.float16: 10}


def _cast_model(source: Any, target: Any) -> bytes:
    from onnx import helper

    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=_NP_TO_ONNX[target])], "cast",
        [helper.make_tensor_value_info("x", _NP_TO_ONNX[source], None)],
        [helper.make_tensor_value_info("y", _NP_TO_ONNX[target], None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


class _Caster:
    """A one-node Cast session on the device (fp16 <-> fp32 between graphs)."""

    def __init__(self, like: Graph, source: Any, target: Any) -> None:
        ort = import_onnxruntime()
        self.target = target
        self.session = ort.InferenceSession(
            _cast_model(source, target), providers=like.session.get_providers(),
        )


@dataclass
class _Buffers:
    """Device buffers of one ``(rows, length)`` shape; addresses fixed for CUDA graphs."""

    ids: Any
    audio_mask: Any
    attention_mask: Any
    embeds: Any
    embeds_cast: Any | None
    hidden: Any
    hidden_cast: Any | None
    graph_id: int
    #: The :class:`BoundStep` whose masks the buffers hold: decodes of the same shape may
    #: interleave step by step (a request's and a background anchor's), each uploads its
    #: own masks again when it takes the buffers back.
    owner: Any = None


class StepRunner:
    """Binds the three graphs of a step to device buffers and runs them."""

    def __init__(self, embeddings: Graph, backbone: Graph, hidden_size: int,
                 *, cuda_graph: bool = False, buckets: Sequence[int] = (),
                 capture_positions: int = CAPTURE_POSITIONS,
                 target_embeddings: Graph | None = None) -> None:
        """``target_embeddings`` (:mod:`.target_embeddings`): the device session of the
        target positions, ``embeddings`` then being a host session run once per decode."""
        self.ort = import_onnxruntime()
        self.embeddings = embeddings
        self.target_embeddings = target_embeddings
        self.backbone = backbone
        self.hidden_size = hidden_size
        self.device = "cuda" if backbone.device == "cuda" else "cpu"
        self.cuda_graph = cuda_graph and self.device == "cuda"
        self.buckets = frozenset(buckets)
        self.capture_positions = capture_positions
        #: The numpy type of the embeddings' output (the device step loop's base too).
        self.embed_type = self._embed_type = embeddings.outputs["inputs_embeds"].dtype
        self._backbone_in = backbone.inputs["inputs_embeds"].dtype
        self._hidden_type = backbone.outputs["hidden_states"].dtype
        self._embed_caster = (
            _Caster(backbone, self._embed_type, self._backbone_in)
            if self._embed_type is not self._backbone_in else None
        )
        self._hidden_caster = (
            _Caster(backbone, self._hidden_type, np.float32)
            if self._hidden_type is not np.float32 else None
        )
        self._shapes: OrderedDict[tuple[int, int], _Buffers] = OrderedDict()
        self._next_graph_id = 1

    # -- buffers ---------------------------------------------------------------------------
    def _value(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return self.ort.OrtValue.ortvalue_from_shape_and_type(
            list(shape), dtype, self.device, 0)

    def _upload(self, array: np.ndarray) -> Any:
        return self.ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array),
                                                      self.device, 0)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A new OrtValue of ``shape`` on the session device (contents undefined)."""
        return self._value(shape, dtype)

    def upload(self, array: np.ndarray) -> Any:
        """``array`` copied into a new OrtValue on the session device."""
        return self._upload(array)

    def cast_embeds_session(self) -> Any:
        """The session casting the embeddings to the backbone's input type."""
        if self._embed_caster is None:
            raise ValueError("the embeddings are already in the backbone's input type")
        return self._embed_caster.session

    def captures(self, rows: int, length: int) -> bool:
        """Whether a ``rows x length`` shape gets a CUDA graph (with graphs on): a bucket
        length, and at most :attr:`capture_positions` positions in all."""
        return length in self.buckets and rows * length <= self.capture_positions

    @property
    def captured(self) -> list[tuple[int, int]]:
        """The shapes holding a CUDA graph (and their buffers) now."""
        return [key for key, found in self._shapes.items() if found.graph_id >= 0]

    def buffers(self, rows: int, length: int) -> _Buffers:
        key = (rows, length)
        found = self._shapes.get(key)
        if found is not None:
            self._shapes.move_to_end(key)
            return found
        hidden_shape = (rows, length, self.hidden_size)
        graph_id = -1
        if self.cuda_graph and self.captures(rows, length):
            graph_id = self._next_graph_id
            self._next_graph_id += 1
        found = _Buffers(
            ids=self._value((rows, 8, length), np.int64),
            audio_mask=self._value((rows, length), np.bool_),
            attention_mask=self._value((rows, 1, length, length), np.bool_),
            embeds=self._value(hidden_shape, self._embed_type),
            embeds_cast=(self._value(hidden_shape, self._backbone_in)
                         if self._embed_caster else None),
            hidden=self._value(hidden_shape, self._hidden_type),
            hidden_cast=self._value(hidden_shape, np.float32) if self._hidden_caster else None,
            graph_id=graph_id,
        )
        self._shapes[key] = found
        loose = [k for k, b in self._shapes.items() if b.graph_id < 0]
        while len(loose) > _MAX_LOOSE_SHAPES:
            del self._shapes[loose.pop(0)]
        return found

    # -- steps -----------------------------------------------------------------------------
    def prepare(self, batch: Any, scorer: Graph, guidance: np.ndarray,
                want: list[str]) -> BoundStep:
        return BoundStep(self, batch, scorer, guidance, want)


class BoundStep:
    """The bindings of one decode: call :meth:`run` once per step."""

    backbone_options: Any

    def run_backbone(self) -> None:
        """The backbone on the bound buffers; a CUDA graph capture that fails at run time
        is logged with its reason and this shape runs without a graph from then on."""
        runner = self.runner
        try:
            runner.backbone.session.run_with_iobinding(self.backbone_binding,
                                                       self.backbone_options)
        except Exception as err:
            if self.buf.graph_id < 0:
                raise
            from wyoming_omnivoice.engine.runtime.cuda_graphs import capture_failure_message

            _LOGGER.warning("%s", capture_failure_message(
                runner.backbone.label, err,
                f"capture failed on its first run at shape {self.grid.rows}x"
                f"{self.grid.length}"))
            self.buf.graph_id = -1
            self.backbone_options = runner.ort.RunOptions()
            self.backbone_options.add_run_config_entry("gpu_graph_id", "-1")
            runner.backbone.session.run_with_iobinding(self.backbone_binding,
                                                       self.backbone_options)

    def __init__(self, runner: StepRunner, batch: Any, scorer: Graph, guidance: np.ndarray,
                 want: list[str]) -> None:
        ort = runner.ort
        self.runner = runner
        # One backbone input per step: the decoder never binds a split (two-grid) batch.
        (self.grid,) = batch.grids
        buf = runner.buffers(self.grid.rows, self.grid.length)
        self.buf = buf
        self.take_buffers()

        #: With the text table on the host: the target cells and their ids ``[1, 8, P]``
        #: on the device (the only ids that change), else None.
        self.target_ids: Any = None
        if runner.target_embeddings is not None:
            self._bind_targets(batch)
        else:
            self.embed_session = runner.embeddings.session
            self.embed_binding = self.embed_session.io_binding()
            self.embed_binding.bind_ortvalue_input("input_ids", buf.ids)
            self.embed_binding.bind_ortvalue_input("audio_mask", buf.audio_mask)
            self.embed_binding.bind_ortvalue_output("inputs_embeds", buf.embeds)

        self.cast_in = None
        backbone_embeds = buf.embeds
        if runner._embed_caster is not None:
            self.cast_in = runner._embed_caster.session.io_binding()
            self.cast_in.bind_ortvalue_input("x", buf.embeds)
            self.cast_in.bind_ortvalue_output("y", buf.embeds_cast)
            backbone_embeds = buf.embeds_cast

        self.backbone_binding = runner.backbone.session.io_binding()
        self.backbone_binding.bind_ortvalue_input("inputs_embeds", backbone_embeds)
        self.backbone_binding.bind_ortvalue_input("attention_mask", buf.attention_mask)
        self.backbone_binding.bind_ortvalue_output("hidden_states", buf.hidden)
        self.backbone_options = ort.RunOptions()
        self.backbone_options.add_run_config_entry("gpu_graph_id", str(buf.graph_id))

        self.cast_out = None
        hidden = buf.hidden
        if runner._hidden_caster is not None:
            self.cast_out = runner._hidden_caster.session.io_binding()
            self.cast_out.bind_ortvalue_input("x", buf.hidden)
            self.cast_out.bind_ortvalue_output("y", buf.hidden_cast)
            hidden = buf.hidden_cast

        from wyoming_omnivoice.engine.graphs.scoring import (
            COND_INDEX,
            GUIDANCE,
            HIDDEN,
            UNCOND_INDEX,
        )

        #: The hidden states the scorer reads (float32, on the session device).
        self.hidden_value = hidden
        self.scorer = scorer
        self.want = want
        self.score_binding = scorer.session.io_binding()
        self.score_binding.bind_ortvalue_input(HIDDEN, hidden)
        # Small per-decode inputs: uploaded once, kept alive by this object.
        self._keep = [
            runner._upload(batch.cond_index), runner._upload(batch.uncond_index),
            runner._upload(np.asarray(guidance, dtype=np.float32)),
        ]
        for name, value in zip((COND_INDEX, UNCOND_INDEX, GUIDANCE), self._keep,
                               strict=True):
            self.score_binding.bind_ortvalue_input(name, value)
        for name in want:
            self.score_binding.bind_output(name, "cpu")

    def take_buffers(self) -> None:
        """Upload this decode's masks into the shape's buffers (shared by every decode of
        the shape: :attr:`owns_buffers` says whether another has used them since)."""
        self.buf.audio_mask.update_inplace(np.ascontiguousarray(self.grid.audio_mask))
        self.buf.attention_mask.update_inplace(np.ascontiguousarray(self.grid.mask))
        self.buf.owner = self

    def _bind_targets(self, batch: Any) -> None:
        """The whole grid embedded once on the host (the decode's base, uploaded), and the
        device session of the target positions bound to write the backbone's input."""
        from wyoming_omnivoice.engine.forward import target_embeddings as te
        runner, grid = self.runner, self.grid
        self.targets = batch.target_cells(grid)
        (base,) = runner.embeddings.session.run(
            ["inputs_embeds"], {"input_ids": grid.ids, "audio_mask": grid.audio_mask},
            runner.embeddings.run_options)
        rows, cols = self.targets
        count = len(rows)
        self.target_ids = runner.upload(self._target_ids())
        self._target_keep = [runner.upload(base), runner.upload(np.ones((1, count), bool)),
                             runner.upload(te.target_positions(rows, cols))]
        self.embed_session = runner.target_embeddings.session  # type: ignore[union-attr]
        self.embed_binding = self.embed_session.io_binding()
        for name, value in zip((te.BASE, te.TARGET_MASK, te.TARGET_INDEX),
                               self._target_keep, strict=True):
            self.embed_binding.bind_ortvalue_input(name, value)
        self.embed_binding.bind_ortvalue_input(te.TARGET_IDS, self.target_ids)
        self.embed_binding.bind_ortvalue_output(te.OUTPUT, self.buf.embeds)

    def _target_ids(self) -> np.ndarray:
        rows, cols = self.targets
        return np.ascontiguousarray(self.grid.ids[rows, :, cols].T[None])

    def bind_ids(self, ids: Any) -> None:
        """Let the embeddings read the token grid from ``ids`` (an OrtValue of the grid's
        shape on the device; :mod:`.device_selection` alternates two). With the text
        table on the host the embeddings read :attr:`target_ids` instead: nothing to do."""
        if self.target_ids is None:
            self.embed_binding.bind_ortvalue_input("input_ids", ids)

    def run(self, stats: Any) -> list[np.ndarray]:
        """One model evaluation of the current token grid; ``[B, 8, T]`` arrays out."""
        if self.target_ids is not None:
            self.target_ids.update_inplace(self._target_ids())
        else:
            self.buf.ids.update_inplace(self.grid.ids)
        self.run_model(stats)
        t2 = time.perf_counter()
        self.scorer.session.run_with_iobinding(self.score_binding)
        results = self.score_binding.copy_outputs_to_cpu()
        stats.scoring_s += time.perf_counter() - t2
        return [r.astype(np.float32) if r.dtype == np.float16 else r for r in results]

    def run_model(self, stats: Any) -> None:
        """Embeddings and backbone on the bound grid: :attr:`hidden_value` filled, nothing
        uploaded or copied to the host."""
        runner = self.runner
        t0 = time.perf_counter()
        if self.buf.owner is not self:
            self.take_buffers()
        self.embed_session.run_with_iobinding(self.embed_binding)
        if self.cast_in is not None:
            runner._embed_caster.session.run_with_iobinding(self.cast_in)  # type: ignore[union-attr]
        t1 = time.perf_counter()
        self.run_backbone()
        if self.cast_out is not None:
            runner._hidden_caster.session.run_with_iobinding(self.cast_out)  # type: ignore[union-attr]
        stats.embed_s += t1 - t0
        stats.backbone_s += time.perf_counter() - t1

    # -- the step loop on the device (:mod:`.decoding.device_selection`) -------------------
    @property
    def owns_buffers(self) -> bool:
        """No other decode of this shape used the shared buffers since this one did."""
        return self.buf.owner is self

    @property
    def captured(self) -> bool:
        """This shape's backbone runs as a CUDA graph (its buffers keep their addresses)."""
        return self.buf.graph_id >= 0

    @property
    def backbone_input(self) -> Any:
        """The backbone's input buffer (in its input type)."""
        return self.buf.embeds_cast if self.buf.embeds_cast is not None else self.buf.embeds

    @property
    def backbone_output(self) -> Any:
        """The backbone's output buffer (in its output type, before any cast)."""
        return self.buf.hidden

    def embed_grid(self, base: Any) -> None:
        """The current grid (``grid.ids``, uploaded here) embedded whole into ``base`` (the
        embeddings' type) and into the backbone's input buffer: with the text table on the
        host, by the host session and uploaded."""
        runner = self.runner
        if not self.owns_buffers:
            self.take_buffers()
        grid = self.grid
        if self.target_ids is not None:
            (host,) = runner.embeddings.session.run(
                ["inputs_embeds"], {"input_ids": grid.ids, "audio_mask": grid.audio_mask},
                runner.embeddings.run_options)
            base.update_inplace(np.ascontiguousarray(host))
            if self.cast_in is None:
                self.buf.embeds.update_inplace(np.ascontiguousarray(host))
        else:
            self.buf.ids.update_inplace(grid.ids)
            for target in (base, *(() if self.cast_in is not None else (self.buf.embeds,))):
                binding = runner.embeddings.session.io_binding()
                binding.bind_ortvalue_input("input_ids", self.buf.ids)
                binding.bind_ortvalue_input("audio_mask", self.buf.audio_mask)
                binding.bind_ortvalue_output("inputs_embeds", target)
                runner.embeddings.session.run_with_iobinding(binding)
        if self.cast_in is not None:
            cast = runner.cast_embeds_session()
            binding = cast.io_binding()
            binding.bind_ortvalue_input("x", base)
            binding.bind_ortvalue_output("y", self.buf.embeds_cast)
            cast.run_with_iobinding(binding)
