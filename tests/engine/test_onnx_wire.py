"""The wire-format reader of external-data references agrees with the onnx package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import FIXTURES
from onnx import external_data_helper, helper, numpy_helper

from wyoming_omnivoice.engine.store.onnx_wire import ExternalTensor, WireError, external_tensors

TINY = FIXTURES / "models" / "tiny"


def with_onnx(model: onnx.ModelProto) -> list[ExternalTensor]:
    """The same references read with the onnx package (initializers, tensor attributes
    and sub-graphs)."""
    found = []

    def walk(graph: onnx.GraphProto) -> None:
        tensors = list(graph.initializer)
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    tensors.append(attr.t)
                tensors.extend(attr.tensors)
                if attr.HasField("g"):
                    walk(attr.g)
                for sub in attr.graphs:
                    walk(sub)
        for tensor in tensors:
            if tensor.data_location == onnx.TensorProto.EXTERNAL:
                info = {e.key: e.value for e in tensor.external_data}
                found.append(ExternalTensor(info["location"], int(info.get("offset", 0)),
                                            int(info.get("length", 0))))

    walk(model.graph)
    return found


@pytest.mark.parametrize("name", ["llm_backbone_fp32.onnx", "audio_embeddings_encoder.onnx",
                                  "audio_heads_decoder.onnx", "audio_tokenizer/higgs_decoder.onnx"])
def test_tiny_model_files(name: str) -> None:
    path = TINY / name
    expected = with_onnx(onnx.load(str(path), load_external_data=False))
    assert external_tensors(path.read_bytes()) == expected
    if name.endswith("fp32.onnx"):
        assert expected  # the backbone's weights are external: something was compared


def test_external_tensors_inside_attributes_and_subgraphs(tmp_path: Path) -> None:
    weight = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    constant = numpy_helper.from_array(np.arange(300, dtype=np.float32), "c_value")
    # onnx's saver externalises initializers only: the attribute's tensor by hand.
    external_data_helper.set_external_data(constant, "m.data", offset=16384, length=1200)
    constant.data_location = onnx.TensorProto.EXTERNAL
    constant.ClearField("raw_data")
    branch = helper.make_graph(
        [helper.make_node("Constant", [], ["y"], value=constant)], "then", [],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [300])])
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["out"], then_branch=branch, else_branch=branch),
         helper.make_node("MatMul", ["x", "w"], ["z"])],
        "g", [helper.make_tensor_value_info("cond", onnx.TensorProto.BOOL, []),
              helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("out", onnx.TensorProto.FLOAT, [300]),
         helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [1, 64])],
        initializer=[weight])
    model = helper.make_model(graph)
    onnx.save_model(model, str(tmp_path / "m.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="m.data", size_threshold=0)
    saved = (tmp_path / "m.onnx").read_bytes()
    found = external_tensors(saved)
    assert found == with_onnx(onnx.load(str(tmp_path / "m.onnx"), load_external_data=False))
    # The initializer, and the constant of each branch (inside an If's sub-graphs).
    assert sorted((t.offset, t.length) for t in found) == [(0, 16384), (16384, 1200),
                                                          (16384, 1200)]
    assert {tensor.location for tensor in found} == {"m.data"}


@pytest.mark.parametrize("data", [b"", b"not an onnx file at all", b"\x3a\xff\xff\xff\x0f",
                                  b"\x0a\x05ab"])
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(WireError):
        external_tensors(data)
