"""RMSNorm as one ``SimplifiedLayerNormalization`` node (onnxruntime's fused kernel).

The export writes each RMSNorm as ``Pow(x, 2) -> ReduceMean(-1) -> Add(eps) -> Sqrt ->
Reciprocal -> Mul(x, .) -> Mul(weight, .)`` (dynamo; the TorchScript exporter writes
``Div(1, .)`` for the ``Reciprocal`` and names every node after its module): five passes
over the activations, and onnxruntime's own fusion at load does not match this form. One
``SimplifiedLayerNormalization(x, weight, axis=-1, epsilon=eps)`` computes the same in one
pass (float accumulation); onnxruntime then fuses a preceding residual ``Add`` into
``SkipSimplifiedLayerNormalization`` itself. Hidden states stay within 1e-5 relative of the
unfused graph (``tests/engine/test_prepare.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Small inline constants (initializers and Constant nodes) by name."""
    found: dict[str, np.ndarray] = {}
    for tensor in graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL and \
                int(np.prod(tensor.dims, dtype=np.int64)) <= 4:
            found[tensor.name] = numpy_helper.to_array(tensor)
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            tensor = node.attribute[0].t
            if int(np.prod(tensor.dims, dtype=np.int64)) <= 4:
                found[node.output[0]] = numpy_helper.to_array(tensor)
    return found


def _reduce_axes(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> list[int] | None:
    for attr in node.attribute:
        if attr.name == "axes":
            return list(attr.ints)
    if len(node.input) > 1 and node.input[1] in constants:
        return [int(a) for a in np.ravel(constants[node.input[1]])]
    return None


def fuse_rms_norms(model: onnx.ModelProto) -> int:
    """Replace every exported RMSNorm chain by ``SimplifiedLayerNormalization``; returns
    how many. Only the exact chain is touched, and only when its inner values have no other
    reader."""
    graph = model.graph
    constants = _constants(graph)
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    for out in graph.output:
        readers[out.name] = readers.get(out.name, 0) + 1

    def single(name: str) -> bool:
        return readers.get(name, 0) == 1

    dropped: set[int] = set()
    replacements: dict[int, onnx.NodeProto] = {}
    for scale in graph.node:  # the final Mul(weight, normed)
        if scale.op_type != "Mul":
            continue
        for position in (0, 1):
            normed = producer.get(scale.input[1 - position])
            weight = scale.input[position]
            if normed is None or normed.op_type != "Mul" or not single(normed.output[0]):
                continue
            chain = _match(normed, producer, constants, single)
            if chain is None:
                continue
            x, eps, nodes = chain
            fused = helper.make_node(
                "SimplifiedLayerNormalization", [x, weight], [scale.output[0]],
                axis=-1, epsilon=eps, stash_type=1, name=f"{scale.name}_rmsnorm")
            dropped.update(id(n) for n in nodes)
            replacements[id(scale)] = fused
            break
    if not replacements:
        return 0
    kept = [replacements.get(id(n), n) for n in graph.node if id(n) not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    del graph.value_info[:]
    return len(replacements)


def _match(normed: onnx.NodeProto, producer: dict[str, onnx.NodeProto],
           constants: dict[str, np.ndarray], only: Callable[[str], bool]
           ) -> tuple[str, float, list[onnx.NodeProto]] | None:
    """``Mul(x, Reciprocal(Sqrt(Add(ReduceMean(Pow(x, 2)), eps))))`` (or ``Div(1, .)`` for
    the ``Reciprocal``) -> (x, eps, nodes); ``only(name)``: the value has exactly one
    reader."""
    for position in (0, 1):
        x, r = normed.input[position], normed.input[1 - position]
        recip = producer.get(r)
        if recip is None or not only(r) or not _is_reciprocal(recip, constants):
            continue
        sqrt = producer.get(recip.input[-1])
        if sqrt is None or sqrt.op_type != "Sqrt" or not only(sqrt.output[0]):
            continue
        add = producer.get(sqrt.input[0])
        if add is None or add.op_type != "Add" or not only(add.output[0]):
            continue
        eps_name = next((n for n in add.input if n in constants), None)
        mean = producer.get(next((n for n in add.input if n != eps_name), ""))
        if eps_name is None or mean is None or mean.op_type != "ReduceMean" or \
                not only(mean.output[0]) or _reduce_axes(mean, constants) != [-1]:
            continue
        if any(a.name == "keepdims" and a.i == 0 for a in mean.attribute):
            continue
        power = producer.get(mean.input[0])
        if power is None or power.op_type != "Pow" or power.input[0] != x or \
                power.input[1] not in constants or not only(power.output[0]):
            continue
        if float(np.ravel(constants[power.input[1]])[0]) != 2.0:
            continue
        eps = float(np.ravel(constants[eps_name])[0])
        return x, eps, [normed, recip, sqrt, add, mean, power]
    return None


def _is_reciprocal(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> bool:
    """``Reciprocal(s)``, or ``Div(1, s)``."""
    if node.op_type == "Reciprocal":
        return True
    return node.op_type == "Div" and node.input[0] in constants and \
        np.ravel(constants[node.input[0]]).tolist() == [1.0]
