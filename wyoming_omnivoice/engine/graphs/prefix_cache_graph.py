"""The prefix-cache form of a prepared backbone: attention over cached prefix keys/values.

Diffusion language models reuse the keys and values of prompt positions across steps
(Fast-dLLM, dLLM-Cache, dKV-Cache). Here every step changes only the target positions'
tokens; the prefix of a row (text, reference or anchor codes) keeps its inputs. Its keys
and values at layers >= 1 still depend on the target (the attention is bidirectional), so
reusing them is an approximation, refreshed every few steps.

:func:`prefix_cache_graph` rewrites a prepared backbone (fp32 or int8: the attention
core is the same in both) in memory, its weights left where they are:

* inputs: ``inputs_embeds [B, C, H]`` of the ``C`` computed positions (a row's columns
  ``P..L-1``), ``attention_mask [B, 1, C, L]`` (those rows of the full mask, every column),
  ``position_ids [C]`` (their rotary positions, ``P..L-1``) and per layer ``past_key_<i>``
  and ``past_value_<i>`` ``[B, kv_heads, P, head_dim]``: the cached prefix keys (after
  rotary) and values, before the grouped-query repeat;
* outputs: ``hidden_states [B, C, H]`` and per layer ``present_key_<i>`` and
  ``present_value_<i>``, the computed positions' own keys and values;
* per layer, the attention core (scores, mask, softmax, values) is rebuilt over
  ``[past ; present]`` keys and values, the grouped-query repeat done by broadcasting
  (queries ``[B, kv_heads, group, C, D]`` against keys ``[B, kv_heads, 1, D, L]``), with the
  export's own scale constants in the same places.

A refresh is the same graph with an empty past (``P = 0``, all positions computed): one
forward gives the hidden states and every position's keys and values. Any zero-size past
tensor will do (it is reshaped to ``[B, kv_heads, 0, head_dim]`` from the fresh keys'
shape), so the caller needs no head counts.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice.engine.graphs.rotary_table import (
    POSITIONS,
    drop_unused_initializers,
    live_nodes,
)

POSITION_IDS = "position_ids"
#: Graph inputs and outputs of each layer's cache (``.format(layer)``).
PAST_KEY, PAST_VALUE = "past_key_{}", "past_value_{}"
PRESENT_KEY, PRESENT_VALUE = "present_key_{}", "present_value_{}"
#: Ops a key/query path may pass between its rotary sum and the score product.
_LAYOUT_OPS = frozenset({"Reshape", "Transpose", "Expand", "Unsqueeze", "Squeeze", "Identity"})
#: Ops of the grouped-query repeat of the values (their path stops at the head transpose).
_REPEAT_OPS = frozenset({"Reshape", "Expand", "Unsqueeze", "Identity"})
_FILL = float(np.finfo(np.float32).min)


class PrefixCacheUnsupported(ValueError):
    """The backbone's attention is not in a form this rewrite understands."""


class _Index:
    """Producers, consumers and constants of a graph."""

    def __init__(self, graph: onnx.GraphProto) -> None:
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.scalars: dict[str, float] = {}
        for tensor in graph.initializer:
            if tensor.data_location != TensorProto.EXTERNAL and _size(tensor.dims) <= 1:
                self.scalars[tensor.name] = float(numpy_helper.to_array(tensor).reshape(-1)[0])
        for node in graph.node:
            if node.op_type == "Constant" and node.attribute and \
                    node.attribute[0].name == "value" and _size(node.attribute[0].t.dims) <= 1:
                value = numpy_helper.to_array(node.attribute[0].t).reshape(-1)
                if value.size == 1 and value.dtype.kind == "f":
                    self.scalars[node.output[0]] = float(value[0])
        # Values computed from the mask alone (its bias, its broadcast forms).
        self.mask_only: set[str] = set()
        for node in graph.node:
            data = [n for n in node.input if n and n not in self.scalars]
            if data and all(n == "attention_mask" or n in self.mask_only for n in data):
                self.mask_only.update(node.output)

    def scale_of(self, node: onnx.NodeProto) -> tuple[str, str] | None:
        """``(other input, scalar constant)`` of a ``Mul`` by a scalar constant."""
        if node.op_type != "Mul" or len(node.input) != 2:
            return None
        a, b = node.input
        if b in self.scalars:
            return a, b
        if a in self.scalars:
            return b, a
        return None


