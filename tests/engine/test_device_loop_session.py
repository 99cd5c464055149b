"""The step loop on the device inside the resumable decode (engine/decoding/stepping.py with
engine/decoding/device_loop.py and device_selection.py), on the CPU provider: items that join
a running decode at different steps, and whole batches, get exactly the host loop's codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from ort_calls import OrtCalls, counting

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

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
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[OrtCalls]:
    """Counts onnxruntime's runs (so a test knows the device path really ran)."""
    with counting(monkeypatch) as counted:
        yield counted


def test_the_device_loop_is_on_only_where_asked(host_engine: Engine,
                                               device_engine: Engine) -> None:
    assert host_engine.decoder.selection_graph is None
    assert device_engine.decoder.selection_graph is not None
    assert device_engine.decoder.stepper(OPTIONS["gumbel"]).on_device
    sampling = DecodeOptions(num_step=4, class_temperature=0.8)
    assert not device_engine.decoder.stepper(sampling).on_device  # class noise: the host


@pytest.mark.parametrize("name", list(OPTIONS))
def test_joining_items_get_the_host_loops_codes(host_engine: Engine, device_engine: Engine,
                                                calls: OrtCalls, name: str) -> None:
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
    assert calls.runs["step"] >= options.num_step + 3
    for item, request in zip(items, REQUESTS, strict=True):
        assert item.error is None and item.result is not None
        alone = host_engine.generate_codes_batch([request], options=options)[0]
        np.testing.assert_array_equal(item.result, alone)


def test_a_whole_batch_gets_the_host_loops_codes(host_engine: Engine, device_engine: Engine,
                                                 calls: OrtCalls) -> None:
    options = OPTIONS["gumbel"]
    on_device = device_engine.generate_codes_batch(REQUESTS, options=options)
    assert calls.runs["step"] == options.num_step
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


def test_two_decodes_of_one_shape_interleaved_keep_their_own_codes(
        host_engine: Engine, device_engine: Engine, calls: OrtCalls) -> None:
    """A request and a background decode of the same shape, step by step in turn: each
    takes the shape's step buffers from the other (which brings its tokens back first)."""
    options = OPTIONS["gumbel"]
    first, second = (device_engine.open_session(options) for _ in range(2))
    items = [first.add(REQUESTS[0], codes_only=True), second.add(REQUESTS[3], codes_only=True)]
    while first.active or second.active:
        for session in (first, second):
            if session.active:
                session.step()
    assert calls.runs["step"] >= 2 * options.num_step
    for item, request in zip(items, (REQUESTS[0], REQUESTS[3]), strict=True):
        assert item.error is None and item.result is not None
        alone = host_engine.generate_codes_batch([request], options=options)[0]
        np.testing.assert_array_equal(item.result, alone)
