"""The inference worker with the real tiny engine: batching, cancellation, busy, failures."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.speech.worker import BusyError, InferenceWorker, WorkerStoppedError

LONG_TEXT = " ".join(["This sentence keeps the worker busy for a while."] * 6)
OPTIONS = DecodeOptions(num_step=8)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu")


@pytest.fixture
def make_worker(engine: Engine) -> Iterator:
    workers: list[InferenceWorker] = []

    def make(**kwargs) -> InferenceWorker:
        kwargs.setdefault("options", OPTIONS)
        worker = InferenceWorker(engine, **kwargs)
        worker.start()
        workers.append(worker)
        return worker

    yield make
    for worker in workers:
        worker.stop()


def request(text: str, seed: int = 1, **kwargs) -> SynthesisRequest:
    return SynthesisRequest(text=text, language="en", seed=seed, **kwargs)


async def test_lone_request_is_synthesized(make_worker) -> None:
    worker = make_worker()
    job = worker.submit(request("Hello there."))
    audio = await job.future
    assert audio.dtype == np.float32 and audio.size > 0
    assert job.started.done()
    assert worker.batches == 1 and worker.largest_batch == 1


async def test_requests_pending_while_busy_are_batched(make_worker, engine: Engine) -> None:
    """Gated step scheduling (and the former whole batches): requests that arrive during a
    decode wait for it to end, then share the next batch (``step``, CUDA's default, lets them
    join the running decode: tests/speech/test_step_scheduling.py)."""
    worker = make_worker(batch_window_s=0.0, scheduling="gated")
    first = worker.submit(request(LONG_TEXT))
    await first.started  # the worker is decoding the first request now
    second = worker.submit(request("Second.", seed=2))
    third = worker.submit(request("Third one here.", seed=3))
    results = await asyncio.gather(first.future, second.future, third.future)
    assert worker.largest_batch == 2 and worker.batches == 2
    # Batching does not change results: each equals its lone synthesis with the same seed.
    alone = engine.synthesize_batch([request("Second.", seed=2)], options=OPTIONS)[0]
    np.testing.assert_allclose(results[1], alone, atol=1e-5)


async def test_cancelled_job_is_dropped_before_it_starts(make_worker) -> None:
    worker = make_worker()
    first = worker.submit(request(LONG_TEXT))
    await first.started
    doomed = worker.submit(request("Nobody wants this.", seed=5))
    kept = worker.submit(request("But this one.", seed=6))
    doomed.cancel()
    await asyncio.gather(first.future, kept.future)
    assert doomed.future.cancelled()
    assert worker.jobs_done == 2


async def test_queue_bound_raises_busy(make_worker) -> None:
    worker = make_worker(max_queued=2)
    first = worker.submit(request(LONG_TEXT))
    await first.started
    second = worker.submit(request("Queued."))
    with pytest.raises(BusyError):
        worker.submit(request("One too many."))
    await asyncio.gather(first.future, second.future)
    third = worker.submit(request("Room again."))
    assert (await third.future).size > 0


async def test_engine_error_fails_only_that_request(make_worker) -> None:
    worker = make_worker(batch_window_s=0.0)
    first = worker.submit(request(LONG_TEXT))
    await first.started
    bad = worker.submit(request("Bad reference.", ref_codes=np.zeros((3, 4), dtype=np.int64),
                                ref_text="wrong shape"))
    good = worker.submit(request("Good request.", seed=7))
    await first.future
    with pytest.raises(ValueError):
        await bad.future
    assert (await good.future).size > 0
    assert worker.alive
    after = worker.submit(request("Still alive."))
    assert (await after.future).size > 0


async def test_stopped_worker_refuses_jobs(engine: Engine) -> None:
    worker = InferenceWorker(engine, options=OPTIONS)
    with pytest.raises(WorkerStoppedError):
        worker.submit(request("Not started."))
    worker.start()
    worker.stop()
    with pytest.raises(WorkerStoppedError):
        worker.submit(request("Stopped."))
    assert not worker.alive


async def test_window_waits_only_for_requests_in_flight(make_worker) -> None:
    """With other requests in flight, jobs submitted together share one batch."""
    in_flight = {"n": 3}
    worker = make_worker(batch_window_s=0.010, in_flight=lambda: in_flight["n"])
    jobs = [worker.submit(request(f"Request {i}.", seed=i)) for i in range(3)]
    await asyncio.gather(*(job.future for job in jobs))
    assert worker.jobs_done == 3
    assert worker.batches <= 2  # the 10 ms window let at least two share a decode


def test_anchor_sentences_are_about_three_seconds() -> None:
    """Anchors ride along with every request: long enough to pin a voice, short to decode."""
    from wyoming_omnivoice.anchors.cache import ANCHOR_TEXTS
    from wyoming_omnivoice.engine.prompt.duration import estimate_num_frames

    for language, text in ANCHOR_TEXTS.items():
        frames = estimate_num_frames(text, None, None, 1.0)
        assert 60 <= frames <= 85, (language, frames)


async def test_calls_run_on_the_worker_thread_between_batches(make_worker,
                                                              engine: Engine) -> None:
    """Engine work other than synthesis (a voice folder's reference) runs on the one thread
    that owns the engine, never beside a decode."""
    import threading

    from wyoming_omnivoice.voices.assets import WorkerEncoder

    worker = make_worker()
    busy = worker.submit(request(LONG_TEXT))
    await busy.started
    seen: list[str] = []

    def where(_engine: Engine) -> str:
        seen.append(threading.current_thread().name)
        return "done"

    call = worker.call(where)
    assert await asyncio.wrap_future(call) == "done"
    assert busy.future.done()  # it waited for the running decode
    assert seen == ["omnivoice-worker"]
    rate = 24000
    wav = (0.3 * np.sin(np.arange(3 * rate) * 2 * np.pi * 220 / rate)).astype(np.float32)
    encoder = WorkerEncoder(worker, engine.fingerprint)
    prompt = await asyncio.to_thread(encoder.encode_reference, wav, rate, "A test tone.")
    assert prompt.codes.shape[0] == 8 and worker.calls_done == 2
    with pytest.raises(ValueError, match="only silence"):
        await asyncio.to_thread(encoder.encode_reference, np.zeros(rate, np.float32), rate,
                                "Nothing.")


async def test_lone_request_does_not_wait_for_the_window(make_worker, caplog) -> None:

    in_flight = {"n": 1}
    worker = make_worker(batch_window_s=0.010, in_flight=lambda: in_flight["n"])
    with caplog.at_level(logging.DEBUG, logger="wyoming_omnivoice.speech.worker"):
        await worker.submit(request("Alone.")).future
        assert not any("Batch window" in r.getMessage() for r in caplog.records)
        in_flight["n"] = 2  # another request is on its way: the window waits for it
        await worker.submit(request("Not alone.", seed=2)).future
    assert any("Batch window" in r.getMessage() for r in caplog.records)

