"""Model folders whose backbone or vocoder misbehaves with more than one row per call.

The published graphs declare a dynamic batch axis, but no public caller runs them with more
than one row; these folders stand for graphs that do not keep that promise:

* ``fails``: the graph reshapes its output to one row, so a call with two rows raises an
  onnxruntime error;
* ``mixes``: each row's output moves halfway to the mean of the call's rows, so one row
  alone is unchanged but two rows in one call differ from the same rows alone.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

BACKBONE = "llm_backbone_fp32.onnx"
VOCODER = "audio_tokenizer/higgs_decoder.onnx"
FAULTS = ("fails", "mixes")


def _append(model: onnx.ModelProto, output: str, fault: str) -> None:
    graph = model.graph
    inner = output + "_rows"
    for node in graph.node:
        node.output[:] = [inner if name == output else name for name in node.output]
    if fault == "fails":
        graph.initializer.extend([
            numpy_helper.from_array(np.array([1], np.int64), "fault_one"),
            numpy_helper.from_array(np.array([1], np.int64), "fault_start"),
            numpy_helper.from_array(np.array([1 << 30], np.int64), "fault_end"),
        ])
        graph.node.extend([
            helper.make_node("Shape", [inner], ["fault_shape"]),
            helper.make_node("Slice", ["fault_shape", "fault_start", "fault_end"],
                             ["fault_rest"]),
            helper.make_node("Concat", ["fault_one", "fault_rest"], ["fault_target"], axis=0),
            helper.make_node("Reshape", [inner, "fault_target"], [output]),
        ])
    else:
        graph.initializer.extend([
            numpy_helper.from_array(np.array([0], np.int64), "fault_axis"),
            numpy_helper.from_array(np.array(0.5, np.float32), "fault_half"),
        ])
        graph.node.extend([
            helper.make_node("ReduceMean", [inner, "fault_axis"], ["fault_mean"], keepdims=1),
            helper.make_node("Sub", ["fault_mean", inner], ["fault_pull"]),
            helper.make_node("Mul", ["fault_pull", "fault_half"], ["fault_step"]),
            helper.make_node("Add", [inner, "fault_step"], [output]),
        ])


def faulty_model(src: Path, dst: Path, graph: str, fault: str) -> Path:
    """A copy of the model folder ``src`` whose ``graph`` (:data:`BACKBONE` or
    :data:`VOCODER`) has ``fault`` (:data:`FAULTS`) added after its last node."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("prepared"))
    path = dst / graph
    model = onnx.load(str(path), load_external_data=False)  # weights stay in their file
    _append(model, model.graph.output[0].name, fault)
    onnx.save_model(model, str(path))
    return dst