def _size(dims: object) -> int:
    return int(np.prod(list(dims), dtype=np.int64))  # type: ignore[call-overload]


def _walk_back(index: _Index, name: str, ops: frozenset[str], what: str
               ) -> tuple[str, list[str]]:
    """From ``name`` back through ``ops`` (and scalar ``Mul``s): the first other value, and
    the scale constants passed (nearest first)."""
    scales: list[str] = []
    for _ in range(32):
        node = index.producer.get(name)
        if node is None:
            raise PrefixCacheUnsupported(f"the {what} path reaches a graph input")
        scaled = index.scale_of(node)
        if scaled is not None:
            name = scaled[0]
            scales.append(scaled[1])
        elif node.op_type in ops:
            name = node.input[0]
        else:
            return name, scales
    raise PrefixCacheUnsupported(f"the {what} path is longer than expected")


class _Layer:
    """One attention core: where its inputs come from and where its output goes."""

    def __init__(self, index: _Index, softmax: onnx.NodeProto) -> None:
        self.score_scales: list[str] = []
        name = softmax.input[0]
        for _ in range(8):  # back from the softmax to the query-key product
            node = index.producer.get(name)
            if node is None:
                raise PrefixCacheUnsupported("a softmax input reaches a graph input")
            if node.op_type == "MatMul":
                break
            scaled = index.scale_of(node)
            if scaled is not None:
                name = scaled[0]
                self.score_scales.insert(0, scaled[1])
            elif node.op_type in ("Add", "Where"):
                data = [n for n in node.input if n not in index.mask_only
                        and n not in index.scalars]
                if len(data) != 1:
                    raise PrefixCacheUnsupported(f"{node.name}: not a mask applied to scores")
                name = data[0]
            else:
                raise PrefixCacheUnsupported(f"{node.op_type} between scores and softmax")
        else:
            raise PrefixCacheUnsupported("no query-key product before a softmax")
        query_key = node
        self.query, self.query_scales = _walk_back(index, query_key.input[0], _LAYOUT_OPS,
                                                   "query")
        self.key, self.key_scales = _walk_back(index, query_key.input[1], _LAYOUT_OPS, "key")
        readers = index.consumers.get(softmax.output[0], [])
        if len(readers) != 1 or readers[0].op_type != "MatMul" or \
                readers[0].input[0] != softmax.output[0]:
            raise PrefixCacheUnsupported(f"{softmax.name} does not feed one value product")
        value_product = readers[0]
        self.value, value_scales = _walk_back(index, value_product.input[1], _REPEAT_OPS,
                                              "value")
        if value_scales:
            raise PrefixCacheUnsupported("the values are scaled")
        for role, name in (("query", self.query), ("key", self.key)):
            if index.producer[name].op_type != "Add":
                raise PrefixCacheUnsupported(f"the {role} path does not start at a rotary sum")
        if index.producer[self.value].op_type != "Transpose":
            raise PrefixCacheUnsupported("the value path does not start at a head transpose")
        # The attention output [B, heads, S, D]: the value product, through reshapes, up to
        # the transpose back to [B, S, heads, D].
        name = value_product.output[0]
        for _ in range(4):
            readers = index.consumers.get(name, [])
            if len(readers) != 1:
                break
            if readers[0].op_type == "Transpose":
                self.output_reader, self.output = readers[0], name
                return
            if readers[0].op_type != "Reshape":
                break
            name = readers[0].output[0]
        raise PrefixCacheUnsupported(f"no head transpose after {value_product.name}")


