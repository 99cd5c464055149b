"""The step loop on the device steps aside on its own, on the CPU provider: a step session
that fails (a real onnxruntime session built to fail: at its first run, or only from a
given step on) moves the engine to the host loop for good with one warning, the step runs
again there, and every request gets the host loop's codes; a step session that gives other
codes is caught by the start-up check (``Engine.warm_up``), which keeps the host loop."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import pytest
from conftest import TINY_MODEL
from onnx import helper, numpy_helper

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.decoding.device_selection import StepSession, step_model
from wyoming_omnivoice.engine.graphs import selection_graph as sg
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

OPTIONS = DecodeOptions(num_step=8)
REQUESTS = [
    SynthesisRequest(text="The first one is here.", language="en", seed=1),
    SynthesisRequest(text="A second, rather longer sentence.", language="en", seed=2),
    SynthesisRequest(text="Third.", language="en", seed=3, num_frames=50),
]


@pytest.fixture(scope="module")
def host_codes() -> list[np.ndarray]:
    engine = Engine.load(TINY_MODEL, device="cpu")
    return [engine.generate_codes_batch([r], options=OPTIONS)[0] for r in REQUESTS]


def device_engine() -> Engine:
    """CUDA's code path on the CPU provider (a fresh engine: a failure turns its device
    loop off for good)."""
    return Engine.load(TINY_MODEL, device="cpu", io_binding=True, buckets=True,
                       device_loop=True)


def failing_from(model: bytes, step: int) -> bytes:
    """The step graph, failing once any item reaches ``step`` (0: at its first run): its
    step counters pass through a Gather from ``range(step)``, out of bounds from there on
    (onnxruntime raises at run time)."""
    proto = onnx.ModelProto.FromString(model)
    for node in proto.graph.node:
        node.input[:] = ["checked_steps" if n == sg.STEPS else n for n in node.input]
    proto.graph.initializer.append(
        numpy_helper.from_array(np.arange(max(step, 0), dtype=np.int64), "steps_allowed"))
    proto.graph.node.insert(0, helper.make_node("Gather", ["steps_allowed", sg.STEPS],
                                                ["checked_steps"], axis=0))
    return bytes(proto.SerializeToString())


def other_codes(model: bytes) -> bytes:
    """The step graph, writing another code than the scorer's choice into every chosen cell
    (valid codes: a decode that completes, with the wrong result)."""
    proto = onnx.ModelProto.FromString(model)
    (update,) = [n for n in proto.graph.node if n.output[:] == [sg.NEW_TOKENS]]
    update.input[1] = "shifted_pred"
    proto.graph.initializer.extend([
        numpy_helper.from_array(np.array(1, np.int64), "shift_one"),
        numpy_helper.from_array(np.array(1024, np.int64), "shift_mod")])
    proto.graph.node.extend([
        helper.make_node("Add", [sg.PRED, "shift_one"], ["pred_plus_one"]),
        helper.make_node("Mod", ["pred_plus_one", "shift_mod"], ["shifted_pred"])])
    return bytes(proto.SerializeToString())


def install(engine: Engine, model: bytes, *, noisy: bool = True) -> None:
    """``model`` as the engine's step session (guided)."""
    graphs = engine.graphs
    graph = Graph(graphs.heads_path, graphs.providers, model_bytes=model, label="broken step")
    graphs.selections[(True, noisy)] = StepSession(graph, capture=False)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("fails_at", [0, 3], ids=["first-run", "mid-decode"])
def test_a_failing_step_session_moves_the_engine_to_the_host_loop(
        host_codes: list[np.ndarray], caplog: pytest.LogCaptureFixture,
        fails_at: int) -> None:
    engine = device_engine()
    install(engine, failing_from(step_model(engine.graphs, guided=True, noisy=True),
                                 fails_at))
    with caplog.at_level(logging.WARNING):
        got = engine.generate_codes_batch(REQUESTS, options=OPTIONS)
        again = engine.generate_codes_batch(REQUESTS[:1], options=OPTIONS)
    for codes, want in zip(got + again, host_codes + host_codes[:1], strict=True):
        np.testing.assert_array_equal(codes, want)
    assert engine.decoder.selection_graph is None
    (warning,) = warnings_of(caplog)
    assert "Step loop on the device turned off" in warning and "indices" in warning


def test_requests_joining_a_session_never_fail_when_the_device_loop_does(
        host_codes: list[np.ndarray], caplog: pytest.LogCaptureFixture) -> None:
    engine = device_engine()
    install(engine, failing_from(step_model(engine.graphs, guided=True, noisy=True), 4))
    session = engine.open_session(OPTIONS)
    with caplog.at_level(logging.WARNING):
        items = [session.add(REQUESTS[0], codes_only=True)]
        session.step()
        session.step()
        items += [session.add(r, codes_only=True) for r in REQUESTS[1:]]  # join at step 2
        while session.active:
            session.step()
    for item, want in zip(items, host_codes, strict=True):
        assert item.error is None
        np.testing.assert_array_equal(item.result, want)
    assert len(warnings_of(caplog)) == 1


def test_the_start_up_check_keeps_a_correct_device_loop(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = device_engine()
    with caplog.at_level(logging.INFO):
        engine.warm_up()
    assert engine.decoder.selection_graph is not None
    assert warnings_of(caplog) == []
    assert any("Step loop on the device: checked" in r.getMessage() for r in caplog.records)


def test_the_start_up_check_turns_off_a_device_loop_with_other_codes(
        host_codes: list[np.ndarray], caplog: pytest.LogCaptureFixture) -> None:
    engine = device_engine()
    install(engine, other_codes(step_model(engine.graphs, guided=True, noisy=True)))
    with caplog.at_level(logging.WARNING):
        engine.warm_up()
    assert engine.decoder.selection_graph is None
    (warning,) = warnings_of(caplog)
    assert "other codes than the host loop's" in warning
    got = engine.generate_codes_batch(REQUESTS, options=OPTIONS)
    for codes, want in zip(got, host_codes, strict=True):
        np.testing.assert_array_equal(codes, want)
