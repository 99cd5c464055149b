"""What the fused backbone is built from: each layer's weights read off the rewritten graph.

:func:`read_layout` walks the graph that every prepared variant starts from
(:func:`.prepare.rewrite_backbone`: RMSNorms already fused into
``SimplifiedLayerNormalization``, rotary cos/sin already a table) and names, per decoder
layer, the Qwen3 parts :mod:`.fused_backbone` needs: the input norm, the q/k/v projections
and the per-head q/k norms, the output projection, the post-attention norm, gate/up/down;
then the final norm, the rotary tables and the attention scale. Weights are matched by the
export's order (q, k, v, o, gate, up, down per layer) and every match is checked by the
graph's structure (q and k feed their norms, gate feeds the ``Sigmoid``, o and down feed the
residual sums), so another architecture is refused (:class:`LayoutNotFound`), never misread.

:func:`fused_problems` is the structural gate on a fused graph (usable on the GPU machine):
no shape arithmetic, no causal or grouped-query attention, only ops with CUDA kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


class LayoutNotFound(ValueError):
    """The graph is not the Qwen3-style backbone the fused variant is built from."""


@dataclass(frozen=True)
class LayerWeights:
    """Initializer names of one decoder layer (matrices as ``[in, out]``)."""

    input_norm: str
    q: str
    k: str
    v: str
    q_norm: str
    k_norm: str
    o: str
    post_norm: str
    gate: str
    up: str
    down: str


@dataclass(frozen=True)
class BackboneLayout:
    layers: tuple[LayerWeights, ...]
    final_norm: str
    eps: float
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    #: Softmax scale of ``q . k`` (the product of the export's two scalings).
    scale: float
    #: The rotary tables ``[(1,) positions, head_dim]`` (cos, sin).
    cos_table: str
    sin_table: str


def _consumers(graph: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    found: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            found.setdefault(name, []).append(node)
    return found


def _follow(name: str, consumers: dict[str, list[onnx.NodeProto]], *ops: str
            ) -> onnx.NodeProto | None:
    """The node reached from ``name`` through single-reader nodes of the given ops in
    order (each step's first output), or None."""
    node = None
    for op in ops:
        readers = [n for n in consumers.get(name, []) if n.op_type == op]
        if len(readers) != 1:
            return None
        node = readers[0]
        name = node.output[0]
    return node


def read_layout(model: onnx.ModelProto) -> BackboneLayout:
    """The backbone's parts by initializer name; raises :class:`LayoutNotFound`."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    consumers = _consumers(graph)
    norms = [n for n in graph.node if n.op_type == "SimplifiedLayerNormalization"]
    matmuls = [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in inits]
    if not norms or len(norms) % 4 != 1 or len(matmuls) != 7 * (len(norms) // 4):
        raise LayoutNotFound(f"{len(norms)} RMSNorms and {len(matmuls)} weight products "
                             "are not 4 and 7 per layer plus a final norm")
    count = len(norms) // 4

    def dims(name: str) -> list[int]:
        return [int(d) for d in inits[name].dims]

    layers = []
    for index in range(count):
        n_in, n_q, n_k, n_post = norms[4 * index: 4 * index + 4]
        q, k, v, o, gate, up, down = matmuls[7 * index: 7 * index + 7]
        checks = {
            "q feeds its norm": _follow(q.output[0], consumers, "Reshape",
                                        "SimplifiedLayerNormalization") is n_q,
            "k feeds its norm": _follow(k.output[0], consumers, "Reshape",
                                        "SimplifiedLayerNormalization") is n_k,
            "q, k, v read the input norm": {q.input[0], k.input[0], v.input[0]} ==
            {n_in.output[0]},
            "o feeds the residual sum": _follow(o.output[0], consumers, "Add") is not None,
            "gate and up read the post norm": {gate.input[0], up.input[0]} ==
            {n_post.output[0]},
            "gate feeds the SiLU": _follow(gate.output[0], consumers, "Sigmoid") is not None,
            "down reads the gated product": down.input[0] in
            {n.output[0] for n in consumers.get(up.output[0], []) if n.op_type == "Mul"},
            "down feeds the residual sum": _follow(down.output[0], consumers, "Add")
            is not None,
        }
        failed = [what for what, ok in checks.items() if not ok]
        if failed:
            raise LayoutNotFound(f"layer {index}: not the expected block ({', '.join(failed)})")
        layers.append(LayerWeights(
            input_norm=n_in.input[1], q=q.input[1], k=k.input[1], v=v.input[1],
            q_norm=n_q.input[1], k_norm=n_k.input[1], o=o.input[1], post_norm=n_post.input[1],
            gate=gate.input[1], up=up.input[1], down=down.input[1]))
    final = norms[-1]
    identity = _follow(final.output[0], consumers, "Identity")
    if {final.output[0], identity.output[0] if identity else ""}.isdisjoint(
            o.name for o in graph.output):
        raise LayoutNotFound("the last RMSNorm is not the graph's output")
    changed = [n.op_type for n in graph.node if n.op_type in _MASK_CHANGERS]
    if changed:
        raise LayoutNotFound(f"the graph changes the attention mask itself ({changed[0]}: "
                             "causal?); the fused graph would attend by the mask alone")
    first = layers[0]
    hidden = dims(first.q)[0]
    head_dim = dims(first.q_norm)[0]
    heads, kv_heads = dims(first.q)[1] // head_dim, dims(first.k)[1] // head_dim
    if heads * head_dim != dims(first.q)[1] or kv_heads * head_dim != dims(first.k)[1] or \
            heads % kv_heads or dims(first.v) != dims(first.k):
        raise LayoutNotFound(f"q {dims(first.q)}, k {dims(first.k)}, v {dims(first.v)} are "
                             f"not whole heads of {head_dim}")
    eps = {_attr(n, "epsilon") for n in norms}
    if len(eps) != 1:
        raise LayoutNotFound(f"RMSNorm epsilons differ: {sorted(eps)}")
    cos, sin = _rotary_tables(graph, inits, head_dim)
    return BackboneLayout(layers=tuple(layers), final_norm=final.input[1], eps=eps.pop(),
                          hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
                          scale=_attention_scale(graph, inits, consumers, matmuls[0]),
                          cos_table=cos, sin_table=sin)


def _attr(node: onnx.NodeProto, name: str) -> float:
    return next(float(onnx.helper.get_attribute_value(a)) for a in node.attribute
                if a.name == name)


def _rotary_tables(graph: onnx.GraphProto, inits: dict[str, onnx.TensorProto],
                   head_dim: int) -> tuple[str, str]:
    """The cos and sin tables :mod:`.rotary_table` made (gathered at the positions)."""
    tables: dict[str, str] = {}
    for node in graph.node:
        if node.op_type == "Gather" and node.input[0].endswith("_table") and \
                node.input[0] in inits:
            name = node.input[0]
            kind = "cos" if name.startswith("rotary_cos_") else \
                "sin" if name.startswith("rotary_sin_") else ""
            tables[kind] = node.input[0]
    if set(tables) != {"cos", "sin"}:
        raise LayoutNotFound("no rotary cos/sin tables (the rotary rewrite did not run)")
    for name in tables.values():
        shape = [int(d) for d in inits[name].dims]
        if len(shape) < 2 or shape[-1] != head_dim or any(d != 1 for d in shape[:-2]):
            raise LayoutNotFound(f"rotary table {name} has shape {shape}")
    return tables["cos"], tables["sin"]


def _attention_scale(graph: onnx.GraphProto, inits: dict[str, onnx.TensorProto],
                     consumers: dict[str, list[onnx.NodeProto]], q: onnx.NodeProto) -> float:
    """The first layer's softmax scale: the scalar factors of the scores product
    ``MatMul(q', k')``, on its operands (``Mul(q', a)``, ``Mul(k', b)``) and on its output
    (``Mul(scores, c)``) before the softmax."""
    producer = {out: n for n in graph.node for out in n.output}

    def scalar(node: onnx.NodeProto | None) -> float | None:
        if node is None or node.op_type != "Mul":
            return None
        constant = next((i for i in node.input if i in inits and
                         int(np.prod(inits[i].dims, dtype=np.int64)) == 1), None)
        return None if constant is None else \
            float(np.ravel(numpy_helper.to_array(inits[constant]))[0])

    seen, pending = set(), [q.output[0]]
    while pending:  # breadth first from the q projection to the first activation product
        name = pending.pop(0)
        for node in consumers.get(name, []):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.op_type == "MatMul" and node.input[1] not in inits:
                factors = [scalar(producer.get(operand)) for operand in node.input]
                after = consumers.get(node.output[0], [])
                factors.append(scalar(after[0]) if len(after) == 1 else None)
                found = [f for f in factors if f is not None]
                if not found:
                    raise LayoutNotFound("the attention scores have no scale")
                return float(np.prod(found))
            pending.extend(node.output)
    raise LayoutNotFound("no attention scores product after the q projection")


#: Ops that would make the mask the graph applies differ from its input (a causal export).
_MASK_CHANGERS = frozenset({"Trilu", "And"})


#: Ops of the fused graph, each with a CUDA kernel for float and float16 in onnxruntime
#: 1.20-1.30 (docs/OperatorKernels.md; the contrib ops in the com.microsoft domain).
CUDA_OPS = frozenset({
    "MatMul", "Split", "Reshape", "Cast", "Where", "Mul", "SimplifiedLayerNormalization",
    "SkipSimplifiedLayerNormalization", "RotaryEmbedding", "MultiHeadAttention", "QuickGelu",
})
#: Shape arithmetic that must be folded away (onnxruntime places it on the CPU provider).
SHAPE_OPS = frozenset({"Shape", "Concat", "Slice", "Gather", "Range", "Expand", "Squeeze",
                       "Unsqueeze", "ConstantOfShape", "Size"})


def fused_problems(model: onnx.ModelProto) -> list[str]:
    """Why ``model`` is not a well-formed fused backbone (empty when it is): shape chains,
    ops without a CUDA kernel, causal or grouped-query attention, RMSNorm statistics not in
    fp32, a Reshape whose shape is not a constant."""
    graph = model.graph
    inits = {t.name for t in graph.initializer}
    problems = []
    for node in graph.node:
        where = f"{node.name} ({node.op_type})"
        if node.op_type in SHAPE_OPS:
            problems.append(f"{where}: shape arithmetic")
        elif node.op_type not in CUDA_OPS:
            problems.append(f"{where}: no CUDA kernel in the fused set")
        if node.op_type == "GroupQueryAttention" or any(
                a.name == "unidirectional" and a.i for a in node.attribute):
            problems.append(f"{where}: causal attention")
        if node.op_type == "Reshape" and node.input[1] not in inits:
            problems.append(f"{where}: shape computed at run time")
        if node.op_type.endswith("SimplifiedLayerNormalization") and any(
                a.name == "stash_type" and a.i != 1 for a in node.attribute):
            problems.append(f"{where}: statistics not in fp32")
        if node.op_type == "MultiHeadAttention" and (len(node.input) < 6 or not node.input[5]):
            problems.append(f"{where}: no attention bias from the mask")
    types = value_types(model)
    for node in graph.node:
        if node.op_type == "SkipSimplifiedLayerNormalization" and \
                types.get(node.input[0]) != onnx.TensorProto.FLOAT:
            problems.append(f"{node.name} (SkipSimplifiedLayerNormalization): not float32 "
                            "(its CUDA kernel sums squares in the input type)")
    return problems


def fused_file_problems(path: str | Path) -> list[str]:
    """:func:`fused_problems` of a fused graph file (its weights not read): the GPU check's
    gate, e.g. on ``prepare_backbone(model_dir, "fp16-fused").path``."""
    return fused_problems(onnx.load(str(path), load_external_data=False))


def value_types(model: onnx.ModelProto) -> dict[str, int]:
    """Element type of every value of a fused graph: graph inputs, initializers, ``Cast``'s
    ``to``, the data operand's type through every other op of the fused set."""
    graph = model.graph
    types = {v.name: v.type.tensor_type.elem_type for v in graph.input}
    types.update((t.name, t.data_type) for t in graph.initializer)
    for node in graph.node:
        if node.op_type == "Cast":
            elem = next(a.i for a in node.attribute if a.name == "to")
        else:
            data = node.input[1] if node.op_type == "Where" else node.input[0]
            elem = types.get(data, onnx.TensorProto.UNDEFINED)
        types.update((name, elem) for name in node.output if name)
    return types
