"""Our own ONNX scoring graph, composed after the published audio-heads graph.

The decode loop must never pull ``[8, T, 1025]`` logits through numpy. This module builds one
graph that takes the backbone's hidden states and, inside onnxruntime,

1. gathers only the scored positions (the target frames of each conditional and
   unconditional row),
2. runs the published audio heads on them (fp16 or fp32, cast at the boundary),
3. applies classifier-free guidance in log-softmax space exactly as upstream
   (``log_softmax(lc + g * (lc - lu))``; the unguided variant, for guidance 0, gathers and
   scores only the conditional positions: ``log_softmax(c)``),
4. drops the MASK entry (id 1024) and returns the argmax token and its log-probability,
   ``[B, 8, T]`` each, plus (sampling variant) the top-10 % candidates for class sampling.

When the heads graph ends in the ``[N, T, 8, V] -> [N, 8, T, V]`` transpose of the export,
the scoring works on the untransposed logits and transposes only its small outputs (the
values are the same; the full logits are never copied for it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from wyoming_omnivoice.engine.constants import AUDIO_VOCAB, MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.store.model_files import ModelError

if TYPE_CHECKING:
    import onnx

# onnx is imported when a graph is built, not with the constants below (the prompt and the
# decoder import them): a restart loads the graphs kept by :mod:`.scoring_cache`.

#: Upstream keeps ceil(0.1 * 1025) candidates when class_temperature > 0.
TOP_K_CLASSES = math.ceil(0.1 * AUDIO_VOCAB)

HIDDEN = "hidden_states"
COND_INDEX = "cond_index"
UNCOND_INDEX = "uncond_index"
GUIDANCE = "guidance_scale"
PRED = "pred_tokens"
CONF = "confidence"
TOPK_VALUES = "topk_log_probs"
TOPK_INDICES = "topk_tokens"

_PREFIX = "heads/"
_MIN_OPSET = 17


def _elem_type(value_info: onnx.ValueInfoProto) -> int:
    return value_info.type.tensor_type.elem_type


def _elide_final_transpose(heads: onnx.ModelProto, logits: str) -> bool:
    """Drop the heads graph's final ``Transpose(perm=[0, 2, 1, 3])`` so ``logits`` comes out
    as ``[N, T, 8, V]``; a Cast after the transpose (fp16 graphs) stays, fed directly.
    Returns whether the graph changed (False: not that pattern, nothing touched)."""
    producer = {out: node for node in heads.graph.node for out in node.output}

    def consumers(name: str) -> list[onnx.NodeProto]:
        return [node for node in heads.graph.node if name in node.input]

    last = producer.get(logits)
    if last is None or consumers(logits):
        return False
    transpose = last
    if last.op_type == "Cast":
        transpose = producer.get(last.input[0])
        if transpose is None or len(consumers(last.input[0])) != 1:
            return False
    perm = next((list(a.ints) for a in transpose.attribute if a.name == "perm"), None)
    if transpose.op_type != "Transpose" or perm != [0, 2, 1, 3]:
        return False
    if transpose is last:
        last.op_type = "Identity"
        del last.attribute[:]
    else:
        last.input[0] = transpose.input[0]
        heads.graph.node.remove(transpose)
    return True


def build_scoring_model(heads: onnx.ModelProto, hidden_size: int, *, sampling: bool,
                        guided: bool = True) -> bytes:
    """Compose gather -> heads -> CFG scoring into one serialized ONNX model.

    ``guided=False`` builds the variant for guidance scale 0 (conditional rows only; the
    ``uncond_index`` and ``guidance_scale`` inputs are accepted and unused)."""
    import onnx
    import onnx.version_converter
    from onnx import TensorProto, compose, helper, numpy_helper

    if len(heads.graph.input) != 1 or len(heads.graph.output) < 1:
        raise ModelError("audio_heads_decoder.onnx must have one input (hidden_states)")
    heads_in = heads.graph.input[0]
    heads_out = next((o for o in heads.graph.output if o.name == "logits"), None)
    if heads_in.name != "hidden_states" or heads_out is None:
        raise ModelError(
            "audio_heads_decoder.onnx must map 'hidden_states' to 'logits'; it has inputs "
            f"{[i.name for i in heads.graph.input]} and outputs "
            f"{[o.name for o in heads.graph.output]}"
        )
    opset = max(
        (o.version for o in heads.opset_import if o.domain in ("", "ai.onnx")), default=0
    )
    if opset < 13:
        heads = onnx.version_converter.convert_version(heads, _MIN_OPSET)
        opset = _MIN_OPSET
    opset = max(opset, _MIN_OPSET)
    heads = compose.add_prefix(heads, _PREFIX)
    heads_input_type = _elem_type(heads.graph.input[0])
    heads_output_type = _elem_type(
        next(o for o in heads.graph.output if o.name == _PREFIX + "logits")
    )

    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = [
        numpy_helper.from_array(np.array([-1, hidden_size], dtype=np.int64), "flat_shape"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_1d"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one_1d"),
        numpy_helper.from_array(np.array([MASK_ID], dtype=np.int64), "mask_id_1d"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        numpy_helper.from_array(np.array([np.iinfo(np.int64).max], dtype=np.int64), "int_max"),
    ]
    # Gather the scored positions of every row: [2B, T, H] (unguided: [B, T, H]).
    nodes.append(helper.make_node("Reshape", [HIDDEN, "flat_shape"], ["hidden_flat"]))
    if guided:
        nodes.append(helper.make_node("Concat", [COND_INDEX, UNCOND_INDEX], ["all_index"],
                                      axis=0))
    nodes.append(helper.make_node("Gather", ["hidden_flat", "all_index" if guided
                                             else COND_INDEX], ["gathered"], axis=0))
    gathered = "gathered"
    if heads_input_type != TensorProto.FLOAT:
        nodes.append(helper.make_node("Cast", [gathered], ["gathered_cast"], to=heads_input_type))
        gathered = "gathered_cast"
    # Work on [N, T, 8, V] when the heads graph's last step is the transpose to [N, 8, T, V].
    logits = _PREFIX + "logits"
    untransposed = _elide_final_transpose(heads, logits)
    # Feed the heads graph: rename its input to our gathered tensor.
    heads_nodes = []
    for node in heads.graph.node:
        node = onnx.NodeProto.FromString(node.SerializeToString())
        node.input[:] = [gathered if n == _PREFIX + "hidden_states" else n for n in node.input]
        heads_nodes.append(node)
    nodes += heads_nodes
    if heads_output_type != TensorProto.FLOAT:
        nodes.append(helper.make_node("Cast", [logits], ["logits_f32"], to=TensorProto.FLOAT))
        logits = "logits_f32"
    if guided:
        # Split the cond rows (first B) from the uncond rows (last B).
        nodes += [
            helper.make_node("Shape", [COND_INDEX], ["cond_shape"]),
            helper.make_node("Slice", ["cond_shape", "zero_1d", "one_1d"], ["batch_1d"]),
            helper.make_node("Slice", [logits, "zero_1d", "batch_1d", "zero_1d"],
                             ["c_logits"]),
            helper.make_node("Slice", [logits, "batch_1d", "int_max", "zero_1d"],
                             ["u_logits"]),
            helper.make_node("LogSoftmax", ["c_logits"], ["lc"], axis=-1),
            helper.make_node("LogSoftmax", ["u_logits"], ["lu"], axis=-1),
            helper.make_node("Sub", ["lc", "lu"], ["lc_minus_lu"]),
            helper.make_node("Mul", [GUIDANCE, "lc_minus_lu"], ["guided_delta"]),
            helper.make_node("Add", ["lc", "guided_delta"], ["guided"]),
            helper.make_node("LogSoftmax", ["guided"], ["log_probs"], axis=-1),
        ]
    else:
        nodes.append(helper.make_node("LogSoftmax", [logits], ["log_probs"], axis=-1))
    # The outputs' layout before the optional final transpose to [B, 8, T(, K)].
    tail = "_btc" if untransposed else ""
    nodes += [
        # MASK suppression: drop the last entry (setting it to -inf never wins argmax/max).
        helper.make_node("Slice", ["log_probs", "zero_1d", "mask_id_1d", "last_axis"],
                         ["log_probs_codes"]),
        helper.make_node("ArgMax", ["log_probs_codes"], [PRED + tail], axis=-1, keepdims=0),
    ]
    if opset >= 18:
        nodes.append(helper.make_node("ReduceMax", ["log_probs_codes", "last_axis"],
                                      [CONF + tail], keepdims=0))
    else:
        nodes.append(helper.make_node("ReduceMax", ["log_probs_codes"], [CONF + tail],
                                      axes=[-1], keepdims=0))
    if tail:
        nodes += [helper.make_node("Transpose", [name + tail], [name], perm=[0, 2, 1])
                  for name in (PRED, CONF)]
    outputs = [
        helper.make_tensor_value_info(PRED, TensorProto.INT64, ["B", NUM_CODEBOOKS, "T"]),
        helper.make_tensor_value_info(CONF, TensorProto.FLOAT, ["B", NUM_CODEBOOKS, "T"]),
    ]
    if sampling:
        inits.append(numpy_helper.from_array(np.array([TOP_K_CLASSES], dtype=np.int64), "top_k"))
        nodes.append(
            helper.make_node("TopK", ["log_probs_codes", "top_k"],
                             [TOPK_VALUES + tail, TOPK_INDICES + tail],
                             axis=-1, largest=1, sorted=1)
        )
        if tail:
            nodes += [helper.make_node("Transpose", [name + tail], [name], perm=[0, 2, 1, 3])
                      for name in (TOPK_VALUES, TOPK_INDICES)]
        outputs += [
            helper.make_tensor_value_info(TOPK_VALUES, TensorProto.FLOAT,
                                          ["B", NUM_CODEBOOKS, "T", TOP_K_CLASSES]),
            helper.make_tensor_value_info(TOPK_INDICES, TensorProto.INT64,
                                          ["B", NUM_CODEBOOKS, "T", TOP_K_CLASSES]),
        ]
    inputs = [
        helper.make_tensor_value_info(HIDDEN, TensorProto.FLOAT, ["R", "L", hidden_size]),
        helper.make_tensor_value_info(COND_INDEX, TensorProto.INT64, ["B", "T"]),
        helper.make_tensor_value_info(UNCOND_INDEX, TensorProto.INT64, ["B", "T"]),
        helper.make_tensor_value_info(GUIDANCE, TensorProto.FLOAT, []),
    ]
    graph = helper.make_graph(
        nodes, "omnivoice_scoring", inputs, outputs,
        initializer=list(heads.graph.initializer) + inits,
    )
    produced = {out for node in nodes for out in node.output}
    graph.value_info.extend(v for v in heads.graph.value_info if v.name in produced)
    opsets = [helper.make_opsetid("", opset)] + [
        o for o in heads.opset_import if o.domain not in ("", "ai.onnx")
    ]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="wyoming-omnivoice")
    model.ir_version = max(heads.ir_version, 8)
    return bytes(model.SerializeToString())
