"""The device step graph: from the backbone's hidden states to the next step's backbone
input, in one session (built with ``onnx``).

The step loop on the device runs two sessions per step: the backbone, and this graph,

1. the scoring graph (:mod:`.scoring`: gather the scored positions, the audio heads,
   guidance, MASK suppression, argmax) on the hidden states (cast to float32 first when the
   backbone returns float16);
2. the selection (:mod:`.selection_graph`): each item's count from its schedule at its own
   step, scores, a full sort, the token update, the step counters advanced;
3. the embeddings of the new target tokens: the published embeddings graph with its text
   table cut to the rows an audio code can index (:mod:`.forward.target_embeddings` cuts
   it; every target position is an audio position), on every item slot ``[1, 8, B * T]``;
4. the backbone's next input: ``where(is_target, embedded[embed_index], base)``, where
   ``base`` is the whole grid embedded once per set of items (the prompt positions never
   change) and ``embed_index``/``is_target`` say which item slot each grid position reads
   (dense and fixed per shape: no scatter, so no two writes to one cell), cast to the
   backbone's input type.

Every input and output keeps its address from one step to the next (the tokens and the step
counters in two buffers used in turn), and no node reads a device value on the host, so a
CUDA graph of it is captured once per shape and turn and replayed. Nothing goes up or down
per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wyoming_omnivoice.engine.graphs import selection_graph as sg
from wyoming_omnivoice.engine.graphs.scoring import HIDDEN

if TYPE_CHECKING:
    import onnx

BASE = "base_embeds"
EMBED_INDEX = "embed_index"
IS_TARGET = "is_target"
TARGET_MASK = "target_mask"
#: The backbone's next input.
NEXT_EMBEDS = "inputs_embeds"
_E = "embed/"
_S = "step/"


def _opset(model: onnx.ModelProto) -> int:
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
               default=0)


def _at_opset(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    import onnx.version_converter

    if _opset(model) == opset:
        return model
    return onnx.version_converter.convert_version(model, opset)


def compose_step_model(scoring: bytes, rows: onnx.ModelProto, *, noisy: bool,
                       hidden_size: int, hidden_type: int, base_type: int,
                       out_type: int) -> bytes:
    """The step graph (see the module doc), serialized.

    ``scoring``: a greedy scoring graph (:func:`.scoring.build_scoring_model`); ``rows``: the
    embeddings graph with the cut text table (inputs ``input_ids [1, 8, P]`` and
    ``audio_mask [1, P]``, output ``inputs_embeds [1, P, H]``); ``hidden_type``: the
    backbone's output element type, ``base_type``: the embeddings' output type,
    ``out_type``: the backbone's input type."""
    import onnx
    from onnx import TensorProto, compose, helper, numpy_helper

    model = onnx.ModelProto.FromString(scoring)
    opset = max(_opset(model), _opset(rows), 13)
    model, rows = _at_opset(model, opset), _at_opset(rows, opset)
    graph = model.graph
    produced = {out for n in graph.node for out in n.output}
    if sg.PRED not in produced or sg.CONF not in produced:
        raise ValueError("the scoring graph has no pred_tokens/confidence to select from")
    if [i.name for i in rows.graph.input] != ["input_ids", "audio_mask"] or \
            len(rows.graph.output) != 1:
        raise ValueError("the embeddings graph must map input_ids and audio_mask to one "
                         "output")
    if hidden_type != TensorProto.FLOAT:  # a float16 backbone's output, cast for scoring
        for node in graph.node:
            node.input[:] = [_S + "hidden_f32" if n == HIDDEN else n for n in node.input]
        graph.node.insert(0, helper.make_node("Cast", [HIDDEN], [_S + "hidden_f32"],
                                              to=TensorProto.FLOAT))
        for value in graph.input:
            if value.name == HIDDEN:
                value.type.tensor_type.elem_type = hidden_type
    nodes, inits = sg.selection_nodes(noisy=noisy)
    inputs, outputs = sg.selection_io(noisy=noisy, with_scores=False)
    rows = compose.add_prefix(rows, _E)
    rename = {_E + "input_ids": _S + "target_ids", _E + "audio_mask": TARGET_MASK}
    for node in rows.graph.node:
        node.input[:] = [rename.get(n, n) for n in node.input]
    embedded = rows.graph.output[0].name
    node = helper.make_node
    nodes += [
        node("Transpose", [sg.NEW_TOKENS], [_S + "books_first"], perm=[1, 0, 2]),
        node("Reshape", [_S + "books_first", _S + "ids_shape"], [_S + "target_ids"]),
        *rows.graph.node,
        node("Reshape", [embedded, _S + "rows_shape"], [_S + "rows"]),
        node("Gather", [_S + "rows", EMBED_INDEX], [_S + "placed"], axis=0),
        node("Where", [IS_TARGET, _S + "placed", BASE],
             [_S + "merged" if out_type != base_type else NEXT_EMBEDS]),
    ]
    if out_type != base_type:
        nodes.append(node("Cast", [_S + "merged"], [NEXT_EMBEDS], to=out_type))
    inits += [numpy_helper.from_array(np.array([1, 8, -1], np.int64), _S + "ids_shape"),
              numpy_helper.from_array(np.array([-1, hidden_size], np.int64),
                                      _S + "rows_shape"),
              *rows.graph.initializer]
    tensor = helper.make_tensor_value_info
    inputs += [tensor(BASE, base_type, ["R", "L", hidden_size]),
               tensor(EMBED_INDEX, TensorProto.INT64, ["R", "L"]),
               tensor(IS_TARGET, TensorProto.BOOL, ["R", "L", 1]),
               tensor(TARGET_MASK, TensorProto.BOOL, [1, "P"])]
    outputs.append(tensor(NEXT_EMBEDS, out_type, ["R", "L", hidden_size]))
    graph.node.extend(nodes)
    graph.initializer.extend(inits)
    graph.input.extend(inputs)
    del graph.output[:]
    graph.output.extend(outputs)
    domains = {o.domain: o for o in model.opset_import}
    for extra in rows.opset_import:
        if extra.domain not in domains and extra.domain not in ("", "ai.onnx"):
            model.opset_import.append(extra)
    model.ir_version = max(model.ir_version, rows.ir_version)
    return bytes(model.SerializeToString())
