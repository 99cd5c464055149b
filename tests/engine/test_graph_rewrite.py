"""The backbone's softmax NaN guards are removed at load time, exactly."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import FIXTURES
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.graphs.graph_rewrite import strip_nan_guards
from wyoming_omnivoice.engine.runtime.onnx_sessions import session_options

TINY = FIXTURES / "models" / "tiny"
BACKBONE = TINY / "llm_backbone_fp32.onnx"


def op_count(model: onnx.ModelProto, op_type: str) -> int:
    return sum(node.op_type == op_type for node in model.graph.node)


def test_tiny_backbone_guards_go_and_hidden_states_are_bit_identical() -> None:
    model = onnx.load(str(BACKBONE), load_external_data=False)
    layers = op_count(model, "Softmax")
    assert layers >= 2 and op_count(model, "IsNaN") == layers
    assert strip_nan_guards(model) == layers
    assert op_count(model, "IsNaN") == 0
    assert op_count(model, "Softmax") == layers
    assert strip_nan_guards(model) == 0  # nothing left to remove

    options = session_options()
    options.add_session_config_entry(
        "session.model_external_initializers_file_folder_path", str(TINY))
    rewritten = ort.InferenceSession(model.SerializeToString(), options,
                                     providers=["CPUExecutionProvider"])
    original = ort.InferenceSession(str(BACKBONE), session_options(),
                                    providers=["CPUExecutionProvider"])
    hidden = original.get_inputs()[0].shape[2]
    rng = np.random.default_rng(0)
    for rows, length in ((1, 7), (3, 40)):
        mask = rng.random((rows, 1, length, length)) < 0.5
        diagonal = np.arange(length)
        mask[:, 0, diagonal, diagonal] = True  # as the decoder builds every row
        feeds = {"inputs_embeds": rng.standard_normal((rows, length, hidden), np.float32),
                 "attention_mask": mask}
        np.testing.assert_array_equal(original.run(None, feeds)[0],
                                      rewritten.run(None, feeds)[0])


def guard_model(*, zero: float = 0.0, source_op: str = "Softmax",
                guard_is_output: bool = False) -> onnx.ModelProto:
    """x -> source_op -> Where(IsNaN(p), c, p) -> Identity -> y."""
    nodes = [
        helper.make_node(source_op, ["x"], ["p"]),
        helper.make_node("IsNaN", ["p"], ["bad"]),
        helper.make_node("Where", ["bad", "c", "p"], ["guarded"]),
    ]
    out = "guarded"
    if not guard_is_output:
        nodes.append(helper.make_node("Identity", ["guarded"], ["y"]))
        out = "y"
    graph = helper.make_graph(
        nodes, "guard",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(zero, dtype=np.float32), "c")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_the_exact_pattern_is_removed_and_the_graph_still_runs() -> None:
    model = guard_model()
    assert strip_nan_guards(model) == 1
    assert [n.op_type for n in model.graph.node] == ["Softmax", "Identity"]
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-6)


@pytest.mark.parametrize("change", [
    {"zero": 1.0},                   # replaces NaN with something else than 0
    {"source_op": "Relu"},           # not a softmax
    {"guard_is_output": True},       # its output name is part of the interface
], ids=["non-zero", "not-softmax", "graph-output"])
def test_anything_else_is_left_alone(change: dict[str, object]) -> None:
    model = guard_model(**change)  # type: ignore[arg-type]
    before = model.SerializeToString()
    assert strip_nan_guards(model) == 0
    assert model.SerializeToString() == before


def test_engine_loads_the_rewritten_backbone(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="wyoming_omnivoice.engine.runtime.graph_set"):
        engine = Engine.load(TINY, device="cpu", precision="published")
    layers = op_count(onnx.load(str(BACKBONE), load_external_data=False), "Softmax")
    assert f"removed {layers} softmax NaN guards" in caplog.text
    # The prepared backbones (the default) are written without them.
    assert Engine.load(TINY, device="cpu").graphs.backbone.path.parent.name.startswith("fp32-")
    from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
    assert prepare_backbone(TINY, "fp32").info["nan_guards_removed"] == layers
    codes = engine.generate_codes("Hello there.", options=DecodeOptions(num_step=4))
    assert codes.shape[0] == 8 and codes.min() >= 0 and codes.max() < 1024
