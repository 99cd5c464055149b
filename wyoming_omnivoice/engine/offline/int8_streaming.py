"""The int8 backbone written one weight at a time: onnxruntime's dynamic quantization,
reproduced byte for byte, with a bounded memory peak.

Why our own step: onnxruntime's ``quantize_dynamic`` holds the whole fp32 model in memory,
and copies it (a deep copy and two reloads around ONNX shape inference): 5.4 GB at the real
size, given a file. Its API takes a model or a path, nothing that yields weights one by one,
so it cannot stream. This module makes the same file from the graph alone (a few MB): each
weight matrix is read through a memory map of the published ``.data`` file, quantized and
appended to the output's weights file before the next is read; the peak is one matrix.

What it reproduces (onnxruntime 1.2x, ``op_types_to_quantize=["MatMul"]``,
``per_channel=True``, ``reduce_range=True``, ``QInt8`` weights, ``MatMulConstBOnly``):

* every ``MatMul`` whose ``B`` is a float initializer becomes ``DynamicQuantizeLinear`` of
  ``A`` (once per activation) -> ``MatMulInteger`` -> ``Cast`` -> ``Mul`` by the product of
  the two scales; the names are onnxruntime's (``<A>_quantized``, ``<B>_scale``, ...);
* weights symmetric per output column in 7 bits: ``scale = float32(2 * absmax / 128)``
  (computed in float64; 1.0 when below float32's smallest normal), zero point 0, values
  ``clip(rint(w / scale), -128, 127)`` in float32 arithmetic, so within [-64, 64];
* the graph's value types from ONNX shape inference (run twice, as the quantizer does),
  ``onnx.infer`` metadata, producer ``onnx.quantize``, unused initializers removed, the nodes
  in onnxruntime's topological order, and every tensor whose raw bytes reach onnx's 1024-byte
  threshold written to ``<name>.data`` in onnx's order with no padding.

Why 7-bit weights (``reduce_range``): on an x86 CPU without AVX-VNNI, onnxruntime's u8 x s8
kernel multiplies with ``vpmaddubsw``, which adds two u8 x s8 products into an int16 and
saturates: with full 8-bit weights the sums overflow, and the codes depend on the host's
instruction set (measured on the tiny model: the first step's choices agreed with fp32 at
88.3 % with VNNI and 51.0 % on an emulated Haswell). With weights in [-64, 64] no pair can
overflow, so every x86 host computes the same products and the agreement no longer depends on
it (81.9 % first step on both).

``tests/engine/test_int8_streaming.py`` compares it with ``quantize_dynamic``'s
(:mod:`.int8_onnxruntime`) file for file (``benchmarks/smallhost.py --compare-int8`` at the
real size). Weights an export transposes at run time (``MatMul(x, Transpose(W))``) are
quantized transposed, beyond onnxruntime's pattern. Anything else outside it (a quantized
weight also read by another node, subgraphs, float16 weights): :class:`StreamingUnsupported`.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

from wyoming_omnivoice.engine.offline.canonical_form import transposed_weights
from wyoming_omnivoice.engine.offline.onnx_order import tensors_in_save_order, topological_order
from wyoming_omnivoice.engine.store.model_files import ModelError
from wyoming_omnivoice.progress import PREPARE, Progress, progress

_LOGGER = logging.getLogger("wyoming_omnivoice.engine.offline.prepare")

#: onnx writes a tensor to the weights file when ``sys.getsizeof(raw_data)`` reaches this.
SIZE_THRESHOLD = 1024
#: What onnxruntime's quantizer records in the model (its ``__producer__``/``__version__``).
PRODUCER = ("onnx.quantize", "0.1.0")
_INFER_METADATA = ("onnx.infer", "onnxruntime.quant")
_FLOAT32_TINY = float(np.finfo(np.float32).tiny)
#: The largest quantized weight: 64, onnxruntime's ``reduce_range`` (7 bits; why: above).
#: ``benchmarks/int8_weight_bits.py`` sets 127 to make 8-bit weights beside them.
WEIGHT_MAX = 64


class StreamingUnsupported(ModelError):
    """The graph has a form the streaming quantizer does not reproduce."""


class _Weights:
    """Reads initializers' values: inline data, or a memory map of the external file."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir

    def array(self, tensor: TensorProto) -> np.ndarray:
        if not external_data_helper.uses_external_data(tensor):
            return numpy_helper.to_array(tensor)
        info = external_data_helper.ExternalDataInfo(tensor)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).newbyteorder("<")
        shape = tuple(int(d) for d in tensor.dims)
        path = self.base_dir / info.location
        if Path(info.location).is_absolute() or ".." in Path(info.location).parts:
            raise ModelError(f"{tensor.name}: external data outside the model folder")
        mapped = np.memmap(path, dtype=dtype, mode="r", offset=int(info.offset or 0),
                           shape=shape)
        return mapped

    def raw_bytes(self, tensor: TensorProto) -> bytes:
        array = self.array(tensor)
        data = np.ascontiguousarray(array).tobytes()
        del array
        return data


