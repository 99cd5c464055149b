"""Rotary embedding from a table: no shape-derived computation feeds the backbone's compute.

The published backbone computes its rotary cos/sin on every run from the input's shape:
``Shape -> Range -> Cast -> Mul(inv_freq) -> Concat -> Cos/Sin``. onnxruntime runs shape
computations on the CPU, so on CUDA that chain needs Memcpy nodes, and onnxruntime refuses
CUDA graph capture when a graph has any.

:func:`tabulate_rotary` evaluates that chain once, with onnxruntime's CPU kernels (so the
values are the ones the published graph computes on the CPU), for ``max_positions``
positions, stores cos and sin as initializers and replaces each chain by a ``Gather`` of the
table at positions ``0..S-1``. The positions come from the attention mask's data, not its
shape: ``CumSum(exclusive)`` over a row of ones made from the mask (``Or(m, Not(m))``), all
ops with CUDA kernels. The dead chain is removed. Shape ops that only feed ``Reshape`` or
``Expand`` shape operands stay: those operands live on the CPU anyway and need no copy.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice.engine.constants import MAX_POSITIONS
from wyoming_omnivoice.engine.store.external_data import load_external_tensor

_LOGGER = logging.getLogger(__name__)

#: Longest sequence the prepared backbone accepts (a prompt with a 30 s reference and a
#: 30 s target is about 1600 positions).
#: Ops that may appear in the position chain (anything else means it is not that chain).
_CHAIN_OPS = frozenset({
    "Shape", "Squeeze", "Unsqueeze", "Gather", "Slice", "Range", "Cast", "Mul", "Concat",
    "Cos", "Sin", "Constant", "Reshape", "Expand", "Transpose", "Div", "Add", "Sub",
    "MatMul", "Identity", "CastLike",
})
POSITIONS = "rotary_positions"


class RotaryChainNotFound(ValueError):
    """The graph has no shape-derived cos/sin chain this rewrite understands."""


def _producers(graph: onnx.GraphProto) -> dict[str, onnx.NodeProto]:
    return {out: node for node in graph.node for out in node.output}


def _ancestors(graph: onnx.GraphProto, outputs: Iterable[str]) -> list[onnx.NodeProto]:
    """Nodes that ``outputs`` depend on, in graph order."""
    producer = _producers(graph)
    seen: set[int] = set()
    stack = [producer[name] for name in outputs if name in producer]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(producer[name] for name in node.input if name in producer)
    return [node for node in graph.node if id(node) in seen]


def shape_derived_values(graph: onnx.GraphProto) -> set[str]:
    """Every value computed (transitively) from a ``Shape`` output, excluding values that
    also depend on a graph input's data. Used by the structural test and the rewrite."""
    graph_inputs = {i.name for i in graph.input}
    from_shape: set[str] = set()
    from_data: set[str] = set(graph_inputs)
    for node in graph.node:
        if node.op_type == "Shape":
            from_shape.update(node.output)
            continue
        data = any(name in from_data for name in node.input)
        shaped = any(name in from_shape for name in node.input)
        if data:
            from_data.update(node.output)
        elif shaped:
            from_shape.update(node.output)
    return from_shape


def _find_chains(graph: onnx.GraphProto) -> list[onnx.NodeProto]:
    """The Cos/Sin nodes fed by a shape-derived chain."""
    derived = shape_derived_values(graph)
    return [node for node in graph.node
            if node.op_type in ("Cos", "Sin") and node.input[0] in derived]


