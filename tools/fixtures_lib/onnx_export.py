"""torch -> ONNX export with the published file layout, and onnxruntime agreement checks."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

OPSET = 18


def export_graph(
    module: Any,
    args: tuple,
    path: Path,
    input_names: list[str],
    output_names: list[str],
    dynamic_axes: dict[str, dict[int, str]],
    external_data: bool,
) -> None:
    """Export ``module(*args)`` to ``path`` with the given I/O names and dynamic axes.

    With ``external_data`` every initializer goes to ``<file name>.data`` next to the
    graph (the published graphs' location string is exactly that basename); otherwise
    the weights are embedded.
    """
    import onnx
    import torch

    dims: dict[str, torch.export.Dim] = {}
    dynamic_shapes = []
    for name, arg in zip(input_names, args, strict=True):
        axes = dynamic_axes.get(name, {})
        spec = {}
        for axis in range(arg.dim()):
            if axis in axes:
                label = axes[axis]
                dims.setdefault(label, torch.export.Dim(label, min=1, max=1 << 16))
                spec[axis] = dims[label]
        dynamic_shapes.append(spec)
    with torch.no_grad():
        program = torch.onnx.export(
            module,
            args,
            dynamo=True,
            opset_version=OPSET,
            input_names=input_names,
            output_names=output_names,
            dynamic_shapes=tuple(dynamic_shapes),
            optimize=True,
            verbose=False,
        )
    proto = program.model_proto
    _strip_metadata(proto)
    proto.producer_name = "wyoming-omnivoice tools/build_fixtures.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    data_path = path.with_name(path.name + ".data")
    if data_path.exists():
        data_path.unlink()
    if external_data:
        onnx.save_model(
            proto,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data_path.name,
            size_threshold=1024,
        )
    else:
        onnx.save_model(proto, str(path))
    onnx.checker.check_model(str(path))
    logger.info("exported %s", path)


def _strip_metadata(proto) -> None:
    """Drop per-node stack traces and doc strings (they double a tiny graph's size)."""
    for node in proto.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    del proto.graph.value_info[:]
    proto.doc_string = ""


def ort_session(path: Path):  # -> onnxruntime.InferenceSession
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def max_abs_diff_vs_torch(path: Path, module: Any, feeds: dict[str, Any]) -> float:
    """Run the graph in onnxruntime and ``module`` in torch on the same numpy feeds."""
    import numpy as np
    import torch

    session = ort_session(path)
    ort_out = session.run(None, feeds)[0]
    with torch.no_grad():
        torch_out = module(*(torch.from_numpy(v) for v in feeds.values())).numpy()
    if ort_out.shape != torch_out.shape:
        raise RuntimeError(f"{path.name}: ORT shape {ort_out.shape} != torch {torch_out.shape}")
    if np.issubdtype(torch_out.dtype, np.integer):
        return float(np.max(np.abs(ort_out.astype(np.int64) - torch_out.astype(np.int64))))
    return float(np.max(np.abs(ort_out.astype(np.float64) - torch_out.astype(np.float64))))
