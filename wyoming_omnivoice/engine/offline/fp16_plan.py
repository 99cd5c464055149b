"""Which nodes of the backbone may run in fp16: step 1 ("Plan") of :mod:`.fp16_calibrate`.

Matrix products and attention are fp16 candidates; norms, softmax, transcendental ops and
``Cast`` are fp32; every other op follows its float data inputs, so the residual stream
stays fp32. :func:`float_tensors` types every tensor of a graph (ONNX shape inference, then
propagation for contrib ops it cannot type); :func:`plan_precision` gives each node its
precision, with the nodes calibration kept fp32 forced back. Pure graph reading: no
onnxruntime, no weights read, so the plan is checked on its own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import onnx
from onnx import TensorProto

from wyoming_omnivoice.engine.offline.fp16_ranges import skeleton

_LOGGER = logging.getLogger(__name__)

FLOAT = TensorProto.FLOAT
HALF = TensorProto.FLOAT16

#: Ops computed in fp16 when calibration allows (float inputs cast down, weights fp16).
FP16_OPS = frozenset({
    "MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum", "FusedMatMul",
    "MultiHeadAttention", "GroupQueryAttention", "Attention",
})
#: Ops always computed in fp32: normalisation, softmax and transcendental ops.
FP32_OPS = frozenset({
    "Pow", "ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2", "Sqrt", "Reciprocal",
    "Softmax", "LogSoftmax", "LayerNormalization", "SimplifiedLayerNormalization",
    "SkipSimplifiedLayerNormalization", "SkipLayerNormalization", "RMSNormalization",
    "Range", "Cos", "Sin", "Exp", "Log", "CumSum", "Erf", "Cast",
})
#: Inputs that are additive attention biases (masks), by (domain, op): clipped to +-65504,
#: not range-checked ("" is the ONNX domain's ``Attention``, opset 23).
MASK_INPUTS = {("com.microsoft", "MultiHeadAttention"): frozenset({5}),
               ("com.microsoft", "Attention"): frozenset({5}),
               ("", "Attention"): frozenset({3})}


def mask_inputs(node: onnx.NodeProto) -> frozenset[int]:
    """Positions of ``node``'s inputs that are additive attention masks."""
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    return MASK_INPUTS.get((domain, node.op_type), frozenset())


#: Ops whose outputs are not float whatever their inputs (type fallback when ONNX shape
#: inference cannot type a graph).
_BOOL_OPS = frozenset({"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not",
                       "And", "Or", "Xor", "IsNaN", "IsInf"})
_INT_OPS = frozenset({"Shape", "Size", "ArgMax", "ArgMin", "NonZero"})


def name_nodes(model: onnx.ModelProto) -> None:
    """Give every node a unique name (the plan is keyed by node name)."""
    seen: set[str] = set()
    for index, node in enumerate(model.graph.node):
        if not node.name or node.name in seen:
            node.name = f"{node.op_type}_{index}"
        seen.add(node.name)


def float_tensors(model: onnx.ModelProto) -> set[str]:
    """Names of every fp32 tensor (inputs, weights, intermediate values).

    ONNX shape inference types the standard ops; outputs it cannot type (contrib ops such
    as ``SimplifiedLayerNormalization`` or ``MultiHeadAttention``) take the type of their
    first typed input, which is what those float ops do.
    """
    typed = skeleton(model)
    try:
        inferred = onnx.shape_inference.infer_shapes(typed, strict_mode=False)
    except (onnx.shape_inference.InferenceError, ValueError) as err:
        _LOGGER.warning("ONNX shape inference failed (%s); typing the graph by propagation",
                        err)
        inferred = typed
    types: dict[str, int] = {}
    for info in (list(inferred.graph.value_info) + list(inferred.graph.input)
                 + list(inferred.graph.output)):
        if info.type.tensor_type.elem_type:
            types[info.name] = info.type.tensor_type.elem_type
    for init in model.graph.initializer:
        types[init.name] = init.data_type
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    types[node.output[0]] = attr.t.data_type
        elif node.op_type == "Cast":
            types[node.output[0]] = next(a.i for a in node.attribute if a.name == "to")
        known = [types[n] for n in node.input if n in types]
        fallback = (TensorProto.BOOL if node.op_type in _BOOL_OPS else TensorProto.INT64
                    if node.op_type in _INT_OPS else known[0] if known else None)
        for position, out in enumerate(node.output):
            if out and out not in types and fallback is not None:
                indices = node.op_type == "TopK" and position == 1
                types[out] = TensorProto.INT64 if indices else fallback
    return {name for name, kind in types.items() if kind == FLOAT}


def constant_names(model: onnx.ModelProto) -> set[str]:
    """Names of the weights and ``Constant`` outputs (their range is read from values)."""
    names = {init.name for init in model.graph.initializer}
    names |= {n.output[0] for n in model.graph.node if n.op_type == "Constant"}
    return names


def plan_precision(model: onnx.ModelProto, floats: set[str],
                   keep_fp32: Iterable[str] = ()) -> dict[str, int]:
    """Precision of every non-Constant node by name, nodes in ``keep_fp32`` forced fp32."""
    forced = set(keep_fp32)
    constants = constant_names(model)
    produced: dict[str, int] = {}
    plan: dict[str, int] = {}
    for node in model.graph.node:
        if node.op_type == "Constant":
            continue
        if node.name in forced or node.op_type in FP32_OPS:
            precision = FLOAT
        elif node.op_type in FP16_OPS:
            precision = HALF
        else:
            kinds = {produced.get(n, FLOAT) for n in node.input
                     if n and n in floats and n not in constants}
            precision = HALF if kinds == {HALF} else FLOAT
        plan[node.name] = precision
        for out in node.output:
            if out in floats:
                produced[out] = precision
    return plan


def checked_tensors(node: onnx.NodeProto, floats: set[str]) -> list[str]:
    """The float tensors of ``node`` whose range decides whether it may run in fp16."""
    masks = mask_inputs(node)
    inputs = [n for i, n in enumerate(node.input) if n and n in floats and i not in masks]
    return list(dict.fromkeys(inputs + [n for n in node.output if n and n in floats]))
