"""What one export writes and another leaves out, removed before the rewrites look for their
patterns, so the preparation does not depend on one torch version's exporter.

The same backbone exported by dynamo with onnxscript's optimizer, by dynamo without it, or
by the TorchScript exporter differs in ways that change no value:

* casts of a float tensor to float (``hidden_states.to(input_dtype)`` in every RMSNorm: the
  TorchScript exporter keeps them, the optimizer drops them);
* small constants computed from constants (``Reshape(Constant, Constant)`` for a
  ``ReduceMean``'s axes, ``CastLike`` of a constant), and ``Identity`` nodes.

:func:`canonicalize` removes those (exact: the same values reach every reader), and says
what it removed. :func:`transposed_weights` finds the weights that dynamo without the
optimizer transposes at run time (``MatMul(x, Transpose(W))``: the int8 variant quantizes
them transposed).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

#: Constants up to this many elements are folded.
_SMALL = 64


def _float_values(model: onnx.ModelProto) -> set[str]:
    """Values known to be float32 (inputs, initializers, and what shape inference types)."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # an unusual graph: fewer casts are recognised, nothing breaks
        inferred = model
    graph = inferred.graph
    floats = {t.name for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT}
    for info in (*graph.input, *graph.value_info, *graph.output):
        if info.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            floats.add(info.name)
    return floats


def _small_constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    for tensor in graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL and \
                int(np.prod(tensor.dims, dtype=np.int64)) <= _SMALL:
            found[tensor.name] = numpy_helper.to_array(tensor)
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute:
            attr = node.attribute[0]
            if attr.name == "value" and int(np.prod(attr.t.dims, dtype=np.int64)) <= _SMALL:
                found[node.output[0]] = numpy_helper.to_array(attr.t)
            elif attr.name == "value_ints":
                found[node.output[0]] = np.array(attr.ints, np.int64)
            elif attr.name == "value_int":
                found[node.output[0]] = np.array(attr.i, np.int64)
            elif attr.name == "value_float":
                found[node.output[0]] = np.array(attr.f, np.float32)
    return found


def _fold(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> np.ndarray | None:
    """The value of a small constant-input node this pass folds, else None."""
    if not node.input or not all(name in constants for name in node.input):
        return None
    values = [constants[name] for name in node.input]
    if node.op_type == "Reshape":
        shape = values[1].tolist()
        return None if 0 in shape else values[0].reshape(shape)
    if node.op_type == "CastLike":
        return values[0].astype(values[1].dtype)
    if node.op_type == "Identity":
        return values[0]
    return None


def canonicalize(model: onnx.ModelProto) -> dict[str, int]:
    """Remove float-to-float casts and ``Identity`` nodes, fold small constant
    ``Reshape``/``CastLike`` nodes into initializers; returns what was removed."""
    graph = model.graph
    floats = _float_values(model)
    outputs = {o.name for o in graph.output}
    constants = _small_constants(graph)
    rename: dict[str, str] = {}
    kept: list[onnx.NodeProto] = []
    removed = {"float casts": 0, "identities": 0, "folded constants": 0}
    for node in graph.node:
        node.input[:] = [rename.get(name, name) for name in node.input]
        folded = _fold(node, constants)
        if folded is not None and node.output[0] not in outputs:
            graph.initializer.append(numpy_helper.from_array(folded, node.output[0]))
            constants[node.output[0]] = folded
            removed["folded constants"] += 1
            continue
        passthrough = (node.op_type == "Identity" or (
            node.op_type == "Cast" and node.input[0] in floats and
            any(a.name == "to" and a.i == onnx.TensorProto.FLOAT for a in node.attribute)))
        if passthrough and node.output[0] not in outputs and node.input[0] not in outputs:
            rename[node.output[0]] = node.input[0]
            removed["identities" if node.op_type == "Identity" else "float casts"] += 1
            continue
        kept.append(node)
    if rename or removed["folded constants"]:
        del graph.node[:]
        graph.node.extend(kept)
        del graph.value_info[:]
    return removed


def transposed_weights(graph: onnx.GraphProto) -> dict[str, str]:
    """``Transpose(W, perm=[1, 0])`` outputs of initializers ``W`` read only as MatMul
    weights (``x @ W.T`` in an export without constant folding) -> ``W``."""
    initializers = {t.name for t in graph.initializer}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    found = {}
    for node in graph.node:
        perm = [list(a.ints) for a in node.attribute if a.name == "perm"]
        if node.op_type != "Transpose" or perm != [[1, 0]] or node.input[0] not in initializers:
            continue
        out = node.output[0]
        if readers.get(out) and all(r.op_type == "MatMul" and r.input[1] == out != r.input[0]
                                    for r in readers[out]):
            found[out] = node.input[0]
    return found
