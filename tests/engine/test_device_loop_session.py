"""The step loop on the device inside the resumable decode (engine/decoding/stepping.py with
engine/decoding/device_selection.py), on the CPU provider: items that join a running decode at
different steps, and whole batches, get exactly the host loop's codes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.decoding import device_selection

OPTIONS = {
    "gumbel": DecodeOptions(num_step=8),
    "deterministic": DecodeOptions(num_step=8, position_temperature=0.0),
    "no-cfg": DecodeOptions(num_step=6, guidance_scale=0.0),
}
REQUESTS = [
    SynthesisRequest(text="The first one is here.", language="en", seed=1),
    SynthesisRequest(text="A second, rather longer sentence.", language="en", seed=2),
    SynthesisRequest(text="Third.", language="en", seed=3, num_frames=50),
    SynthesisRequest(text="And a fourth request joins late.", language="en", seed=4),
]


@pytest.fixture(scope="module")
def host_engine(tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu")


@pytest.fixture(scope="module")
def device_engine(tiny_model: Path) -> Engine:
    """CUDA's code path on the CPU provider: IO binding, buckets, the device loop."""
    return Engine.load(tiny_model, device="cpu", io_binding=True, buckets=True,
                       device_loop=True)


@pytest.fixture
def device_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the device loop's steps (so a test knows the device path really ran)."""
    steps: list[int] = []
    original = device_selection.DeviceSelection.step

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        steps.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(device_selection.DeviceSelection, "step", counted)
    return steps


def test_the_device_loop_is_on_only_where_asked(host_engine: Engine,
                                               device_engine: Engine) -> None:
    assert host_engine.decoder.selection_graph is None
    assert device_engine.decoder.selection_graph is not None
    assert device_engine.decoder.stepper(OPTIONS["gumbel"]).on_device
    sampling = DecodeOptions(num_step=4, class_temperature=0.8)
    assert not device_engine.decoder.stepper(sampling).on_device  # class noise: the host


@pytest.mark.parametrize("name", list(OPTIONS))
def test_joining_items_get_the_host_loops_codes(host_engine: Engine, device_engine: Engine,
                                                device_steps: list[int], name: str) -> None:
    options = OPTIONS[name]
    session = device_engine.open_session(options)
    items = [session.add(REQUESTS[0], codes_only=True)]
    session.step()
    session.step()
    items.append(session.add(REQUESTS[1], codes_only=True))  # joins at step 2
    session.step()
    items += [session.add(r, codes_only=True) for r in REQUESTS[2:]]  # at step 3
    while session.active:
        session.step()
    assert len(device_steps) >= options.num_step + 3
    for item, request in zip(items, REQUESTS, strict=True):
        assert item.error is None and item.result is not None
        alone = host_engine.generate_codes_batch([request], options=options)[0]
        np.testing.assert_array_equal(item.result, alone)


def test_a_whole_batch_gets_the_host_loops_codes(host_engine: Engine, device_engine: Engine,
                                                 device_steps: list[int]) -> None:
    options = OPTIONS["gumbel"]
    on_device = device_engine.generate_codes_batch(REQUESTS, options=options)
    assert len(device_steps) == options.num_step
    on_host = host_engine.generate_codes_batch(REQUESTS, options=options)
    for got, expected in zip(on_device, on_host, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_audio_through_the_session_equals_synthesize(host_engine: Engine,
                                                     device_engine: Engine) -> None:
    session = device_engine.open_session(OPTIONS["gumbel"])
    items = [session.add(request) for request in REQUESTS[:2]]
    while session.active:
        session.step()
    expected = host_engine.synthesize_batch(REQUESTS[:2], options=OPTIONS["gumbel"])
    for item, audio in zip(items, expected, strict=True):
        assert item.error is None and item.result is not None
        np.testing.assert_allclose(item.result, audio, atol=1e-4)
