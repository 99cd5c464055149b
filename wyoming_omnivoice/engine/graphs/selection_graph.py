"""The per-step selection of the decode as an ONNX graph (built with ``onnx.helper``).

It is the device twin of the host ``choose_cells`` (:mod:`.decoding.selection`): from the
scorer's ``pred_tokens``/``confidence`` ``[B, 8, T]``, the current tokens, each item's
schedule ``[B, S + 1]`` (cells unmasked per step; a last column of zeros) and each item's
step index ``[B]`` it computes

1. ``count`` = the item's schedule at its own step (gathered on the device: per step
   nothing goes up from the host);
2. ``scores = (confidence - penalty) / position_temperature + noise`` (float32, the host's
   order of operations; the deterministic variant, position temperature 0, has neither
   the division nor the noise), where ``noise`` is this step's Gumbel noise of each item,
   gathered from the whole decode's noise ``[B, S, 8, T]`` by the item's step;
3. ``-inf`` where a cell is no longer MASK;
4. per item the ``count`` best cells of the flat ``[8 * T]`` grid with numpy's stable
   argsort order: a full sort of the row (``TopK`` over every cell: its K is the row's
   size, a shape the CPU provider knows without reading the device), ``v`` = the
   ``count``-th value, then every cell with ``score > v`` and the lowest-index cells with
   ``score == v`` (a ``CumSum`` over the ties) up to ``count``;
5. ``new_tokens = where(chosen, pred, tokens)`` and ``new_steps = steps + 1``.

Nothing in it reads a device value on the host (an earlier version took TopK's K from a
``ReduceMax`` of the counts: a device-to-host copy and a sync in every step, and no CUDA
graph). :mod:`.step_graph` puts it between the scoring graph and the embeddings of the
new tokens, so one session goes from the backbone's hidden states to the next step's
backbone input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID

if TYPE_CHECKING:
    import onnx

PRED = "pred_tokens"
CONF = "confidence"
TOKENS = "tokens"
SCHEDULE = "schedule"
PENALTY = "penalty"
NOISE = "noise"
STEPS = "steps"
TEMPERATURE = "position_temperature"
NEW_TOKENS = "new_tokens"
NEW_STEPS = "new_steps"
_P = "select/"


def selection_nodes(*, noisy: bool) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """The selection's nodes and constants (internal names prefixed ``select/``)."""
    from onnx import TensorProto, helper, numpy_helper

    def name(stem: str) -> str:
        return _P + stem

    inits = [
        numpy_helper.from_array(np.array(MASK_ID, dtype=np.int64), name("mask_id")),
        numpy_helper.from_array(np.array(-np.inf, dtype=np.float32), name("neg_inf")),
        numpy_helper.from_array(np.array([0, -1], dtype=np.int64), name("rows_shape")),
        numpy_helper.from_array(np.array([0, 8, -1], dtype=np.int64), name("tokens_shape")),
        numpy_helper.from_array(np.array([1], dtype=np.int64), name("axis1")),
        numpy_helper.from_array(np.array([1], dtype=np.int64), name("one_1d")),
        numpy_helper.from_array(np.array([2], dtype=np.int64), name("two_1d")),
        numpy_helper.from_array(np.array(1, dtype=np.int64), name("one")),
        numpy_helper.from_array(np.array(0, dtype=np.int64), name("zero")),
    ]
    node = helper.make_node
    nodes = [
        node("Unsqueeze", [STEPS, name("axis1")], [name("step_index")]),  # [B, 1]
        node("GatherElements", [SCHEDULE, name("step_index")], [name("count")], axis=1),
        node("Add", [STEPS, name("one")], [NEW_STEPS]),
        node("Sub", [CONF, PENALTY], [name("penalised")]),
    ]
    scores = name("penalised")
    if noisy:
        nodes += [
            node("Div", [scores, TEMPERATURE], [name("tempered")]),
            node("GatherND", [NOISE, name("step_index")], [name("step_noise")], batch_dims=1),
            node("Add", [name("tempered"), name("step_noise")], [name("noisy")]),
        ]
        scores = name("noisy")
    nodes += [
        node("Equal", [TOKENS, name("mask_id")], [name("is_mask")]),
        node("Where", [name("is_mask"), scores, name("neg_inf")], [name("scores")]),
        node("Reshape", [name("scores"), name("rows_shape")], [name("flat")]),
        # A full sort: K is the row's size, known from the shape alone.
        node("Shape", [name("flat")], [name("flat_dims")]),
        node("Slice", [name("flat_dims"), name("one_1d"), name("two_1d")], [name("k")]),
        node("TopK", [name("flat"), name("k")], [name("top"), name("top_index")],
             axis=1, largest=1, sorted=1),
        node("Sub", [name("count"), name("one")], [name("kth")]),  # -1 for a count of 0
        node("GatherElements", [name("top"), name("kth")], [name("v")], axis=1),
        node("Greater", [name("flat"), name("v")], [name("above")]),
        node("Equal", [name("flat"), name("v")], [name("tied")]),
        node("Cast", [name("above")], [name("above_i")], to=TensorProto.INT64),
        node("ReduceSum", [name("above_i"), name("axis1")], [name("n_above")], keepdims=1),
        node("Cast", [name("tied")], [name("tied_i")], to=TensorProto.INT64),
        node("CumSum", [name("tied_i"), name("one")], [name("tie_rank")]),
        node("Sub", [name("count"), name("n_above")], [name("ties_wanted")]),
        node("LessOrEqual", [name("tie_rank"), name("ties_wanted")], [name("early_tie")]),
        node("And", [name("tied"), name("early_tie")], [name("tie_taken")]),
        node("Or", [name("above"), name("tie_taken")], [name("best")]),
        node("Greater", [name("count"), name("zero")], [name("active")]),
        node("And", [name("best"), name("active")], [name("chosen_flat")]),
        node("Reshape", [name("chosen_flat"), name("tokens_shape")], [name("chosen")]),
        node("Where", [name("chosen"), PRED, TOKENS], [NEW_TOKENS]),
    ]
    return nodes, inits


