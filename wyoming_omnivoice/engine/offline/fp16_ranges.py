"""fp32 value ranges of chosen tensors of a graph, measured on onnxruntime's CPU provider.

Used by the fp16 calibration (:mod:`.fp16_calibrate`). Every tensor to measure gets an
``Abs -> ReduceMax`` and an ``Abs -> ReduceSum`` (non-finite when the tensor holds inf/NaN)
placed right after the node that makes it, and only those scalars leave the session: memory
stays that of one forward even on the real model (exposing the tensors themselves would
hold every measured intermediate of every layer at once). Large weights are fed to the
session as inputs when they are in memory, or read by onnxruntime from their file when they
are still on disk; either way no second copy is packed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

_LOGGER = logging.getLogger(__name__)

_FLOAT = TensorProto.FLOAT
#: In-memory initializers with more elements than this are fed to the session as inputs.
_FEED_ABOVE = 4096


def add_missing_domains(model: onnx.ModelProto) -> None:
    """Declare an opset for every node domain (fusion tools sometimes leave it out)."""
    declared = {o.domain for o in model.opset_import}
    for domain in sorted({n.domain for n in model.graph.node} - declared - {"ai.onnx"}):
        model.opset_import.append(helper.make_opsetid(domain, 1))


def on_disk(tensor: onnx.TensorProto) -> bool:
    return tensor.data_location == TensorProto.EXTERNAL


def skeleton(model: onnx.ModelProto, *, feed_above: int = _FEED_ABOVE) -> onnx.ModelProto:
    """The graph without its large in-memory weights: those become typed graph inputs
    (small, fast); weights still on disk stay initializers that point at their file."""
    graph = model.graph
    small, fed = [], []
    for init in graph.initializer:
        if int(np.prod(init.dims, dtype=np.int64)) > feed_above and not on_disk(init):
            fed.append(helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
        else:
            small.append(init)
    skeleton_graph = helper.make_graph(
        list(graph.node), graph.name, list(graph.input) + fed, list(graph.output),
        initializer=small,
    )
    skeleton = helper.make_model(skeleton_graph, opset_imports=list(model.opset_import),
                                 ir_version=model.ir_version)
    skeleton.functions.extend(model.functions)
    add_missing_domains(skeleton)
    return skeleton


def _constant_values(model: onnx.ModelProto) -> dict[str, onnx.TensorProto]:
    values = {init.name: init for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value":
                    values[node.output[0]] = attr.t
    return values


def _range(array: np.ndarray) -> tuple[float, bool]:
    if array.size == 0:
        return 0.0, True
    magnitude = np.abs(array.astype(np.float32, copy=False))
    return float(magnitude.max()), bool(np.isfinite(magnitude.sum(dtype=np.float64)))


def measure_ranges(model: onnx.ModelProto, tensors: Sequence[str],
                   feeds: Sequence[Mapping[str, np.ndarray]], *,
                   data_dir: Path | None = None) -> dict[str, tuple[float, bool]]:
    """``{tensor: (max |x| over all feeds, all finite)}`` from fp32 runs on the CPU provider
    (``data_dir``: the folder of weights left on disk, see :func:`convert_to_fp16`)."""
    import onnxruntime as ort

    base = str(data_dir or "")
    values = _constant_values(model)
    ranges: dict[str, tuple[float, bool]] = {}
    dynamic = []
    for name in tensors:
        if name in values:
            ranges[name] = _range(numpy_helper.to_array(values[name], base))
        else:
            dynamic.append(name)
    if not dynamic or not feeds:
        return ranges
    probe = skeleton(model)
    graph = probe.graph
    # Each probe sits right after the node that makes its tensor: onnxruntime's default
    # order follows node order, so every tensor is reduced and freed as it is made (probes
    # appended at the end would keep every measured tensor of every layer alive at once).
    wanted = dict.fromkeys(dynamic)
    outputs: list[tuple[str, str, str]] = []
    probes: dict[str, list[onnx.NodeProto]] = {}
    for index, name in enumerate(wanted):
        magnitude, peak, total = (f"fp16cal_{index}_{kind}" for kind in ("abs", "max", "sum"))
        probes[name] = [
            helper.make_node("Abs", [name], [magnitude], name=magnitude),
            helper.make_node("ReduceMax", [magnitude], [peak], name=peak, keepdims=0),
            helper.make_node("ReduceSum", [magnitude], [total], name=total, keepdims=0),
        ]
        outputs.append((name, peak, total))
    made = {out for node in graph.node for out in node.output}
    ordered = [p for name in wanted if name not in made for p in probes[name]]
    for node in graph.node:
        ordered.append(node)
        ordered.extend(p for out in node.output if out in probes for p in probes[out])
    del graph.node[:]
    graph.node.extend(ordered)
    graph.output.extend(helper.make_tensor_value_info(n, _FLOAT, [])
                        for _, peak, total in outputs for n in (peak, total))
    fed = {i.name for i in graph.input} - {i.name for i in model.graph.input}
    weights = {init.name: numpy_helper.to_array(init)
               for init in model.graph.initializer if init.name in fed}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.log_severity_level = 3
    # Weights are read once per forward here: no pre-packed second copy of each.
    options.add_session_config_entry("session.disable_prepacking", "1")
    if data_dir is not None:
        options.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(data_dir))
    session = ort.InferenceSession(probe.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    del probe
    names = [n for _, peak, total in outputs for n in (peak, total)]
    for number, feed in enumerate(feeds, 1):
        started = time.perf_counter()
        results = session.run(names, {**weights, **feed})
        _LOGGER.info("fp16 calibration: feed %d/%d (%s) in %.1f s", number, len(feeds),
                     " ".join("x".join(map(str, np.shape(v))) for v in feed.values()),
                     time.perf_counter() - started)
        for position, (name, _, _) in enumerate(outputs):
            peak_value = float(results[2 * position])
            finite = bool(np.isfinite(results[2 * position + 1])) and np.isfinite(peak_value)
            before, before_finite = ranges.get(name, (0.0, True))
            ranges[name] = (max(before, peak_value) if finite else float("inf"),
                            before_finite and finite)
    return ranges