def column_scales(weights: np.ndarray) -> np.ndarray:
    """The float32 scale of each column of a ``[K, N]`` float32 matrix, as onnxruntime's
    symmetric int8 per-channel quantization computes it with ``reduce_range`` (the range
    [-:data:`WEIGHT_MAX`, :data:`WEIGHT_MAX`])."""
    column_min = np.minimum(weights.min(axis=0), np.float32(0))
    column_max = np.maximum(weights.max(axis=0), np.float32(0))
    absmax = np.maximum(np.abs(column_min), np.abs(column_max))
    wide = absmax.astype(np.float64)
    scale64 = (wide - (-wide)) / (np.float64(WEIGHT_MAX) - np.float64(-WEIGHT_MAX))
    scales: np.ndarray = scale64.astype(np.float32)
    scales[scale64 < _FLOAT32_TINY] = np.float32(1.0)
    return scales


def quantize_columns(weights: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """``clip(rint(w / scale), -128, 127)`` per column, in float32 as onnxruntime does."""
    quantized: np.ndarray = np.rint(weights / scales)  # float32 / float32, ties to even
    np.clip(quantized, -128, 127, out=quantized)
    return quantized.astype(np.int8)


def _as_saved(model: onnx.ModelProto, weights: _Weights) -> onnx.ModelProto:
    """A graph-only copy in the form the weights would have in a saved file: tensors of
    1024 raw bytes or more external (no data), smaller ones inline (what shape inference
    saw in onnxruntime's path)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for tensor in copy.graph.initializer:
        if external_data_helper.uses_external_data(tensor):
            length = int(external_data_helper.ExternalDataInfo(tensor).length or 0)
            if sys.getsizeof(b"") + length < SIZE_THRESHOLD:
                data = weights.raw_bytes(tensor)
                _set_inline(tensor, data)
        elif tensor.HasField("raw_data") and sys.getsizeof(tensor.raw_data) >= SIZE_THRESHOLD:
            length = len(tensor.raw_data)
            tensor.ClearField("raw_data")
            _set_external(tensor, "shape-inference-only", 0, length)
    return copy


def _infer(model: onnx.ModelProto, weights: _Weights) -> None:
    """Value types from ONNX shape inference (twice, as the quantizer's two reloads) and the
    ``onnx.infer`` metadata, into ``model``."""
    for _ in range(2):
        inferred = onnx.shape_inference.infer_shapes(_as_saved(model, weights))
        for field in ("value_info", "input", "output"):
            target = getattr(model.graph, field)
            del target[:]
            target.extend(getattr(inferred.graph, field))
        props = dict([_INFER_METADATA])
        props.update({p.key: p.value for p in model.metadata_props})
        helper.set_model_props(model, props)


def _set_inline(tensor: TensorProto, data: bytes) -> None:
    tensor.ClearField("data_location")
    del tensor.external_data[:]
    tensor.raw_data = data


def _set_external(tensor: TensorProto, location: str, offset: int, length: int) -> None:
    del tensor.external_data[:]
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        entry = tensor.external_data.add()
        entry.key = key
        entry.value = str(value)


class _Plan:
    """The quantized graph's nodes and initializers, weights still to be computed."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        graph = model.graph
        self.initializers = {t.name: t for t in graph.initializer}
        self.types = {v.name: v for v in (*graph.value_info, *graph.output, *graph.input)}
        self.produced = {out for node in graph.node for out in node.output}
        #: value -> its (quantized, scale, zero point); pending: (source, scales, transposed)
        self.quantized: dict[str, tuple[str, str, str]] = {}
        self.pending: dict[str, tuple[TensorProto, np.ndarray, bool]] = {}
        self.new_nodes: list[onnx.NodeProto] = []
        self.new_initializers: list[TensorProto] = []
        self.generated = {i.name for i in graph.input if i.name not in self.initializers}
        # Weights an export transposes at run time: quantized transposed, the node dropped.
        self.transposed = {out: weight for out, weight in transposed_weights(graph).items()
                           if self._is_float_initializer(weight)}
        self._on_weight: Callable[[], None] | None = None

    def weights_to_quantize(self) -> int:
        """How many weight matrices :meth:`build` quantizes (for the progress lines)."""
        return len({node.input[1] for node in self.model.graph.node
                    if node.op_type == "MatMul" and node.domain in ("", "ai.onnx")
                    and (self._is_float_initializer(node.input[1])
                         or node.input[1] in self.transposed)})

    def build(self, weights: _Weights, on_weight: Callable[[], None] | None = None) -> int:
        """The quantized nodes planned (each weight's scales computed: ``on_weight``)."""
        self._on_weight = on_weight
        count = 0
        for node in self.model.graph.node:
            if any(attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for attr in node.attribute):
                raise StreamingUnsupported(f"node {node.name} has a subgraph")
            before = len(self.new_nodes)
            if node.op_type == "Transpose" and node.output[0] in self.transposed:
                continue  # its weight is quantized transposed, for the MatMuls reading it
            if self._quantizable(node):
                self._quantize_matmul(node, weights)
                count += 1
            else:
                for name in node.input:
                    if name in self.quantized and name not in self.generated:
                        raise StreamingUnsupported(
                            f"{name} is quantized for a MatMul and also read by {node.name}")
                self.new_nodes.append(node)
            for added in self.new_nodes[before:]:
                self.generated.update(added.output)
        return count

    def _is_float_initializer(self, name: str) -> bool:
        tensor = self.initializers.get(name)
        return tensor is not None and tensor.data_type in (TensorProto.FLOAT,
                                                           TensorProto.FLOAT16)

    def _quantizable(self, node: onnx.NodeProto) -> bool:
        if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx"):
            return False
        weight = node.input[1]
        if weight in self.transposed:
            return True
        if weight not in self.initializers:
            return False  # MatMulConstBOnly: products of two activations stay fp32
        if self._is_float_initializer(weight):
            return True
        if self._activation_is_float(node.input[0]):
            raise StreamingUnsupported(f"{node.name}: weight {weight} is not float")
        return False

    def _activation_is_float(self, name: str) -> bool:
        if name in self.initializers:
            return self._is_float_initializer(name)
        info = self.types.get(name)
        return info is not None and info.type.HasField("tensor_type") and \
            info.type.tensor_type.elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16)

    def _quantize_matmul(self, node: onnx.NodeProto, weights: _Weights) -> None:
        activation, weight = node.input[0], node.input[1]
        nodes: list[onnx.NodeProto] = []
        if activation not in self.quantized:
            if activation in self.initializers or not (
                    activation in self.types or activation in self.produced
                    or activation in self.generated):
                raise StreamingUnsupported(f"{node.name}: input {activation} is not an "
                                           "activation of the graph")
            names = (f"{activation}_quantized", f"{activation}_scale",
                     f"{activation}_zero_point")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [activation], list(names),
                                          f"{activation}_QuantizeLinear"))
            self.quantized[activation] = names
        if weight not in self.quantized:
            self._quantize_weight(weight, weights)
        q_act, s_act, z_act = self.quantized[activation]
        q_w, s_w, z_w = self.quantized[weight]
        output = node.output[0]
        integer_out = output + "_output_quantized"
        integer_name = node.name + "_quant" if node.name else ""
        nodes.append(helper.make_node("MatMulInteger", [q_act, q_w, z_act, z_w],
                                      [integer_out], integer_name))
        cast_out = integer_out + "_cast_output"
        nodes.append(helper.make_node("Cast", [integer_out], [cast_out],
                                      integer_out + "_cast", to=self._output_type(output)))
        scales_name = integer_name + "_scales_mul" if integer_name else f"{s_act}_{s_w}_mul"
        existing = next((n for n in self.new_nodes if n.name == scales_name), None)
        if existing is None:
            existing = helper.make_node("Mul", [s_act, s_w], [scales_name + ":0"], scales_name)
            nodes.append(existing)
        out_name = integer_name + "_output_scale_mul" if integer_name else ""
        nodes.append(helper.make_node("Mul", [cast_out, existing.output[0]], [output],
                                      out_name))
        self.new_nodes.extend(nodes)

    def _output_type(self, name: str) -> int:
        info = self.types.get(name)
        if info is not None and info.type.HasField("tensor_type") and \
                info.type.tensor_type.elem_type != 0:
            return int(info.type.tensor_type.elem_type)
        return TensorProto.FLOAT  # the DefaultTensorType our call gives

    def _quantize_weight(self, name: str, weights: _Weights) -> None:
        transposed = name in self.transposed
        tensor = self.initializers[self.transposed.get(name, name)]
        if tensor.data_type != TensorProto.FLOAT or len(tensor.dims) != 2:
            raise StreamingUnsupported(f"weight {name} is not a float32 matrix")
        array = np.asarray(weights.array(tensor))
        scales = column_scales(array.T if transposed else array)
        del array
        if self._on_weight is not None:
            self._on_weight()
        q_name, zp_name, scale_name = f"{name}_quantized", f"{name}_zero_point", f"{name}_scale"
        dims = list(tensor.dims)[::-1] if transposed else list(tensor.dims)
        columns = [int(dims[-1])]
        self.new_initializers.append(helper.make_tensor(
            scale_name, tensor.data_type, columns, scales.tolist()))
        self.new_initializers.append(helper.make_tensor(
            zp_name, TensorProto.INT8, columns, np.zeros(columns, np.int8).tolist()))
        placeholder = TensorProto(name=q_name, data_type=TensorProto.INT8, dims=dims)
        self.new_initializers.append(placeholder)
        source = TensorProto()
        source.CopyFrom(tensor)  # the graph's copy is removed by finish()
        self.pending[q_name] = (source, scales, transposed)
        self.quantized[name] = (q_name, scale_name, zp_name)

    def finish(self) -> None:
        """Nodes and initializers in place: unused ones dropped, onnxruntime's order."""
        graph = self.model.graph
        graph.initializer.extend(self.new_initializers)
        wanted = {name for node in self.new_nodes for name in node.input if name}
        wanted.update(out.name for out in graph.output)
        graph_inputs = {i.name: i for i in graph.input}
        for tensor in [t for t in graph.initializer if t.name not in wanted]:
            graph.initializer.remove(tensor)
            if tensor.name in graph_inputs:
                graph.input.remove(graph_inputs[tensor.name])
        del graph.node[:]
        try:
            graph.node.extend(topological_order(self.new_nodes, graph))
        except ValueError as err:  # not a DAG of known inputs
            raise StreamingUnsupported(str(err)) from err
        self.model.producer_name, self.model.producer_version = PRODUCER