def prefix_cache_graph(model: onnx.ModelProto) -> int:
    """Rewrite a prepared backbone (in place) into its prefix-cache form; returns the number
    of attention layers. Raises :class:`PrefixCacheUnsupported` for another form."""
    graph = model.graph
    if {i.name for i in graph.input} != {"inputs_embeds", "attention_mask"}:
        raise PrefixCacheUnsupported("not a backbone with inputs_embeds and attention_mask")
    index = _Index(graph)
    position_node = index.producer.get(POSITIONS)
    if position_node is None:
        raise PrefixCacheUnsupported("no rotary position table (not a prepared backbone)")
    softmaxes = [node for node in graph.node if node.op_type == "Softmax"]
    if not softmaxes:
        raise PrefixCacheUnsupported("no attention softmax")
    layers = [_Layer(index, node) for node in softmaxes]
    if [o.name for o in graph.output] != ["hidden_states"]:
        raise PrefixCacheUnsupported("the graph's output is not hidden_states alone")

    inits = [
        numpy_helper.from_array(np.array([-1], np.int64), "pc_minus_one"),
        numpy_helper.from_array(np.array([2], np.int64), "pc_axis2"),
        numpy_helper.from_array(np.array(_FILL, np.float32), "pc_fill"),
    ]
    shared = [
        helper.make_node("Identity", [POSITION_IDS], [POSITIONS], name="pc_positions"),
        helper.make_node("Unsqueeze", ["attention_mask", "pc_axis2"], ["pc_mask5"],
                         name="pc_mask5_node"),
    ]
    # Each layer's new core goes just before the transpose that reads its output.
    cores = {id(layer.output_reader): (number, layer) for number, layer in enumerate(layers)}
    kept: list[onnx.NodeProto] = []
    for node in graph.node:
        if node is position_node:
            kept.extend(shared)
            continue
        if id(node) in cores:
            number, layer = cores[id(node)]
            nodes, output = _cached_attention(number, layer)
            kept.extend(nodes)
            node.input[0] = output
        kept.append(node)
    outputs = {"hidden_states"} | {PRESENT_KEY.format(i) for i in range(len(layers))} \
        | {PRESENT_VALUE.format(i) for i in range(len(layers))}
    del graph.node[:]
    graph.node.extend(live_nodes(kept, outputs))
    graph.initializer.extend(inits)
    drop_unused_initializers(graph)
    del graph.value_info[:]  # stale shapes of the old cores; onnxruntime infers again
    _retype_io(graph, len(layers))
    return len(layers)


