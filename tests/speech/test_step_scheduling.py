"""The worker's step scheduling with the real tiny engine: requests join a running decode at
the next step, and background work yields to them at every step boundary.

The backbone forward is watched (and made slow where a test needs a request to arrive
during it) by wrapping the decoder's step runner: every forward appends which items it ran
to an event list on the worker thread, and a gated forward lasts until the test has done
what it does "meanwhile". Assertions read the order of events and step counts, never times.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.speech.worker import InferenceWorker, WorkerStoppedError

OPTIONS = DecodeOptions(num_step=8)
#: Target lengths tell the items apart in the events.
BACKGROUND = SynthesisRequest(text="The background anchor is made now.", language="en",
                              seed=11, num_frames=70)


def req(text: str, seed: int, frames: int) -> SynthesisRequest:
    return SynthesisRequest(text=text, language="en", seed=seed, num_frames=frames)


class Watch:
    """Events of the worker thread; ``gate(n)`` makes the n-th forward wait for ``go(n)``."""

    def __init__(self, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[Any] = []
        self.forwards = 0
        self._gates: dict[int, tuple[threading.Event, threading.Event]] = {}
        original = engine.decoder._step
        watch = self

        def step(batch: Any, *args: Any, **kwargs: Any) -> Any:
            runner = original(batch, *args, **kwargs)

            class Watched:
                def run(self, stats: Any) -> Any:
                    watch.forwards += 1
                    watch.events.append(tuple(batch.t_lens))
                    gate = watch._gates.get(watch.forwards)
                    if gate is not None:
                        gate[0].set()
                        assert gate[1].wait(60), "the test never released the forward"
                    return runner.run(stats)
            return Watched()

        monkeypatch.setattr(engine.decoder, "_step", step)

    def gate(self, *forwards: int) -> None:
        for forward in forwards:
            self._gates[forward] = (threading.Event(), threading.Event())

    async def meanwhile(self, forward: int) -> None:
        """Wait until the gated forward runs (the test then acts during it)."""
        assert await asyncio.to_thread(self._gates[forward][0].wait, 60)

    def go(self, forward: int | None = None) -> None:
        for number, (_, go) in self._gates.items():
            if forward is None or number == forward:
                go.set()

    def on_deliveries(self, worker: InferenceWorker) -> None:
        original = worker._deliver

        def deliver(job: Any, result: Any = None, error: Any = None) -> None:
            self.events.append(("delivered", job.request.num_frames,
                                type(error).__name__ if error is not None else "audio"))
            original(job, result=result, error=error)

        worker._deliver = deliver  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu")


@pytest.fixture
def watch(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Watch:
    return Watch(engine, monkeypatch)


@pytest.fixture
def make_worker(engine: Engine, watch: Watch) -> Iterator[Any]:
    workers: list[InferenceWorker] = []

    def make(**kwargs: Any) -> InferenceWorker:
        kwargs.setdefault("options", OPTIONS)
        kwargs.setdefault("batch_window_s", 0.0)
        worker = InferenceWorker(engine, **kwargs)
        watch.on_deliveries(worker)
        worker.start()
        workers.append(worker)
        return worker

    yield make
    watch.go()
    for worker in workers:
        worker.stop()


def alone_audio(engine: Engine, request: SynthesisRequest) -> np.ndarray:
    return engine.synthesize_batch([request], options=OPTIONS)[0]


async def test_request_comes_before_a_background_anchor(make_worker, watch: Watch,
                                                        engine: Engine) -> None:
    """A request that arrives during a background decode's forward stops that forward (the
    CPU's ForwardInterrupt), is decoded from the very next forward on and gets its audio
    before the background runs its stopped step again; the background then resumes where
    it was and makes the same codes."""
    expected = engine.generate_codes_batch([BACKGROUND], options=OPTIONS)[0]
    worker = make_worker()
    watch.events.clear()
    watch.forwards = 0
    watch.gate(3)  # the background's third forward is slow: the request arrives during it
    background = worker.call(
        lambda e: e.generate_codes_batch([BACKGROUND], options=OPTIONS)[0], background=True)
    await watch.meanwhile(3)
    job = worker.submit(req("Hello there.", 12, 45))
    watch.go(3)
    audio = await job.future
    codes = await asyncio.wrap_future(background)
    # The third background forward was stopped and ran again: 3 + 6 forwards for 8 steps.
    assert watch.events == [(70,)] * 3 + [(45,)] * 8 + [("delivered", 45, "audio")] \
        + [(70,)] * 6
    assert worker._scheduler is not None and worker._scheduler.interrupt.interrupted == 1
    np.testing.assert_array_equal(codes, expected)
    np.testing.assert_array_equal(audio, alone_audio(engine, req("Hello there.", 12, 45)))


async def test_requests_join_the_running_decode(make_worker, watch: Watch,
                                                engine: Engine) -> None:
    """Requests arriving while one decodes join it at the next step (up to max_batch); each
    gets exactly the audio it gets alone; the first leaves when its steps are done."""
    worker = make_worker(max_batch=3, scheduling="step")
    first = req("The first request is long enough.", 1, 60)
    others = [req("Second.", 2, 41), req("Third one.", 3, 42), req("Fourth, queued.", 4, 43)]
    watch.gate(2)
    job = worker.submit(first)
    await watch.meanwhile(2)
    jobs = [worker.submit(r) for r in others]
    watch.go(2)
    audios = await asyncio.gather(job.future, *(j.future for j in jobs))
    sizes = [len(e) for e in watch.events if isinstance(e[0], int)]
    assert sizes[:3] == [1, 1, 3]  # two joined at the third step; the fourth waits for room
    assert watch.events.index(("delivered", 60, "audio")) < watch.events.index((41, 42, 43))
    assert worker.largest_batch == 3 and worker.batches == 1 and worker.jobs_done == 4
    for audio, request in zip(audios, [first, *others], strict=True):
        np.testing.assert_array_equal(audio, alone_audio(engine, request))


async def test_gated_requests_start_when_the_running_ones_are_done(
        make_worker, watch: Watch, engine: Engine) -> None:
    """``gated``: requests arriving during a decode wait until the requests in it are
    done, then start together."""
    worker = make_worker(scheduling="gated")
    assert make_worker().scheduling == "gated"  # auto, on the CPU
    first = req("The first request is long enough.", 1, 60)
    others = [req("Second.", 2, 41), req("Third one.", 3, 42)]
    watch.gate(2)
    job = worker.submit(first)
    await watch.meanwhile(2)
    jobs = [worker.submit(r) for r in others]
    watch.go(2)
    audios = await asyncio.gather(job.future, *(j.future for j in jobs))
    assert watch.events == [(60,)] * 8 + [("delivered", 60, "audio")] + [(41, 42)] * 8 \
        + [("delivered", 41, "audio"), ("delivered", 42, "audio")]
    assert worker.batches == 2 and worker.largest_batch == 2
    for audio, request in zip(audios, [first, *others], strict=True):
        np.testing.assert_array_equal(audio, alone_audio(engine, request))


async def test_cancelled_request_leaves_at_the_next_step(make_worker, watch: Watch,
                                                         engine: Engine) -> None:
    worker = make_worker()
    watch.gate(3)
    with worker.queue.changed:  # both queued before the worker looks
        kept = worker.submit(req("This one is kept.", 5, 48))
        doomed = worker.submit(req("This one is cancelled.", 6, 49))
    await watch.meanwhile(3)
    doomed.cancel()
    watch.go(3)
    audio = await kept.future
    assert doomed.future.cancelled()
    assert watch.events[:3] == [(48, 49)] * 3 and watch.events[3:8] == [(48,)] * 5
    np.testing.assert_array_equal(audio, alone_audio(engine, req("This one is kept.", 5, 48)))
    assert worker.jobs_done == 1 and worker.load == 0


async def test_an_engine_error_fails_only_its_request(make_worker, engine: Engine,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    worker = make_worker()
    watched = engine.decoder._step

    def step(batch: Any, *args: Any, **kwargs: Any) -> Any:
        runner = watched(batch, *args, **kwargs)

        class Failing:
            def run(self, stats: Any) -> Any:
                if 44 in batch.t_lens:
                    raise RuntimeError("the forward of this request fails")
                return runner.run(stats)
        return Failing()

    monkeypatch.setattr(engine.decoder, "_step", step)
    with worker.queue.changed:  # one batch of three
        jobs = [worker.submit(req("Fine.", 7, 46)), worker.submit(req("Broken.", 8, 44)),
                worker.submit(req("Also fine.", 9, 47))]
    results = await asyncio.gather(*(j.future for j in jobs), return_exceptions=True)
    assert isinstance(results[1], RuntimeError)
    monkeypatch.setattr(engine.decoder, "_step", watched)
    np.testing.assert_array_equal(results[0], alone_audio(engine, req("Fine.", 7, 46)))
    np.testing.assert_array_equal(results[2], alone_audio(engine, req("Also fine.", 9, 47)))
    assert worker.alive


async def test_stop_drains_the_decode_and_ends_background_work(make_worker,
                                                               watch: Watch) -> None:
    """stop: requests decoding finish with their audio, queued ones and background work
    get WorkerStoppedError (the background at its next step boundary)."""
    worker = make_worker(max_batch=1)
    background = worker.call(
        lambda e: e.generate_codes_batch([BACKGROUND], options=OPTIONS)[0], background=True)
    watch.gate(3, 5)
    await watch.meanwhile(3)  # the background's third forward
    running = worker.submit(req("Decoding when the server stops.", 10, 51))
    queued = worker.submit(req("Still queued.", 13, 52))
    watch.go(3)
    await watch.meanwhile(5)  # the request's second forward
    worker.stop(timeout=0)
    watch.go(5)
    assert (await running.future).size > 0
    with pytest.raises(WorkerStoppedError):
        await queued.future
    with pytest.raises(WorkerStoppedError):
        await asyncio.wrap_future(background)
    assert watch.events.count((70,)) == 3 and watch.events.count((51,)) == 8


async def test_urgent_call_runs_at_the_next_step_of_background_work(
        make_worker, watch: Watch) -> None:
    """A call someone waits for (a request's own voice anchor, a studio take) stops the
    background's forward in progress and runs at once, not after the background work."""
    worker = make_worker()
    background = worker.call(
        lambda e: e.generate_codes_batch([BACKGROUND], options=OPTIONS)[0], background=True)
    watch.gate(2)
    await watch.meanwhile(2)
    urgent = worker.call(lambda e: watch.events.append("urgent"))
    watch.go(2)
    await asyncio.wrap_future(urgent)
    await asyncio.wrap_future(background)
    assert watch.events == [(70,)] * 2 + ["urgent"] + [(70,)] * 7  # the second ran again


async def test_the_worker_returns_the_free_heap_once_when_it_runs_out_of_work(
        make_worker, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once its last job is done and nothing came for TRIM_AFTER_IDLE_S, the worker returns
    the free C heap, once (never between the steps of a decode, never again while it has
    nothing to do)."""
    from wyoming_omnivoice.speech import step_scheduler

    returned = threading.Event()

    def release() -> bool:
        watch.events.append(("heap returned",))
        returned.set()
        return True

    monkeypatch.setattr(step_scheduler, "release_free_heap", release)
    monkeypatch.setattr(step_scheduler, "TRIM_AFTER_IDLE_S", 0.05)
    worker = make_worker()
    for round_ in range(2):
        watch.events.clear()
        returned.clear()
        await worker.submit(req("Hello there.", 12 + round_, 45)).future
        assert await asyncio.to_thread(returned.wait, 30)
        await asyncio.sleep(0.3)  # time for a second one, which must not come
        assert watch.events == [(45,)] * 8 + [("delivered", 45, "audio"), ("heap returned",)]