def quantize_int8(model: onnx.ModelProto, weights_dir: Path, target: Path, *,
                  label: str = "Preparing the int8 backbone") -> int:
    """Write the int8 form of ``model`` (a graph whose weights lie in ``weights_dir``) to
    ``target`` and ``<target>.data``; returns the number of quantized products. Two passes
    over the weights, each logged weight by weight (:mod:`wyoming_omnivoice.progress`): the
    scales, then the quantized weights written."""
    weights = _Weights(weights_dir)
    _infer(model, weights)
    plan = _Plan(model)
    total = plan.weights_to_quantize()
    with progress(PREPARE, f"{label}, 1 of 2: scales", total, unit="weights",
                  logger=_LOGGER) as work:
        count = plan.build(weights, on_weight=work.advance)
    plan.finish()
    with progress(PREPARE, f"{label}, 2 of 2: int8 weights written", len(plan.pending),
                  unit="weights", logger=_LOGGER) as work:
        _write(model, plan, weights, target, work)
    return count


def _write(model: onnx.ModelProto, plan: _Plan, weights: _Weights, target: Path,
           work: Progress) -> None:
    """The weights file in onnx's order, one tensor at a time, then the graph."""
    location = target.name + ".data"
    fd = os.open(target.with_name(location), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as data_file:
        for tensor in tensors_in_save_order(model):
            data = _tensor_bytes(tensor, plan, weights)
            if data is None:
                continue
            if sys.getsizeof(data) >= SIZE_THRESHOLD:
                offset = data_file.tell()
                data_file.write(data)
                tensor.ClearField("raw_data")
                _set_external(tensor, location, offset, len(data))
            else:
                _set_inline(tensor, data)
            del data
            if tensor.name in plan.pending:
                work.advance()
    onnx.save_model(model, str(target))


def _tensor_bytes(tensor: TensorProto, plan: _Plan, weights: _Weights) -> bytes | None:
    """The raw bytes of a tensor to place (None: its data is in typed fields)."""
    pending = plan.pending.get(tensor.name)
    if pending is not None:
        source, scales, transposed = pending
        array = np.asarray(weights.array(source))
        quantized = quantize_columns(np.ascontiguousarray(array.T) if transposed else array,
                                     scales)
        del array
        return quantized.tobytes()
    if external_data_helper.uses_external_data(tensor):
        return weights.raw_bytes(tensor)
    if tensor.HasField("raw_data"):
        return tensor.raw_data
    return None
