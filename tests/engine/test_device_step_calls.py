"""What one step of the device loop asks of onnxruntime, counted at onnxruntime's own API
on the CPU provider: two runs (the backbone and the step session) and no copy from or to
the host, with and without noise, while the set of items stays the same; the codes stay the
host loop's. The host loop, for comparison, runs three sessions and copies both ways."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TINY_MODEL
from ort_calls import counting

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

REQUESTS = [SynthesisRequest(text="The first one is here.", language="en", seed=1),
            SynthesisRequest(text="A second, rather longer sentence.", language="en", seed=2)]
OPTIONS = {"gumbel": DecodeOptions(num_step=12),
           "deterministic": DecodeOptions(num_step=12, position_temperature=0.0)}
STEPS = 6


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu", io_binding=True, buckets=True,
                       device_loop=True)


def stepped(engine: Engine, options: DecodeOptions, host_only: bool,
            monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, int], int, int, list]:
    """Runs and copies of STEPS steps after the first (which binds the items)."""
    plans = [engine.planner.plan(r) for r in REQUESTS]
    stepper = engine.decoder.stepper(options, host_only=host_only)
    states = [stepper.start(engine.planner.prompt(p, options.denoise), p.rng) for p in plans]
    stepper.step()
    with counting(monkeypatch) as calls:
        for _ in range(STEPS):
            assert stepper.step() == []
    while stepper.active:
        stepper.step()
    return dict(calls.runs), calls.uploads, calls.downloads, [s.codes for s in states]


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_device_step_is_two_runs_and_no_copies(engine: Engine, name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    runs, uploads, downloads, codes = stepped(engine, OPTIONS[name], False, monkeypatch)
    assert runs == {"backbone": STEPS, "step": STEPS}
    assert (uploads, downloads) == (0, 0)
    host_runs, host_up, host_down, host_codes = stepped(engine, OPTIONS[name], True,
                                                        monkeypatch)
    assert host_runs == {"embeddings": STEPS, "backbone": STEPS, "scoring": STEPS}
    assert host_up >= STEPS and host_down >= STEPS
    for a, b in zip(codes, host_codes, strict=True):
        np.testing.assert_array_equal(a, b)
