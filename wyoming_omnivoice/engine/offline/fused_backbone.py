"""The fused backbone: each decoder layer as a handful of onnxruntime's fused kernels.

Built once from the rewritten graph every prepared variant starts from (its weights read
one at a time from the published ``.data`` file, :mod:`.fused_layout` names them). Per
layer (``T``: float for ``fp32-fused``, float16 for ``fp16-fused``)::

    SkipSimplifiedLayerNormalization(mlp_out, residual)   -> normed, residual  (fp32)
    MatMul(normed, [Wq | Wk' | Wv'])                       one product (q, k, v packed)
    Split -> q, k, v
    SimplifiedLayerNormalization(q, q_norm), (k, k_norm)  per head (stash_type=1: fp32)
    RotaryEmbedding(q), RotaryEmbedding(k)                 cos/sin cache from the table
    MultiHeadAttention(q, k, v, attention_bias)            non-causal, bias from the mask
    MatMul(Wo) -> SkipSimplifiedLayerNormalization         residual sum and post norm
    MatMul(normed, [Wgate | Wup]) -> Split -> QuickGelu(gate, alpha=1) * up -> MatMul(Wdown)

``Wk'``/``Wv'`` are the key and value projections with each key/value head's columns
repeated ``heads / kv_heads`` times (grouped-query attention's repeat done on the weights:
the same numbers as repeating the heads after projecting, as ``MultiHeadAttention`` needs
as many key heads as query heads). The attention bias is computed once from the bool mask
(``Where(mask, 0, -big)``, ``[B, 1, S, S]``, broadcast over heads): any mask the decode
builds, never a causal one. Every Reshape has a constant shape (0 and -1 entries), the
rotary positions are a constant offset 0: no node computes a shape, so on CUDA every node
has a CUDA kernel and no Memcpy is needed (CUDA graph capture).

fp16: weights, products, attention, rotary and the per-head norms in float16; the residual
stream and the residual norms (``SkipSimplifiedLayerNormalization``) stay float32, with a
Cast on each side: onnxruntime's CUDA kernel of that op accumulates its statistics in the
input type (onnxruntime#29034: all zeros for large fp16 inputs), and a float32 residual is
what the calibrated fp16 variant keeps too. Inputs and output are float32 like every variant.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice.engine.offline.fused_layout import (
    BackboneLayout,
    LayoutNotFound,
    read_layout,
)
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.runtime.probe import check_bidirectional
from wyoming_omnivoice.engine.store.external_data import load_external_tensor
from wyoming_omnivoice.progress import PREPARE, progress

__all__ = ["LayoutNotFound", "build_fused", "build_probed", "repeat_kv_columns"]

_LOGGER = logging.getLogger(__name__)

MS = "com.microsoft"
#: The additive bias of a masked-out pair. float32: -1e30 acts as the published graph's
#: float32 lowest (an allowed score is lost in its rounding, so a query row with no allowed
#: key averages every key, as there) but stays finite when a kernel multiplies scores by
#: log2(e) or the scale (the lowest would become -inf, and a row of -inf gives NaN, which
#: the masked-out keys of later layers would carry into every row as 0 * NaN). float16: a
#: value whose sum with any score stays finite in float16.
MASK_BIAS: dict[int, float] = {TensorProto.FLOAT: -1.0e30, TensorProto.FLOAT16: -1.0e4}


class _Writer:
    """Initializers written one at a time into one external-data file."""

    def __init__(self, graph_path: Path, dtype: type) -> None:
        self.location = graph_path.name + ".data"
        self.handle = (graph_path.parent / self.location).open("wb")
        self.dtype = dtype
        self.tensors: list[TensorProto] = []

    def add(self, name: str, array: np.ndarray, *, keep_type: bool = False) -> str:
        data = np.ascontiguousarray(array if keep_type else array.astype(self.dtype))
        if data.size <= 16:
            self.tensors.append(numpy_helper.from_array(data, name))
            return name
        pad = -self.handle.tell() % 64
        self.handle.write(b"\0" * pad)
        offset = self.handle.tell()
        self.handle.write(data.tobytes())
        tensor = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(data.dtype),
                             dims=data.shape, data_location=TensorProto.EXTERNAL)
        for key, value in (("location", self.location), ("offset", str(offset)),
                           ("length", str(data.nbytes))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        self.tensors.append(tensor)
        return name

    def close(self) -> None:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()


class _Reader:
    """Initializers of the rewritten graph as arrays (external ones read one at a time)."""

    def __init__(self, model: onnx.ModelProto, source_dir: Path) -> None:
        self.inits = {t.name: t for t in model.graph.initializer}
        self.source_dir = source_dir

    def __call__(self, name: str) -> np.ndarray:
        tensor = TensorProto()
        tensor.CopyFrom(self.inits[name])
        if tensor.data_location == TensorProto.EXTERNAL:
            load_external_tensor(tensor, self.source_dir)
        array: np.ndarray = numpy_helper.to_array(tensor)
        return array


def repeat_kv_columns(weight: np.ndarray, head_dim: int, repeat: int) -> np.ndarray:
    """``[in, kv_heads * head_dim]`` -> ``[in, kv_heads * repeat * head_dim]``, each head's
    columns ``repeat`` times in a row (key/value head ``h`` serves query heads
    ``h * repeat .. h * repeat + repeat - 1``, as the export's repeat_kv)."""
    rows, cols = weight.shape
    heads = weight.reshape(rows, cols // head_dim, 1, head_dim)
    return np.broadcast_to(heads, (rows, cols // head_dim, repeat, head_dim)).reshape(rows, -1)


def build_fused(model: onnx.ModelProto, source_dir: Path, target: Path,
                dtype: str = "fp32", keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Write the fused backbone of the rewritten ``model`` (external weights in
    ``source_dir``) to ``target`` (weights beside it in ``<name>.data``); returns what the
    preparation records. ``dtype``: ``fp32`` or ``fp16``; ``keep``: the products left
    float32 in an fp16 graph (``l<index>.<product>``, :mod:`.fused_calibrate`)."""
    if dtype not in ("fp32", "fp16"):
        raise ValueError(f"dtype must be fp32 or fp16, not {dtype!r}")
    layout = read_layout(model)
    elem = TensorProto.FLOAT16 if dtype == "fp16" else TensorProto.FLOAT
    writer = _Writer(target, np.float16 if dtype == "fp16" else np.float32)
    try:
        with progress(PREPARE, f"Preparing the {dtype}-fused backbone", len(layout.layers),
                      unit="layers", logger=_LOGGER) as work:
            nodes = _emit(layout, _Reader(model, source_dir), writer, elem, keep,
                          work.advance)
    finally:
        writer.close()
    graph = helper.make_graph(
        nodes, "fused_backbone",
        [_io(model, "inputs_embeds"), _io(model, "attention_mask")],
        [_io(model, "hidden_states")], initializer=writer.tensors)
    fused = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid(MS, 1)])
    fused.ir_version = min(model.ir_version, 9) or 9
    onnx.save_model(fused, str(target))
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    _LOGGER.info("Fused backbone: %d layers, %d nodes (%s)", len(layout.layers), len(nodes),
                 ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return {"fused_nodes": len(nodes), "fused_ops": counts, "layers": len(layout.layers),
            "heads": layout.heads, "kv_heads": layout.kv_heads, "head_dim": layout.head_dim,
            "kept_fp32": sorted(keep)}


def build_probed(model: onnx.ModelProto, source_dir: Path, variant: str, target: Path,
                 keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """:func:`build_fused` for a variant name (``fp32-fused``, ``fp16-fused``), then the
    bidirectionality probe on the fused graph (CPU provider, weights not prepacked).
    onnxruntime 1.32's CPU provider runs both dtypes; one without a float16 kernel for a
    fused op skips the fp16 graph's probe (the source's first block is probed before)."""
    info = build_fused(model, source_dir, target, variant.split("-")[0], keep)
    try:
        graph = Graph(target, choose_providers("cpu"), external_data_dir=target.parent,
                      prepack=False)
    except Exception as err:  # onnxruntime's errors have no common type
        if variant == "fp32-fused":
            raise
        _LOGGER.info("The CPU provider cannot run the %s graph (%s); its probe is left to "
                     "the source's first block", variant, str(err).splitlines()[0])
        return {**info, "fused_probe": "skipped"}
    hidden = graph.inputs["inputs_embeds"].shape[-1]
    check_bidirectional(graph, int(hidden))
    return {**info, "fused_probe": "passed"}


def _io(model: onnx.ModelProto, name: str) -> onnx.ValueInfoProto:
    found = [v for v in (*model.graph.input, *model.graph.output) if v.name == name]
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(found[0])
    del copy.metadata_props[:]
    return copy


def _emit(layout: BackboneLayout, read: _Reader, out: _Writer, elem: int,
          keep: frozenset[str] = frozenset(),
          layer_done: Callable[[], None] = lambda: None) -> list[onnx.NodeProto]:
    half = elem == TensorProto.FLOAT16
    wide: set[str] = set()  # float32 outputs of products kept float32 (fp16 graph)
    nodes: list[onnx.NodeProto] = []
    heads, head_dim = layout.heads, layout.head_dim
    repeat = heads // layout.kv_heads

    def node(op: str, inputs: list[str], outputs: list[str], name: str,
             **attrs: Any) -> list[str]:
        nodes.append(helper.make_node(op, inputs, outputs, name=name,
                                      domain=MS if op in _CONTRIB else "", **attrs))
        return outputs

    def cast(name: str, to: int) -> str:
        return node("Cast", [name], [f"{name}_as{to}"], f"{name}_cast{to}", to=to)[0]

    def fp32(name: str) -> str:
        return cast(name, TensorProto.FLOAT) if half and name not in wide else name

    def compute(name: str) -> str:
        return cast(name, TensorProto.FLOAT16) if half else name

    def product(name: str, x: str, weight: np.ndarray, *, fp32_in: str | None = None,
                to_t: bool = True) -> str:
        """``x @ weight`` as MatMul ``name``; kept float32 (``keep``): the float32 input
        (``fp32_in``, else ``x`` cast up), a float32 weight, the output cast back to ``T``
        when ``to_t`` (else left float32 for a float32 reader)."""
        if not half or name not in keep:
            w = out.add(name, weight)
            return node("MatMul", [x, w], [f"{name}_out"], name)[0]
        w = out.add(name, weight.astype(np.float32), keep_type=True)
        result = node("MatMul", [fp32_in or fp32(x), w], [f"{name}_out"], name)[0]
        wide.add(result)
        return compute(result) if to_t else result

    # Shared: the attention bias, the rotary caches and positions, the constant shapes.
    zero = out.add("mask_keep", np.zeros((), np.float32))
    low = out.add("mask_drop", np.array(MASK_BIAS[elem], np.float32))  # in T
    bias = node("Where", ["attention_mask", zero, low], ["attention_bias"], "attention_bias")[0]
    cos = read(layout.cos_table).reshape(-1, head_dim)
    sin = read(layout.sin_table).reshape(-1, head_dim)
    if not (np.array_equal(cos[:, :head_dim // 2], cos[:, head_dim // 2:]) and
            np.array_equal(sin[:, :head_dim // 2], sin[:, head_dim // 2:])):
        raise ValueError("rotary tables are not rotate-half tables (cos/sin halves differ)")
    cos_cache = out.add("rotary_cos_cache", cos[:, :head_dim // 2])
    sin_cache = out.add("rotary_sin_cache", sin[:, :head_dim // 2])
    position = out.add("rotary_offset", np.zeros(1, np.int64), keep_type=True)
    per_head = out.add("shape_per_head", np.array([0, 0, -1, head_dim], np.int64),
                       keep_type=True)
    merged = out.add("shape_merged", np.array([0, 0, -1], np.int64), keep_type=True)

    eps = layout.eps
    mlp_out = ""
    wide_bias: list[str] = []
    residual = "inputs_embeds"
    for index, layer in enumerate(layout.layers):
        p = f"l{index}"
        gamma = out.add(f"{p}.input_norm", read(layer.input_norm), keep_type=True)
        if index == 0:
            normed = node("SimplifiedLayerNormalization", [residual, gamma], [f"{p}.normed"],
                          f"{p}.input_norm", axis=-1, epsilon=eps, stash_type=1)[0]
        else:
            normed, residual = _skip_norm(node, fp32(mlp_out), residual, gamma, p, "input",
                                          eps)
        qkv = product(f"{p}.qkv", compute(normed), np.concatenate(
            [read(layer.q), repeat_kv_columns(read(layer.k), head_dim, repeat),
             repeat_kv_columns(read(layer.v), head_dim, repeat)], axis=1), fp32_in=normed)
        q, k, v = node("Split", [qkv], [f"{p}.q", f"{p}.k", f"{p}.v"], f"{p}.split_qkv",
                       axis=-1, num_outputs=3)
        rotated = []
        for part, norm_name in ((q, layer.q_norm), (k, layer.k_norm)):
            norm_gamma = out.add(f"{part}_norm.weight", read(norm_name))
            heads_view = node("Reshape", [part, per_head], [f"{part}_heads"],
                              f"{part}_heads")[0]
            normed_heads = node("SimplifiedLayerNormalization", [heads_view, norm_gamma],
                                [f"{part}_normed"], f"{part}_norm", axis=-1, epsilon=eps,
                                stash_type=1)[0]
            flat = node("Reshape", [normed_heads, merged], [f"{part}_flat"],
                        f"{part}_flat")[0]
            rotated.append(node("RotaryEmbedding", [flat, position, cos_cache, sin_cache],
                                [f"{part}_rotary"], f"{part}_rotary", interleaved=0,
                                num_heads=heads)[0])
        if half and f"{p}.attention" in keep:  # float32 attention, float32 bias
            if not wide_bias:
                wide_bias.append(node("Where", ["attention_mask", zero, out.add(
                    "mask_drop_fp32", np.array(MASK_BIAS[TensorProto.FLOAT], np.float32),
                    keep_type=True)], ["attention_bias_fp32"], "attention_bias_fp32")[0])
            attended = compute(node(
                "MultiHeadAttention", [fp32(rotated[0]), fp32(rotated[1]), fp32(v), "", "",
                                       wide_bias[0]], [f"{p}.attention"], f"{p}.attention",
                num_heads=heads, scale=layout.scale)[0])
        else:
            attended = node("MultiHeadAttention", [rotated[0], rotated[1], v, "", "", bias],
                            [f"{p}.attention"], f"{p}.attention", num_heads=heads,
                            scale=layout.scale)[0]
        attn_out = product(f"{p}.o", attended, read(layer.o), to_t=False)
        gamma = out.add(f"{p}.post_norm", read(layer.post_norm), keep_type=True)
        normed, residual = _skip_norm(node, fp32(attn_out), residual, gamma, p, "post", eps)
        gate_up = product(f"{p}.gate_up", compute(normed),
                          np.concatenate([read(layer.gate), read(layer.up)], axis=1),
                          fp32_in=normed)
        gate, up = node("Split", [gate_up], [f"{p}.gate", f"{p}.up"], f"{p}.split_gate_up",
                        axis=-1, num_outputs=2)
        silu = node("QuickGelu", [gate], [f"{p}.silu"], f"{p}.silu", alpha=1.0)[0]
        gated = node("Mul", [silu, up], [f"{p}.gated"], f"{p}.gated")[0]
        mlp_out = product(f"{p}.down", gated, read(layer.down), to_t=False)
        layer_done()
    gamma = out.add("final_norm", read(layout.final_norm), keep_type=True)
    node("SkipSimplifiedLayerNormalization", [fp32(mlp_out), residual, gamma],
         ["hidden_states"], "final_norm", epsilon=eps)
    return nodes


def _skip_norm(node: Any, addend: str, residual: str, gamma: str, prefix: str, which: str,
               eps: float) -> tuple[str, str]:
    """``residual + addend`` and its RMSNorm, in float32 (one fused kernel)."""
    normed, _, _, total = node("SkipSimplifiedLayerNormalization", [addend, residual, gamma],
                               [f"{prefix}.{which}_normed", "", "", f"{prefix}.{which}_sum"],
                               f"{prefix}.{which}_norm", epsilon=eps)
    return normed, total


_CONTRIB = frozenset({"SkipSimplifiedLayerNormalization", "RotaryEmbedding",
                      "MultiHeadAttention", "QuickGelu"})

