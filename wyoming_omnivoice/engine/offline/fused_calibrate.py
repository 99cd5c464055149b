"""fp16-fused calibrated like ``fp16``: the products whose ranges come near fp16's limit
stay float32.

:mod:`.fused_backbone` computes each layer's products in float16 (``T``): the packed q/k/v
projection, the attention, the output projection, the packed gate/up projection and the
down projection. A value past 65504 becomes ``inf`` there, and the next norm turns the
residual stream into NaN or zeros with no error. So, as :mod:`.fp16_calibrate` does for
``fp16``, the rewritten float32 graph the fused one is built from runs on the calibration
feeds (:mod:`.calibration_prompts`, the CPU provider) and the largest absolute value of
every tensor each product reads or writes is recorded (:func:`.fp16_ranges.measure_ranges`;
the weights from their values): per layer the input norm's output and the q, k and v
projections; the attention's q . k scores and its output; the output projection's input and
output; gate, up and their input; the gated product and the down projection's output. A
product with a tensor at ``margin * 65504`` or beyond (or not finite) is kept float32 in
the fused graph (its weight stored float32, its input cast up and its output cast back
down), and :class:`FusedCalibration` reports which, with the value that kept it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from wyoming_omnivoice.engine.offline.fp16_calibrate import DEFAULT_MARGIN, FP16_MAX
from wyoming_omnivoice.engine.offline.fp16_ranges import measure_ranges
from wyoming_omnivoice.engine.offline.fused_layout import BackboneLayout

_LOGGER = logging.getLogger(__name__)

#: The products of a layer, in the fused graph's names (``l<index>.<product>``).
PRODUCTS = ("qkv", "attention", "o", "gate_up", "down")


@dataclass(frozen=True)
class KeptProduct:
    """A product left in float32, and the measurement that kept it there."""

    name: str
    tensor: str
    max_abs: float
    reason: str


@dataclass
class FusedCalibration:
    """What the calibration of ``fp16-fused`` found."""

    products: int = 0
    tensors: int = 0
    feeds: int = 0
    limit: float = 0.0
    #: Largest absolute value among the tensors of the products left in float16.
    fp16_max_abs: float = 0.0
    seconds: float = 0.0
    kept: list[KeptProduct] = field(default_factory=list)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(k.name for k in self.kept)

    def summary(self, limit: int = 12) -> str:
        lines = [f"fp16-fused calibration: {self.products} products ({self.tensors} tensors) "
                 f"on {self.feeds} feeds in {self.seconds:.1f} s; limit |x| <= "
                 f"{self.limit:.6g}; largest fp16 tensor |x| {self.fp16_max_abs:.4g}; "
                 f"{len(self.kept)} products kept fp32"]
        lines += [f"  kept fp32: {k.name}: {k.reason} [{k.tensor} |x| = {k.max_abs:.4g}]"
                  for k in self.kept[:limit]]
        if len(self.kept) > limit:
            lines.append(f"  ... and {len(self.kept) - limit} more")
        return "\n".join(lines)


def product_tensors(model: onnx.ModelProto, layout: BackboneLayout) -> dict[str, list[str]]:
    """``l<i>.<product>`` -> the rewritten graph's tensors that product reads or writes."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    def product(weight: str) -> list[str]:
        (matmul,) = [n for n in consumers[weight] if n.op_type == "MatMul"]
        return [matmul.input[0], weight, matmul.output[0]]

    found: dict[str, list[str]] = {}
    softmaxes = [n for n in graph.node if n.op_type == "Softmax"]
    for index, layer in enumerate(layout.layers):
        p = f"l{index}"
        found[f"{p}.qkv"] = [*product(layer.q), *product(layer.k), *product(layer.v)]
        found[f"{p}.o"] = product(layer.o)
        found[f"{p}.gate_up"] = [*product(layer.gate), *product(layer.up)]
        found[f"{p}.down"] = product(layer.down)
        if len(softmaxes) == len(layout.layers):
            found[f"{p}.attention"] = _attention(softmaxes[index], producer, consumers)
    return {name: list(dict.fromkeys(tensors)) for name, tensors in found.items()}


def _attention(softmax: onnx.NodeProto, producer: Mapping[str, onnx.NodeProto],
               consumers: Mapping[str, list[onnx.NodeProto]]) -> list[str]:
    """The q . k product before the softmax (its inputs and output: the nearest product
    of two computed tensors above it) and the product of the weights with the values
    after it."""
    tensors: list[str] = []
    frontier, seen = [softmax.input[0]], set()
    for _ in range(6):
        found = [producer[n] for n in frontier if n in producer and
                 producer[n].op_type == "MatMul" and
                 all(i in producer for i in producer[n].input)]
        if found:
            tensors += [*found[0].input, found[0].output[0]]
            break
        seen.update(frontier)
        frontier = [i for n in frontier if n in producer for i in producer[n].input
                    if i not in seen]
    after = softmax.output[0]
    for node in consumers.get(after, []):
        if node.op_type == "Cast":
            node = next(iter(consumers.get(node.output[0], [])), node)
        if node.op_type == "MatMul":
            tensors.append(node.output[0])
    return tensors


def calibrate_fused(model: onnx.ModelProto, source_dir: Path, layout: BackboneLayout,
                    feeds: Sequence[Mapping[str, np.ndarray]], *,
                    margin: float = DEFAULT_MARGIN) -> FusedCalibration:
    """The products of ``model`` (the rewritten graph, weights in ``source_dir`` or in
    memory) to keep float32 in ``fp16-fused`` (see the module doc)."""
    if not feeds:
        raise ValueError("fp16-fused calibration needs at least one feed")
    started = time.perf_counter()
    products = product_tensors(model, layout)
    tensors = list(dict.fromkeys(t for names in products.values() for t in names))
    ranges = measure_ranges(model, tensors, feeds, data_dir=source_dir)
    limit = margin * FP16_MAX
    result = FusedCalibration(products=len(products), tensors=len(tensors), feeds=len(feeds),
                              limit=limit)
    weights = {t.name for t in model.graph.initializer}
    for name, names in products.items():
        worst = max(((ranges.get(t, (0.0, True)), t) for t in names),
                    key=lambda item: (not item[0][1], item[0][0]))
        (peak, finite), tensor = worst
        if finite and peak <= limit:
            result.fp16_max_abs = max(result.fp16_max_abs, peak)
            continue
        where = "weight" if tensor in weights else "tensor"
        reason = (f"{where} not finite in fp32" if not finite
                  else f"{where} |x| {peak:.4g} > {limit:.4g}")
        result.kept.append(KeptProduct(name, tensor, peak, reason))
    result.seconds = time.perf_counter() - started
    _LOGGER.info("%s", result.summary())
    return result
