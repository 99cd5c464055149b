"""A background step's forward stopped in the middle for a request (engine/runtime/interrupt.py).

Real onnxruntime throughout: a chain of matrix products long enough to be stopped while it
runs, the tiny model's graphs, and the tiny engine's decode under ``between_steps``.
Assertions read results, codes and counts, never times.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine import ForwardInterrupt, between_steps
from wyoming_omnivoice.engine.runtime.interrupt import Interrupted, arm
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers

WIDTH = 256
OPTIONS = DecodeOptions(num_step=8)
REQUEST = SynthesisRequest(text="A background anchor, stopped once.", language="en",
                           seed=5, num_frames=60)


def chain_model(path: Path, length: int) -> Path:
    """``y = x @ w @ w ... @ w`` (``length`` products): one run of many nodes."""
    weight = np.random.default_rng(0).standard_normal((WIDTH, WIDTH)).astype(np.float32)
    nodes, previous = [], "x"
    for i in range(length):
        out = "y" if i == length - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [previous, "w"], [out]))
        previous = out
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [WIDTH, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [WIDTH, WIDTH])],
        [numpy_helper.from_array(weight / WIDTH**0.5, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def chain_graph(tmp_path: Path, length: int) -> Graph:
    return Graph(chain_model(tmp_path / f"chain{length}.onnx", length),
                 choose_providers("cpu"), label="chain", threads=1)


def test_a_request_stops_the_run_in_progress_and_the_run_again_is_whole(
        tmp_path: Path) -> None:
    """request() from another thread while onnxruntime runs: the run ends with Interrupted;
    after clear() the same graph runs to its end with the result of an unarmed run."""
    x = np.eye(WIDTH, dtype=np.float32)
    length = 1000
    for _ in range(4):  # a longer chain if a fast machine finished before the request
        graph = chain_graph(tmp_path, length)
        expected = graph.run({"x": x}, ["y"])[0]
        interrupt = ForwardInterrupt()
        outcome: dict[str, Any] = {}
        started = threading.Event()

        def run(graph: Graph = graph, interrupt: ForwardInterrupt = interrupt,
                outcome: dict[str, Any] = outcome, started: threading.Event = started) -> None:
            with arm(interrupt):
                started.set()
                try:
                    outcome["result"] = graph.run({"x": x}, ["y"])[0]
                except Interrupted as err:
                    outcome["interrupted"] = err
        thread = threading.Thread(target=run)
        thread.start()
        assert started.wait(30)
        interrupt.request()
        in_progress = thread.is_alive()  # the request came while it ran
        thread.join(120)
        if in_progress and "interrupted" in outcome:
            break
        length *= 4
    else:
        pytest.fail("onnxruntime never stopped a run in progress for a request")
    assert isinstance(outcome["interrupted"].__cause__, Exception)
    assert interrupt.interrupted == 1
    interrupt.clear()
    with arm(interrupt):
        again = graph.run({"x": x}, ["y"])[0]
    np.testing.assert_array_equal(again, expected)


def test_a_request_before_the_run_stops_it_before_it_starts(tmp_path: Path) -> None:
    graph = chain_graph(tmp_path, 4)
    interrupt = ForwardInterrupt()
    interrupt.request()
    with arm(interrupt), pytest.raises(Interrupted, match="waiting"):
        graph.run({"x": np.eye(WIDTH, dtype=np.float32)}, ["y"])
    # Unarmed runs never answer to it, requested or not.
    assert graph.run({"x": np.eye(WIDTH, dtype=np.float32)}, ["y"])[0].shape == (WIDTH, WIDTH)


def test_an_error_of_the_run_itself_is_not_taken_for_a_request(tmp_path: Path) -> None:
    graph = chain_graph(tmp_path, 4)
    interrupt = ForwardInterrupt()
    with arm(interrupt), pytest.raises(Exception) as raised:
        graph.run({"x": np.eye(3, dtype=np.float32)}, ["y"])  # wrong shape
    assert not isinstance(raised.value, Interrupted)
    assert interrupt.interrupted == 0


def test_a_terminated_options_object_is_reset_for_the_next_run() -> None:
    """The run options a stopped run carried are usable again (terminate back to False)."""
    interrupt = ForwardInterrupt()
    options = ort.RunOptions()
    with pytest.raises(Interrupted), interrupt.running(options):
        interrupt.request()
        assert options.terminate
        raise RuntimeError("Exiting due to terminate flag being set to true.")
    assert not options.terminate


@pytest.fixture(scope="module")
def engine(tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu")


def test_a_stopped_background_step_runs_again_with_the_same_codes(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decode under between_steps(hook, interrupt): a request on its third forward stops
    it; the hook runs, the step runs again, and the codes are those of a decode never
    stopped, in the same number of steps."""
    expected = engine.generate_codes_batch([REQUEST], options=OPTIONS)[0]
    interrupt = ForwardInterrupt()
    original = engine.decoder._step
    forwards: list[int] = []
    hooks: list[int] = []

    def step(batch: Any, *args: Any, **kwargs: Any) -> Any:
        runner = original(batch, *args, **kwargs)

        class Stopped:
            def run(self, stats: Any) -> Any:
                forwards.append(len(forwards) + 1)
                if len(forwards) == 3:
                    interrupt.request()  # a request arrives during this forward
                return runner.run(stats)
        return Stopped()

    monkeypatch.setattr(engine.decoder, "_step", step)
    with between_steps(lambda: hooks.append(len(forwards)), interrupt):
        codes = engine.generate_codes_batch([REQUEST], options=OPTIONS)[0]
    np.testing.assert_array_equal(codes, expected)
    assert interrupt.interrupted == 1
    assert len(forwards) == OPTIONS.num_step + 1  # the stopped one ran again
    assert hooks == [1, 2, 3, 4, 5, 6, 7, 8]  # the hook after each step and the stopped one


def test_inside_the_hook_runs_are_not_stopped(engine: Engine) -> None:
    """The hook serves requests: their own decode never answers to the interrupt."""
    interrupt = ForwardInterrupt()
    inside: list[np.ndarray] = []

    def hook() -> None:
        if not inside:
            interrupt.request()
            inside.append(engine.generate_codes_batch([REQUEST], options=OPTIONS)[0])

    with between_steps(hook, interrupt):
        engine.generate_codes_batch([REQUEST], options=OPTIONS)
    np.testing.assert_array_equal(
        inside[0], engine.generate_codes_batch([REQUEST], options=OPTIONS)[0])
