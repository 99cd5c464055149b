"""Exact clean-ups of the published backbone graph, applied in memory at load time.

torch.onnx exports scaled-dot-product attention with a guard after every softmax,
``Where(IsNaN(p), 0, p)``, for rows whose mask is all False (their softmax is NaN). The
decoder never builds such a row: every padded position attends to itself (see
``layouts.Grid``), so ``p`` has no NaN and the guard returns ``p`` unchanged. It still reads
and writes the whole ``[rows, heads, L, L]`` probability tensor twice per layer: removing it
makes a forward 4-8 % faster on the real-width model, onnxruntime CPU (``bench_engine.py
--sections backbone``, column ours/file) with bit-identical hidden states. Upstream PyTorch
SDPA has no such guard either.

The file on disk is never changed; the rewritten graph is handed to onnxruntime as bytes
with its external weights read from the model folder.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


def _zero_constants(model: onnx.ModelProto) -> set[str]:
    """Names of scalar-or-tensor constants that are all zeros (initializers and Constant)."""
    zeros = set()
    for tensor in model.graph.initializer:
        if tensor.data_location != onnx.TensorProto.EXTERNAL and _all_zero(tensor):
            zeros.add(tensor.name)
    for node in model.graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 \
                and node.attribute[0].name == "value" and _all_zero(node.attribute[0].t):
            zeros.add(node.output[0])
    return zeros


def _all_zero(tensor: onnx.TensorProto) -> bool:
    if int(np.prod(tensor.dims, dtype=np.int64)) > 16:
        return False
    try:
        return not np.any(numpy_helper.to_array(tensor))
    except (ValueError, TypeError):
        return False


def strip_nan_guards(model: onnx.ModelProto) -> int:
    """Remove ``Where(IsNaN(x), 0, x)`` where ``x`` comes from a Softmax; returns the count.

    Only the exact pattern is touched: the condition is an IsNaN of the same tensor that is
    the ``else`` branch, that tensor is a Softmax output, and the ``then`` branch is a zero
    constant. Guards whose output is a graph output are kept.
    """
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    zeros = _zero_constants(model)
    graph_outputs = {o.name for o in graph.output}
    replaced: dict[str, str] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3 or node.output[0] in graph_outputs:
            continue
        cond, zero, value = node.input
        check = producer.get(cond)
        source = producer.get(value)
        if (check is None or check.op_type != "IsNaN" or check.input[0] != value
                or source is None or source.op_type != "Softmax" or zero not in zeros):
            continue
        replaced[node.output[0]] = value
        dropped.add(id(node))
    if not replaced:
        return 0
    kept = [node for node in graph.node if id(node) not in dropped]
    for node in kept:
        for index, name in enumerate(node.input):
            if name in replaced:
                node.input[index] = replaced[name]
    # IsNaN nodes left without a consumer go too.
    used = {name for node in kept for name in node.input} | graph_outputs
    kept = [node for node in kept if node.op_type != "IsNaN" or node.output[0] in used]
    del graph.node[:]
    graph.node.extend(kept)
    produced = {out for node in kept for out in node.output}
    shapes = [info for info in graph.value_info if info.name in produced]
    del graph.value_info[:]
    graph.value_info.extend(shapes)
    return len(replaced)
