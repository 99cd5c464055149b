"""The resumable decode (engine/decoding/stepping.py, engine/session.py): items join a
running batch at a step boundary and each still gets exactly what it gets decoded alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine import between_steps
from wyoming_omnivoice.engine.decoding.selection import choose_cells

OPTIONS = DecodeOptions(num_step=8)
SAMPLING = DecodeOptions(num_step=6, class_temperature=0.8)
LONG = " ".join(["The long text is decoded in chunks, one after the other, always."] * 9)


@pytest.fixture(scope="module")
def engine(tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu")


@pytest.fixture(scope="module")
def bound_engine(tiny_model: Path) -> Engine:
    """The IO-binding step runner on the CPU, with length buckets (CUDA's code path)."""
    return Engine.load(tiny_model, device="cpu", io_binding=True, buckets=True)


def req(text: str, seed: int, **kwargs: Any) -> SynthesisRequest:
    return SynthesisRequest(text=text, language="en", seed=seed, **kwargs)


REQUESTS = [req("The first one is here.", 1), req("A second, rather longer sentence.", 2),
            req("Third.", 3, num_frames=50), req("And a fourth request joins late.", 4)]


def alone_codes(engine: Engine, request: SynthesisRequest, options: DecodeOptions
                ) -> np.ndarray:
    return engine.generate_codes_batch([request], options=options)[0]


@pytest.mark.parametrize("options", [OPTIONS, SAMPLING], ids=["greedy", "sampling"])
@pytest.mark.parametrize("which", ["plain", "bound"])
def test_items_joining_a_running_batch_get_their_alone_codes(
        engine: Engine, bound_engine: Engine, options: DecodeOptions, which: str) -> None:
    engine = engine if which == "plain" else bound_engine
    session = engine.open_session(options)
    items = [session.add(REQUESTS[0], codes_only=True)]
    session.step()
    session.step()
    items.append(session.add(REQUESTS[1], codes_only=True))  # joins at step 2
    session.step()
    items += [session.add(r, codes_only=True) for r in REQUESTS[2:]]  # at step 3
    assert session.decoding == 4
    sizes = []
    while session.active:
        sizes.append(session.decoding)
        session.step()
    assert sizes[0] == 4 and sizes[-1] < 4  # the first items left before the last ones
    assert [item.steps for item in items] == [options.num_step] * 4
    for item, request in zip(items, REQUESTS, strict=True):
        assert item.error is None and item.result is not None
        np.testing.assert_array_equal(item.result, alone_codes(engine, request, options))


@pytest.mark.slow  # runs for seconds
def test_session_audio_equals_synthesize_for_long_text(engine: Engine) -> None:
    """Long text: each chunk joins when the previous one is done (chunk 0 the voice of the
    next), and the audio is the request's synthesize_batch audio, while a short request
    comes and goes beside it."""
    long_request = req(LONG, 7)
    short = req("A short reply meanwhile.", 8)
    session = engine.open_session(OPTIONS)
    long_item = session.add(long_request)
    assert len(long_item.chunks) > 1
    for _ in range(3):
        session.step()
    short_item = session.add(short)
    done = []
    while session.active:
        done += session.step()
    assert done == [short_item, long_item]
    assert long_item.steps == OPTIONS.num_step * len(long_item.chunks)
    assert long_item.result is not None and short_item.result is not None
    np.testing.assert_array_equal(
        long_item.result, engine.synthesize_batch([long_request], options=OPTIONS)[0])
    np.testing.assert_array_equal(
        short_item.result, engine.synthesize_batch([short], options=OPTIONS)[0])


def test_cancelled_item_leaves_at_the_next_boundary(engine: Engine) -> None:
    session = engine.open_session(OPTIONS)
    kept = session.add(REQUESTS[1], codes_only=True)
    doomed = session.add(REQUESTS[0], codes_only=True)
    session.step()
    session.cancel(doomed)
    assert session.decoding == 1 and session.active == 1
    finished = []
    while session.active:
        finished += session.step()
    assert finished == [kept] and doomed.result is None and doomed.steps == 1
    np.testing.assert_array_equal(kept.result, alone_codes(engine, REQUESTS[1], OPTIONS))


def test_a_failing_item_fails_alone(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forward that raises is run again item by item: only the item whose own forward
    fails gets the error; the others go on with exactly their codes."""
    decoder = engine.decoder
    original = decoder._step
    poisoned = 50  # the target length of REQUESTS[2] (num_frames=50)
    failing = {"on": False}

    def step(batch: Any, *args: Any, **kwargs: Any) -> Any:
        runner = original(batch, *args, **kwargs)

        class Watched:
            def run(self, stats: Any) -> Any:
                if failing["on"] and poisoned in batch.t_lens:
                    raise RuntimeError("this item's forward fails")
                return runner.run(stats)
        return Watched()

    monkeypatch.setattr(decoder, "_step", step)
    session = engine.open_session(OPTIONS)
    items = [session.add(r, codes_only=True) for r in REQUESTS[:3]]
    session.step()
    session.step()
    failing["on"] = True  # from the third step on
    finished = []
    while session.active:
        finished += session.step()
    assert isinstance(items[2].error, RuntimeError) and items[2].result is None
    assert items[2].steps == 2
    assert set(finished) == set(items)
    monkeypatch.undo()
    for item, request in zip(items[:2], REQUESTS[:2], strict=True):
        np.testing.assert_array_equal(item.result, alone_codes(engine, request, OPTIONS))


def test_bad_request_is_refused_when_added(engine: Engine) -> None:
    session = engine.open_session(OPTIONS)
    with pytest.raises(ValueError):
        session.add(req("Bad.", 1, ref_codes=np.zeros((3, 4), dtype=np.int64), ref_text="x"))
    assert session.active == 0


def test_whole_batch_decodes_call_the_step_hook_between_steps(engine: Engine) -> None:
    """The hook runs once between every two steps, on the decoding thread, not inside
    itself: there another session's steps interleave, and both keep their codes."""
    other = engine.open_session(OPTIONS)
    other_item = other.add(REQUESTS[3], codes_only=True)
    calls = []

    def hook() -> None:
        calls.append(len(calls))
        if other.active:
            other.step()
        # a decode inside the hook does not call the hook again
        engine.generate_codes_batch([REQUESTS[2]], options=DecodeOptions(num_step=2))

    with between_steps(hook):
        codes = engine.generate_codes_batch([REQUESTS[0]], options=OPTIONS)[0]
    assert len(calls) == OPTIONS.num_step - 1
    np.testing.assert_array_equal(codes, alone_codes(engine, REQUESTS[0], OPTIONS))
    while other.active:
        other.step()
    np.testing.assert_array_equal(other_item.result, alone_codes(engine, REQUESTS[3], OPTIONS))


def test_interleaved_decodes_of_one_shape_keep_their_masks(bound_engine: Engine) -> None:
    """Two sessions of the same bucket shape share the IO-binding buffers, step by step."""
    a = bound_engine.open_session(OPTIONS)
    b = bound_engine.open_session(OPTIONS)
    item_a = a.add(REQUESTS[0], codes_only=True)
    item_b = b.add(REQUESTS[1], codes_only=True)
    while a.active or b.active:
        a.step()
        b.step()
    np.testing.assert_array_equal(item_a.result, alone_codes(bound_engine, REQUESTS[0], OPTIONS))
    np.testing.assert_array_equal(item_b.result, alone_codes(bound_engine, REQUESTS[1], OPTIONS))


def test_choose_cells_ties_take_the_lower_flat_index() -> None:
    tokens = np.full((2, 8, 3), 1024, dtype=np.int64)
    tokens[1, :, 2] = 0  # padding of a shorter item: never chosen
    tokens[0, 0, 0] = 5  # already unmasked: never chosen again
    pred = np.arange(48, dtype=np.int64).reshape(2, 8, 3)
    conf = np.zeros((2, 8, 3), dtype=np.float32)
    penalty = np.zeros((8, 1), dtype=np.float32)
    out = choose_cells(tokens, pred, conf, np.array([2, 3]), None, penalty, 5.0)
    assert out[0, 0].tolist() == [5, 1, 2] and (out[0, 1:] == 1024).all()
    assert out[1, 0].tolist() == [24, 25, 0] and out[1, 1].tolist() == [27, 1024, 0]


def test_prefix_cache_session_is_whole() -> None:
    """With the prefix cache (refreshes counted per batch, not exact) a request added after
    the batch's first step waits until the batch ends; each gets what a batch of its own
    start gets."""
    engine = Engine.load(TINY_MODEL, device="cpu", precision="fp32", prefix_cache=2)
    options = DecodeOptions(num_step=6, prefix_cache=2)
    session = engine.open_session(options)
    first = [session.add(r, codes_only=True) for r in REQUESTS[:2]]
    session.step()
    assert not session.joinable
    late = session.add(REQUESTS[2], codes_only=True)
    sizes = []
    while session.active:
        sizes.append(session.decoding)
        session.step()
    assert sizes == [2] * 5 + [1] * 6
    together = engine.generate_codes_batch(REQUESTS[:2], options=options)
    for item, codes in zip(first, together, strict=True):
        np.testing.assert_array_equal(item.result, codes)
    np.testing.assert_array_equal(late.result, alone_codes(engine, REQUESTS[2], options))