def selection_io(*, noisy: bool, with_scores: bool) -> tuple[list[onnx.ValueInfoProto],
                                                             list[onnx.ValueInfoProto]]:
    """Inputs and outputs of the selection (``with_scores``: ``pred``/``conf`` are inputs,
    i.e. the graph stands alone)."""
    from onnx import TensorProto, helper

    def tensor(name: str, elem: int, shape: list[str | int]) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, elem, shape)

    inputs = []
    if with_scores:
        inputs += [tensor(PRED, TensorProto.INT64, ["B", 8, "T"]),
                   tensor(CONF, TensorProto.FLOAT, ["B", 8, "T"])]
    inputs += [tensor(TOKENS, TensorProto.INT64, ["B", 8, "T"]),
               tensor(SCHEDULE, TensorProto.INT64, ["B", "S1"]),
               tensor(STEPS, TensorProto.INT64, ["B"]),
               tensor(PENALTY, TensorProto.FLOAT, [8, 1])]
    if noisy:
        inputs += [tensor(NOISE, TensorProto.FLOAT, ["B", "S", 8, "T"]),
                   tensor(TEMPERATURE, TensorProto.FLOAT, [])]
    outputs = [tensor(NEW_TOKENS, TensorProto.INT64, ["B", 8, "T"]),
               tensor(NEW_STEPS, TensorProto.INT64, ["B"])]
    return inputs, outputs


def build_selection_model(*, noisy: bool, opset: int = 18) -> bytes:
    """The selection alone (inputs ``pred_tokens`` and ``confidence``), serialized."""
    from onnx import helper

    nodes, inits = selection_nodes(noisy=noisy)
    inputs, outputs = selection_io(noisy=noisy, with_scores=True)
    graph = helper.make_graph(nodes, "omnivoice_selection", inputs, outputs,
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="wyoming-omnivoice")
    model.ir_version = 8
    return bytes(model.SerializeToString())
