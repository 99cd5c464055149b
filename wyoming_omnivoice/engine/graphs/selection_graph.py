"""The per-step selection of the decode as an ONNX graph (built with ``onnx.helper``).

It is the device twin of the host ``choose_cells`` (the contract between the ``sched``
and ``devstep`` branches): from the scorer's ``pred_tokens``/``confidence`` ``[B, 8, T]``,
the current tokens and this step's per-item counts it computes

1. ``scores = (confidence - penalty) / position_temperature + noise`` (float32, the host's
   order of operations; the deterministic variant, position temperature 0, has neither
   the division nor the noise), where ``noise`` is this step's Gumbel noise of each item,
   gathered on the device from the whole decode's noise ``[B, S, 8, T]`` by the item's
   step index;
2. ``-inf`` where a cell is no longer MASK;
3. per item the ``count`` best cells of the flat ``[8 * T]`` grid with numpy's stable
   argsort order: ``v`` = the ``count``-th largest score (``TopK`` is used for its values
   only, so its tie order does not matter), then every cell with ``score > v`` and the
   lowest-index cells with ``score == v`` (a ``CumSum`` over the ties) up to ``count``;
4. ``new_tokens = where(chosen, pred, tokens)``, and the new tokens scattered into the
   embeddings graph's input grid (``grid_ids [R, 8, L]``: flat cell indices of both
   copies, conditional and unconditional, given by the caller), so the next step's
   embeddings read them on the device.

:func:`compose_scoring_selection` appends this graph to a scoring graph
(:mod:`.scoring`), so one session goes from the backbone's hidden states to the next
step's grid.
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
COUNTS = "counts"
PENALTY = "penalty"
NOISE = "noise"
STEPS = "steps"
TEMPERATURE = "position_temperature"
GRID_IDS = "grid_ids"
SRC_CELLS = "src_cells"
DST_CELLS = "dst_cells"
NEW_TOKENS = "new_tokens"
NEW_GRID_IDS = "new_grid_ids"
#: The new tokens of the target cells as ``[1, 8, P]`` (:mod:`.target_embeddings`).
NEW_TARGET_IDS = "new_target_ids"
_P = "select/"


def selection_nodes(*, noisy: bool, opset: int) -> tuple[list[onnx.NodeProto],
                                                        list[onnx.TensorProto]]:
    """The selection's nodes and constants (internal names prefixed ``select/``)."""
    from onnx import TensorProto, helper, numpy_helper

    def name(stem: str) -> str:
        return _P + stem

    inits = [
        numpy_helper.from_array(np.array(MASK_ID, dtype=np.int64), name("mask_id")),
        numpy_helper.from_array(np.array(-np.inf, dtype=np.float32), name("neg_inf")),
        numpy_helper.from_array(np.array([0, -1], dtype=np.int64), name("rows_shape")),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), name("flat_shape")),
        numpy_helper.from_array(np.array([1], dtype=np.int64), name("axis1")),
        numpy_helper.from_array(np.array([0], dtype=np.int64), name("axis0")),
        numpy_helper.from_array(np.array([-1, 8], dtype=np.int64), name("cells_by_book")),
        numpy_helper.from_array(np.array([1], dtype=np.int64), name("one_1d")),
        numpy_helper.from_array(np.array(1, dtype=np.int64), name("one")),
        numpy_helper.from_array(np.array(0, dtype=np.int64), name("zero")),
    ]
    node = helper.make_node
    nodes = [node("Sub", [CONF, PENALTY], [name("penalised")])]
    scores = name("penalised")
    if noisy:
        nodes += [
            node("Div", [scores, TEMPERATURE], [name("tempered")]),
            node("Unsqueeze", [STEPS, name("axis1")], [name("step_index")]),
            node("GatherND", [NOISE, name("step_index")], [name("step_noise")], batch_dims=1),
            node("Add", [name("tempered"), name("step_noise")], [name("noisy")]),
        ]
        scores = name("noisy")
    nodes += [
        node("Equal", [TOKENS, name("mask_id")], [name("is_mask")]),
        node("Where", [name("is_mask"), scores, name("neg_inf")], [name("scores")]),
        node("Reshape", [name("scores"), name("rows_shape")], [name("flat")]),
        node("Unsqueeze", [COUNTS, name("axis1")], [name("count")]),  # [B, 1]
    ]
    # k = max(1, max count): TopK's values, sorted, give the count-th largest per row.
    if opset >= 18:
        nodes.append(node("ReduceMax", [COUNTS], [name("max_count")], keepdims=1))
    else:
        nodes.append(node("ReduceMax", [COUNTS], [name("max_count")], keepdims=1, axes=[0]))
    nodes += [
        node("Max", [name("max_count"), name("one_1d")], [name("k")]),
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
        node("Shape", [TOKENS], [name("tokens_shape")]),
        node("Reshape", [name("chosen_flat"), name("tokens_shape")], [name("chosen")]),
        node("Where", [name("chosen"), PRED, TOKENS], [NEW_TOKENS]),
        # Scatter the new tokens into both copies of the embeddings' grid.
        node("Reshape", [NEW_TOKENS, name("flat_shape")], [name("tokens_flat")]),
        node("Gather", [name("tokens_flat"), SRC_CELLS], [name("updates")], axis=0),
        node("Reshape", [GRID_IDS, name("flat_shape")], [name("ids_flat")]),
        node("Unsqueeze", [DST_CELLS, name("axis1")], [name("dst_index")]),
        node("ScatterND", [name("ids_flat"), name("dst_index"), name("updates")],
             [name("new_ids_flat")]),
        node("Reshape", [name("updates"), name("cells_by_book")], [name("cells_8")]),
        node("Transpose", [name("cells_8")], [name("books_cells")], perm=[1, 0]),
        node("Unsqueeze", [name("books_cells"), name("axis0")], [NEW_TARGET_IDS]),
        node("Shape", [GRID_IDS], [name("grid_shape")]),
        node("Reshape", [name("new_ids_flat"), name("grid_shape")], [NEW_GRID_IDS]),
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
               tensor(COUNTS, TensorProto.INT64, ["B"]),
               tensor(PENALTY, TensorProto.FLOAT, [8, 1]),
               tensor(GRID_IDS, TensorProto.INT64, ["R", 8, "L"]),
               tensor(SRC_CELLS, TensorProto.INT64, ["P"]),
               tensor(DST_CELLS, TensorProto.INT64, ["P"])]
    if noisy:
        inputs += [tensor(NOISE, TensorProto.FLOAT, ["B", "S", 8, "T"]),
                   tensor(STEPS, TensorProto.INT64, ["B"]),
                   tensor(TEMPERATURE, TensorProto.FLOAT, [])]
    outputs = [tensor(NEW_TOKENS, TensorProto.INT64, ["B", 8, "T"]),
               tensor(NEW_GRID_IDS, TensorProto.INT64, ["R", 8, "L"]),
               tensor(NEW_TARGET_IDS, TensorProto.INT64, [1, 8, "Q"])]
    return inputs, outputs