def _cached_attention(number: int, layer: _Layer) -> tuple[list[onnx.NodeProto], str]:
    """The nodes of one layer's attention over ``[past ; present]``, and its output
    ``[B, heads, C, D]``."""
    p = f"pc{number}_"
    past_key, past_value = PAST_KEY.format(number), PAST_VALUE.format(number)
    nodes = [
        # The fresh keys and values are graph outputs (the refresh keeps the prefix's).
        helper.make_node("Identity", [layer.key], [PRESENT_KEY.format(number)],
                         name=f"{p}present_key"),
        helper.make_node("Identity", [layer.value], [PRESENT_VALUE.format(number)],
                         name=f"{p}present_value"),
        # [B, kv_heads, -1, D] from the fresh keys' shape: any empty past becomes P = 0.
        helper.make_node("Shape", [layer.key], [f"{p}batch_heads"], start=0, end=2,
                         name=f"{p}batch_heads_node"),
        helper.make_node("Shape", [layer.key], [f"{p}head_dim"], start=3, end=4,
                         name=f"{p}head_dim_node"),
        helper.make_node("Shape", [layer.key], [f"{p}kv_heads"], start=1, end=2,
                         name=f"{p}kv_heads_node"),
        helper.make_node("Shape", [layer.query], [f"{p}heads"], start=1, end=2,
                         name=f"{p}heads_node"),
        helper.make_node("Shape", [layer.query], [f"{p}batch"], start=0, end=1,
                         name=f"{p}batch_node"),
        helper.make_node("Div", [f"{p}heads", f"{p}kv_heads"], [f"{p}group"],
                         name=f"{p}group_node"),
        helper.make_node("Concat", [f"{p}batch_heads", "pc_minus_one", f"{p}head_dim"],
                         [f"{p}past_shape"], axis=0, name=f"{p}past_shape_node"),
        helper.make_node("Reshape", [past_key, f"{p}past_shape"], [f"{p}past_k"],
                         name=f"{p}past_k_node"),
        helper.make_node("Reshape", [past_value, f"{p}past_shape"], [f"{p}past_v"],
                         name=f"{p}past_v_node"),
        helper.make_node("Concat", [f"{p}past_k", layer.key], [f"{p}keys"], axis=2,
                         name=f"{p}keys_node"),
        helper.make_node("Concat", [f"{p}past_v", layer.value], [f"{p}values"], axis=2,
                         name=f"{p}values_node"),
        # Queries grouped by their key head: [B, kv_heads, group, C, D].
        helper.make_node("Concat", [f"{p}batch", f"{p}kv_heads", f"{p}group", "pc_minus_one",
                                    f"{p}head_dim"], [f"{p}q5_shape"], axis=0,
                         name=f"{p}q5_shape_node"),
        helper.make_node("Concat", [f"{p}batch", f"{p}heads", "pc_minus_one", f"{p}head_dim"],
                         [f"{p}out_shape"], axis=0, name=f"{p}out_shape_node"),
    ]
    query = layer.query
    for i, scale in enumerate(reversed(layer.query_scales)):
        nodes.append(helper.make_node("Mul", [query, scale], [f"{p}q_scaled{i}"],
                                      name=f"{p}q_scale{i}"))
        query = f"{p}q_scaled{i}"
    keys = f"{p}keys"
    for i, scale in enumerate(reversed(layer.key_scales)):
        nodes.append(helper.make_node("Mul", [keys, scale], [f"{p}k_scaled{i}"],
                                      name=f"{p}k_scale{i}"))
        keys = f"{p}k_scaled{i}"
    nodes += [
        helper.make_node("Reshape", [query, f"{p}q5_shape"], [f"{p}q5"], name=f"{p}q5_node"),
        helper.make_node("Transpose", [keys], [f"{p}kt"], perm=[0, 1, 3, 2],
                         name=f"{p}kt_node"),
        helper.make_node("Unsqueeze", [f"{p}kt", "pc_axis2"], [f"{p}kt5"],
                         name=f"{p}kt5_node"),
        helper.make_node("Unsqueeze", [f"{p}values", "pc_axis2"], [f"{p}v5"],
                         name=f"{p}v5_node"),
        helper.make_node("MatMul", [f"{p}q5", f"{p}kt5"], [f"{p}scores0"],
                         name=f"{p}scores_node"),
    ]
    scores = f"{p}scores0"
    for i, scale in enumerate(layer.score_scales):
        nodes.append(helper.make_node("Mul", [scores, scale], [f"{p}scores{i + 1}"],
                                      name=f"{p}score_scale{i}"))
        scores = f"{p}scores{i + 1}"
    nodes += [
        helper.make_node("Where", ["pc_mask5", scores, "pc_fill"], [f"{p}masked"],
                         name=f"{p}mask_node"),
        helper.make_node("Softmax", [f"{p}masked"], [f"{p}probs"], axis=-1,
                         name=f"{p}softmax"),
        helper.make_node("MatMul", [f"{p}probs", f"{p}v5"], [f"{p}out5"],
                         name=f"{p}values_product"),
        helper.make_node("Reshape", [f"{p}out5", f"{p}out_shape"], [f"{p}out"],
                         name=f"{p}out_node"),
    ]
    return nodes, f"{p}out"


def _retype_io(graph: onnx.GraphProto, layers: int) -> None:
    """The new inputs and outputs, with the computed and key axes named apart."""
    embeds = next(i for i in graph.input if i.name == "inputs_embeds")
    dims = embeds.type.tensor_type.shape.dim
    hidden = dims[2].dim_value if len(dims) == 3 and dims[2].dim_value else "hidden"
    elem = embeds.type.tensor_type.elem_type
    del graph.input[:]
    graph.input.extend([
        helper.make_tensor_value_info("inputs_embeds", elem, ["batch", "computed", hidden]),
        helper.make_tensor_value_info("attention_mask", TensorProto.BOOL,
                                      ["batch", 1, "computed", "keys"]),
        helper.make_tensor_value_info(POSITION_IDS, TensorProto.INT64, ["computed"]),
    ])
    cache_dims = ["batch", "kv_heads", "past", "head_dim"]
    for i in range(layers):
        graph.input.extend([helper.make_tensor_value_info(PAST_KEY.format(i), elem, cache_dims),
                            helper.make_tensor_value_info(PAST_VALUE.format(i), elem,
                                                          cache_dims)])
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("hidden_states", elem,
                                                      ["batch", "computed", hidden]))
    present = ["batch", "kv_heads", "computed", "head_dim"]
    for i in range(layers):
        graph.output.extend([helper.make_tensor_value_info(PRESENT_KEY.format(i), elem, present),
                             helper.make_tensor_value_info(PRESENT_VALUE.format(i), elem,
                                                           present)])
