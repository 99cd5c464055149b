"""Calibrated mixed-precision fp16 conversion of the backbone: no silent overflow.

fp16 holds magnitudes up to 65504. A graph converted op by op runs fine until one
activation passes that on some prompt: the value becomes ``inf``, the next norm turns it into
NaN or zeros, and the backbone returns garbage with no error. So the pass measures first:

1. **Plan.** Matrix products and attention (``MatMul``, ``Gemm``, ``Conv``, ``Einsum``, fused
   ``MultiHeadAttention`` ...) are fp16 candidates; norms (``SimplifiedLayerNormalization``
   and the ``Pow/ReduceMean/Sqrt/Reciprocal`` chain), ``Softmax``, transcendental ops and
   ``Cast`` are fp32; every other op follows its float data inputs (fp32 when any of them is
   fp32). The residual stream (an ``Add`` of an fp32 input and a projection) therefore stays
   fp32, and the fp16 region is the projections, the attention products and the gated MLP.
   Graph inputs and outputs stay fp32. (:mod:`.fp16_plan`.)
2. **Calibrate.** The fp32 graph runs on onnxruntime's CPU provider on the calibration feeds
   and the largest absolute value of every float tensor a candidate node reads or writes
   is recorded (:mod:`.fp16_ranges`: scalar probes, memory of one forward). Constant inputs
   (weights) are checked from their values.
3. **Keep.** A candidate whose inputs or outputs reach ``margin * 65504`` (or are not finite)
   is kept fp32, and the plan is redone so its followers follow it. With ``margin = 0.25`` a
   tensor may grow 4x beyond the largest value seen on the calibration prompts before it
   overflows. Activation maxima move with the prompt (length, language, voice, diffusion
   step), so some headroom is needed over a dozen prompts; fp16's relative precision is the
   same at 16000 as at 1, so headroom costs no accuracy, only the fp16 speed of nodes that
   come within 4x of the limit (none of the 588 candidates on the real-size random model,
   whose largest fp16 activation is 5.5).
4. **Rewrite.** Casts go where a value crosses between the regions; weights read only by
   fp16 nodes are stored fp16. Additive attention biases of fused attention ops are clipped
   to +-65504 before their cast (a -3.4e38 mask fill must become -65504, not -inf).

:class:`Fp16Report` says what was converted and what was kept fp32, with the value that kept
it. The model is changed in place; its weights are in memory, or on disk (``data_dir``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper

from wyoming_omnivoice.engine.offline.fp16_plan import (
    FLOAT,
    HALF,
    checked_tensors,
    constant_names,
    float_tensors,
    mask_inputs,
    name_nodes,
    plan_precision,
)
from wyoming_omnivoice.engine.offline.fp16_ranges import (
    add_missing_domains,
    measure_ranges,
    on_disk,
)

_LOGGER = logging.getLogger(__name__)

FP16_MAX = float(np.finfo(np.float16).max)
#: Default fraction of fp16's range a calibrated activation may reach (4x headroom).
DEFAULT_MARGIN = 0.25

@dataclass(frozen=True)
class KeptNode:
    """A candidate node left in fp32, and the measurement that kept it there."""

    name: str
    op: str
    tensor: str
    max_abs: float
    reason: str


@dataclass
class Fp16Report:
    """What :func:`convert_to_fp16` did."""

    fp16_nodes: int = 0
    fp32_nodes: int = 0
    candidates: int = 0
    casts: int = 0
    fp16_weights: int = 0
    fp32_weights: int = 0
    limit: float = 0.0
    calibration_feeds: int = 0
    tensors_checked: int = 0
    #: Largest absolute value among the tensors of the nodes converted to fp16.
    fp16_max_abs: float = 0.0
    seconds: float = 0.0
    kept: list[KeptNode] = field(default_factory=list)

    @property
    def converted(self) -> int:
        return self.fp16_nodes

    def summary(self, limit: int = 12) -> str:
        lines = [
            f"fp16 conversion: {self.fp16_nodes} nodes fp16, {self.fp32_nodes} fp32, "
            f"{self.casts} casts, {self.fp16_weights} fp16 / {self.fp32_weights} fp32 weights; "
            f"calibrated {self.tensors_checked} tensors of {self.candidates} candidate nodes "
            f"on {self.calibration_feeds} feeds in {self.seconds:.1f} s",
            f"  limit |x| <= {self.limit:.6g} ({self.limit / FP16_MAX:.3g} of fp16's 65504); "
            f"largest fp16 tensor |x| {self.fp16_max_abs:.4g}; "
            f"{len(self.kept)} candidate nodes kept fp32",
        ]
        for kept in self.kept[:limit]:
            lines.append(f"  kept fp32: {kept.name} ({kept.op}): {kept.reason} "
                         f"[{kept.tensor} |x| = {kept.max_abs:.4g}]")
        if len(self.kept) > limit:
            lines.append(f"  ... and {len(self.kept) - limit} more")
        return "\n".join(lines)


# -- rewrite -------------------------------------------------------------------------------
def apply_precision(model: onnx.ModelProto, plan: Mapping[str, int], floats: set[str],
                    report: Fp16Report, *, data_dir: Path | None = None) -> onnx.ModelProto:
    """Rewrite ``model`` to ``plan``: casts at region borders, fp16 weights, fp32 I/O.
    Weights left on disk are read from ``data_dir`` one at a time; on return every weight
    is in memory."""
    graph = model.graph
    constants = {init.name: init for init in graph.initializer}
    consumers: dict[str, set[str]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, set()).add(node.name)
    graph_outputs = {o.name for o in graph.output}

    converted: set[str] = set()
    for name, init in constants.items():
        if init.data_type != FLOAT:
            continue
        users = consumers.get(name, set())
        if users and all(plan.get(u) == HALF for u in users) and name not in graph_outputs:
            array = np.clip(numpy_helper.to_array(init, str(data_dir or "")), -FP16_MAX,
                            FP16_MAX).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(array, name))
            converted.add(name)
        else:
            report.fp32_weights += 1
    report.fp16_weights = len(converted)

    value_type: dict[str, int] = {i.name: FLOAT for i in graph.input}
    for name in constants:
        if name in floats:
            value_type[name] = HALF if name in converted else FLOAT
    new_nodes: list[onnx.NodeProto] = []
    cast_cache: dict[tuple[str, int], str] = {}

    def cast(name: str, to: int, clip: bool = False) -> str:
        key = (name, to + 100 * clip)
        if key not in cast_cache:
            source = name
            if clip:
                low, high = f"{name}_fp16clip_min", f"{name}_fp16clip_max"
                graph.initializer.extend([
                    numpy_helper.from_array(np.array(-FP16_MAX, np.float32), low),
                    numpy_helper.from_array(np.array(FP16_MAX, np.float32), high)])
                source = f"{name}_fp16clip"
                new_nodes.append(helper.make_node("Clip", [name, low, high], [source],
                                                  name=f"{source}_node"))
            out = f"{name}{'_fp16' if to == HALF else '_fp32'}_cast"
            new_nodes.append(helper.make_node("Cast", [source], [out], to=to,
                                              name=f"{out}_node"))
            cast_cache[key] = out
            report.casts += 1
        return cast_cache[key]

    for node in graph.node:
        if node.op_type == "Constant":
            new_nodes.append(node)
            for out in node.output:
                if out in floats:
                    value_type[out] = FLOAT
            continue
        precision = plan[node.name]
        if node.op_type == "Cast":
            new_nodes.append(node)
            to = next(a.i for a in node.attribute if a.name == "to")
            if to in (FLOAT, HALF):
                value_type[node.output[0]] = to
            report.fp32_nodes += 1
            continue
        report.fp16_nodes += precision == HALF
        report.fp32_nodes += precision == FLOAT
        masks = mask_inputs(node) if precision == HALF else frozenset()
        for position, name in enumerate(node.input):
            have = value_type.get(name)
            if name and have is not None and have != precision:
                node.input[position] = cast(name, precision, clip=position in masks)
        new_nodes.append(node)
        for out in node.output:
            if out in floats:
                value_type[out] = precision

    # Graph outputs stay fp32: rename an fp16 producer's output and cast back.
    renames = {o.name: f"{o.name}_fp16" for o in graph.output if value_type.get(o.name) == HALF}
    if renames:
        for node in new_nodes:
            node.output[:] = [renames.get(n, n) for n in node.output]
            node.input[:] = [renames.get(n, n) for n in node.input]
        for original, half in renames.items():
            new_nodes.append(helper.make_node("Cast", [half], [original], to=FLOAT,
                                              name=f"{original}_output_cast"))
            report.casts += 1
    del graph.node[:]
    graph.node.extend(new_nodes)
    del graph.value_info[:]  # stale types; onnxruntime infers them again
    if data_dir is not None:
        external_data_helper.load_external_data_for_model(model, str(data_dir))
    return model


# -- the pass ------------------------------------------------------------------------------
def convert_to_fp16(model: onnx.ModelProto,
                    calibration_feeds: Sequence[Mapping[str, np.ndarray]], *,
                    margin: float = DEFAULT_MARGIN, log_summary: bool = True,
                    data_dir: Path | None = None) -> tuple[onnx.ModelProto, Fp16Report]:
    """Convert ``model`` (in place) to mixed fp16, keeping out-of-range nodes fp32.

    ``calibration_feeds`` are inputs of the fp32 graph (realistic prompts); at least one is
    needed, since a conversion without measurements cannot promise anything about range.
    A candidate node is kept fp32 when any float tensor it reads or writes reaches
    ``margin * 65504`` in absolute value on any feed, or is not finite. The report's
    summary is logged (``log_summary``) at INFO.

    Large models: load with ``onnx.load(path, load_external_data=False)`` and pass the
    folder as ``data_dir``. The weights then stay on disk while onnxruntime calibrates
    (it reads them itself) and are converted one at a time, so the peak memory is about one
    fp32 copy of the weights instead of three. Save the result with external data.
    """
    if not 0.0 < margin <= 1.0:
        raise ValueError(f"margin must be in (0, 1], not {margin}")
    if not calibration_feeds:
        raise ValueError("fp16 conversion needs at least one calibration feed")
    if data_dir is None and any(on_disk(i) for i in model.graph.initializer):
        raise ValueError("the model's weights are on disk: pass data_dir (their folder)")
    initializers = {init.name for init in model.graph.initializer}
    needed = {i.name for i in model.graph.input} - initializers
    for feed in calibration_feeds:
        if needed - set(feed):
            raise ValueError(f"calibration feed lacks graph inputs {sorted(needed - set(feed))} "
                             f"(the graph takes {sorted(needed)})")
    calibration_feeds = [{k: v for k, v in f.items() if k in needed} for f in calibration_feeds]
    start = time.perf_counter()
    name_nodes(model)
    add_missing_domains(model)
    floats = float_tensors(model)
    limit = margin * FP16_MAX
    plan = plan_precision(model, floats)
    candidates = [n for n in model.graph.node if plan.get(n.name) == HALF]
    checked = {n.name: checked_tensors(n, floats) for n in candidates}
    tensors = list(dict.fromkeys(t for names in checked.values() for t in names))
    _LOGGER.info("fp16 calibration: %d tensors of %d candidate nodes on %d feeds",
                 len(tensors), len(candidates), len(calibration_feeds))
    ranges = measure_ranges(model, tensors, calibration_feeds, data_dir=data_dir)
    kept = _over_limit(candidates, checked, ranges, limit, constant_names(model))
    plan = plan_precision(model, floats, (k.name for k in kept))
    report = Fp16Report(
        candidates=len(candidates), limit=limit, calibration_feeds=len(calibration_feeds),
        tensors_checked=len(tensors), kept=kept,
    )
    report.fp16_max_abs = max(
        (ranges[t][0] for n in candidates if plan[n.name] == HALF for t in checked[n.name]),
        default=0.0)
    apply_precision(model, plan, floats, report, data_dir=data_dir)
    report.seconds = time.perf_counter() - start
    if log_summary:
        _LOGGER.info("%s", report.summary())
    return model, report


def _over_limit(candidates: Sequence[onnx.NodeProto], checked: Mapping[str, list[str]],
                ranges: Mapping[str, tuple[float, bool]], limit: float,
                constants: set[str]) -> list[KeptNode]:
    kept = []
    for node in candidates:
        worst: tuple[float, str, bool] | None = None
        for name in checked[node.name]:
            peak, finite = ranges.get(name, (0.0, True))
            over = not finite or peak > limit
            if over and (worst is None or peak > worst[0] or not finite):
                worst = (peak, name, finite)
        if worst is None:
            continue
        peak, name, finite = worst
        where = "weight" if name in constants else (
            "output" if name in node.output else "input")
        reason = (f"{where} not finite in fp32" if not finite
                  else f"{where} |x| {peak:.4g} > {limit:.4g}")
        kept.append(KeptNode(node.name, node.op_type, name, peak, reason))
    return kept


def naive_fp16(model: onnx.ModelProto) -> tuple[onnx.ModelProto, Fp16Report]:
    """The same plan with no calibration: every candidate fp16 (tests show why not)."""
    name_nodes(model)
    floats = float_tensors(model)
    report = Fp16Report()
    apply_precision(model, plan_precision(model, floats), floats, report)
    return model, report