def build_selection_model(*, noisy: bool, opset: int = 18) -> bytes:
    """The selection alone (inputs ``pred_tokens`` and ``confidence``), serialized."""
    from onnx import helper

    nodes, inits = selection_nodes(noisy=noisy, opset=opset)
    inputs, outputs = selection_io(noisy=noisy, with_scores=True)
    graph = helper.make_graph(nodes, "omnivoice_selection", inputs, outputs,
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="wyoming-omnivoice")
    model.ir_version = 8
    return bytes(model.SerializeToString())


def compose_scoring_selection(scoring: bytes, *, noisy: bool) -> bytes:
    """A scoring graph (:func:`.scoring.build_scoring_model`, greedy classes) followed by
    the selection: hidden states in, ``new_tokens`` and ``new_grid_ids`` out (the scorer's
    ``pred_tokens``/``confidence`` stay inside, never leave the device)."""
    import onnx

    model = onnx.ModelProto.FromString(scoring)
    graph = model.graph
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    produced = {out for n in graph.node for out in n.output}
    if PRED not in produced or CONF not in produced:
        raise ValueError("the scoring graph has no pred_tokens/confidence to select from")
    nodes, inits = selection_nodes(noisy=noisy, opset=opset)
    inputs, outputs = selection_io(noisy=noisy, with_scores=False)
    graph.node.extend(nodes)
    graph.initializer.extend(inits)
    graph.input.extend(inputs)
    del graph.output[:]
    graph.output.extend(outputs)
    return bytes(model.SerializeToString())