def _evaluate(model: onnx.ModelProto, outputs: list[str], source_dir: Path | None,
              max_positions: int) -> dict[str, np.ndarray]:
    """Run the chain alone on onnxruntime's CPU provider for ``max_positions`` positions."""
    import onnxruntime

    graph = model.graph
    nodes = _ancestors(graph, outputs)
    if any(node.op_type not in _CHAIN_OPS for node in nodes):
        odd = sorted({n.op_type for n in nodes if n.op_type not in _CHAIN_OPS})
        raise RotaryChainNotFound(f"cos/sin chain has unexpected ops {odd}")
    used = {name for node in nodes for name in node.input}
    inputs = [i for i in graph.input if i.name in used]
    initializers = []
    for tensor in graph.initializer:
        if tensor.name not in used:
            continue
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        if copy.data_location == TensorProto.EXTERNAL:
            if source_dir is None:
                raise RotaryChainNotFound(f"{tensor.name} is external and no folder given")
            load_external_tensor(copy, source_dir)
        initializers.append(copy)
    # Only the inputs' shapes matter to the chain: declare every dim free, feed 1 but the
    # sequence axes (each input's dims named like the sequence length).
    feeds: dict[str, np.ndarray] = {}
    free_inputs = []
    for info in inputs:
        dims = info.type.tensor_type.shape.dim
        shape = [max_positions if d.dim_param in ("seq", "sequence_length", "seq_len")
                 else 1 for d in dims]
        if max_positions not in shape:
            raise RotaryChainNotFound(f"input {info.name} has no named sequence axis")
        if np.prod(shape, dtype=np.int64) > 64 * max_positions:
            raise RotaryChainNotFound(f"input {info.name} would be too large to evaluate")
        elem = info.type.tensor_type.elem_type
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        feeds[info.name] = np.zeros(shape, dtype=dtype)
        free_inputs.append(helper.make_tensor_value_info(info.name, elem, [None] * len(dims)))
    sub = helper.make_graph([_copy(n) for n in nodes], "rotary_chain", free_inputs, [],
                            initializer=initializers)
    sub_model = helper.make_model(sub, opset_imports=list(model.opset_import))
    sub_model.ir_version = model.ir_version
    inferred = onnx.shape_inference.infer_shapes(sub_model)
    types = {v.name: v.type.tensor_type.elem_type for v in inferred.graph.value_info}
    sub_model.graph.output.extend(
        helper.make_tensor_value_info(name, types.get(name, TensorProto.FLOAT), None)
        for name in outputs)
    session = onnxruntime.InferenceSession(sub_model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    values = session.run(outputs, feeds)
    return dict(zip(outputs, values, strict=True))


def _copy(node: onnx.NodeProto) -> onnx.NodeProto:
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    return copy


def _mask_input(graph: onnx.GraphProto) -> onnx.ValueInfoProto:
    for info in graph.input:
        if info.name == "attention_mask" and info.type.tensor_type.elem_type == TensorProto.BOOL:
            found: onnx.ValueInfoProto = info
            return found
    raise RotaryChainNotFound("no bool attention_mask input to derive positions from")


def _position_nodes(mask: onnx.ValueInfoProto) -> tuple[list[onnx.NodeProto],
                                                        list[onnx.TensorProto]]:
    """Nodes computing int64 ``[S]`` positions 0..S-1 from the mask's values."""
    rank = len(mask.type.tensor_type.shape.dim)
    zero = numpy_helper.from_array(np.array(0, dtype=np.int64), f"{POSITIONS}_zero")
    nodes = []
    row = mask.name
    for step in range(rank - 1):  # [B, 1, S, S] -> [S]
        out = f"{POSITIONS}_row{step}"
        nodes.append(helper.make_node("Gather", [row, zero.name], [out], axis=0,
                                      name=f"{out}_gather"))
        row = out
    nodes += [
        helper.make_node("Not", [row], [f"{POSITIONS}_not"], name=f"{POSITIONS}_not_node"),
        helper.make_node("Or", [row, f"{POSITIONS}_not"], [f"{POSITIONS}_all"],
                         name=f"{POSITIONS}_or_node"),
        helper.make_node("Cast", [f"{POSITIONS}_all"], [f"{POSITIONS}_ones"],
                         to=TensorProto.INT64, name=f"{POSITIONS}_cast_node"),
        helper.make_node("CumSum", [f"{POSITIONS}_ones", zero.name], [POSITIONS],
                         exclusive=1, name=f"{POSITIONS}_cumsum_node"),
    ]
    return nodes, [zero]


def tabulate_rotary(model: onnx.ModelProto, source_dir: Path | None = None,
                    max_positions: int = MAX_POSITIONS) -> int:
    """Replace the shape-derived cos/sin chains by table lookups; returns tables made.

    ``source_dir`` is where external initializers of the chain (``inv_freq``) are read from.
    Raises :class:`RotaryChainNotFound` when the graph has no such chain.
    """
    graph = model.graph
    chains = _find_chains(graph)
    if not chains:
        raise RotaryChainNotFound("no Cos/Sin computed from a Shape")
    outputs = [node.output[0] for node in chains]
    tables = _evaluate(model, outputs, source_dir, max_positions)
    mask = _mask_input(graph)
    new_nodes, new_inits = _position_nodes(mask)
    replaced: dict[str, onnx.NodeProto] = {}
    for node in chains:
        table = tables[node.output[0]]
        axes = [a for a, size in enumerate(table.shape) if size == max_positions]
        if len(axes) != 1:
            raise RotaryChainNotFound(f"{node.name}: no single position axis in "
                                      f"{list(table.shape)}")
        # Named by what it holds (rotary_cos_/rotary_sin_), whatever the export called
        # the node it replaces.
        name = f"rotary_{node.op_type.lower()}_{node.output[0]}_table"
        new_inits.append(numpy_helper.from_array(np.ascontiguousarray(table), name))
        replaced[node.output[0]] = helper.make_node(
            "Gather", [name, POSITIONS], [node.output[0]], axis=axes[0],
            name=f"{node.name}_table_gather")
    chain_ids = {id(node) for node in chains}
    kept: list[onnx.NodeProto] = []
    inserted = False
    for node in graph.node:
        if id(node) in chain_ids:
            if not inserted:
                kept.extend(new_nodes)
                inserted = True
            kept.append(replaced[node.output[0]])
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(live_nodes(kept, {o.name for o in graph.output}))
    graph.initializer.extend(new_inits)
    drop_unused_initializers(graph)
    del graph.value_info[:]  # stale for the removed chain; onnxruntime infers again
    _LOGGER.debug("Rotary: %d cos/sin chains replaced by %d-position tables", len(chains),
                  max_positions)
    return len(chains)


def live_nodes(nodes: list[onnx.NodeProto], outputs: set[str]) -> list[onnx.NodeProto]:
    """``nodes`` without those whose outputs nothing reads (repeated until stable)."""
    while True:
        used = {name for node in nodes for name in node.input} | outputs
        alive = [n for n in nodes if any(out in used for out in n.output)]
        if len(alive) == len(nodes):
            return alive
        nodes = alive


def drop_unused_initializers(graph: onnx.GraphProto) -> None:
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    if len(kept) != len(graph.initializer):
        del graph.initializer[:]
        graph.initializer.extend(kept)


#: Inputs that hold a shape, not data: onnxruntime's CUDA kernels read them on the CPU.
SHAPE_OPERANDS = frozenset({("Reshape", 1), ("Expand", 1)})


def shape_values_feeding_compute(graph: onnx.GraphProto) -> list[str]:
    """``node (op) input k`` for every compute input fed by a shape-derived value.

    Shape-derived values may flow through shape arithmetic (whose outputs are shape-derived
    too) and end in the shape operand of ``Reshape``/``Expand``; anywhere else they would
    feed data computed on the CPU into device compute (a Memcpy on CUDA).
    """
    derived = shape_derived_values(graph)
    found = []
    for node in graph.node:
        if node.op_type == "Shape" or all(out in derived for out in node.output):
            continue
        for index, name in enumerate(node.input):
            if name in derived and (node.op_type, index) not in SHAPE_OPERANDS:
                found.append(f"{node.name} ({node.op_type}) input {index}")
    return found
