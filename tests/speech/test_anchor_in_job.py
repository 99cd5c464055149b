"""One trip down per request: a designed voice's anchor that is not built yet is built in the
request's own job, on the worker's thread, before the request decodes (the text thread never
waits for the worker). Real tiny engine and worker; the queue's rules on their own below."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.speech import SpeechService, SpeechSettings, VoiceWish
from wyoming_omnivoice.speech.job_queue import JobQueue
from wyoming_omnivoice.speech.jobs import Call, Job
from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.voices import VoiceLibrary
from wyoming_omnivoice.voices.assets import prepare_voices
from wyoming_omnivoice.voices.catalog import VoiceCatalog
from wyoming_omnivoice.voices.config import parse_voices_document
from wyoming_omnivoice.voices.engine_thread import AfterBackground

OPTIONS = DecodeOptions(num_step=8)
TEXT = "The kitchen lights are on."


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu")


@dataclass
class Served:
    service: SpeechService
    voices: VoiceLibrary
    worker: InferenceWorker


@pytest.fixture
async def served(engine: Engine, tmp_path: Path) -> AsyncIterator[Served]:
    presets = parse_voices_document({"voices": [
        {"name": "first", "instruct": "female", "languages": ["en"]},
        {"name": "later", "instruct": "male, low pitch", "languages": ["de"]}]}, source="t")
    catalog, assets = prepare_voices(engine, VoiceCatalog(presets), "first",
                                     tmp_path / "data", OPTIONS, batch_size=8, preload=())
    voices = VoiceLibrary(catalog, "first", assets)
    worker = InferenceWorker(engine, options=OPTIONS)
    voices.attach(worker)
    make_request = make_request_factory(voices, False, deterministic=True)
    service = SpeechService(worker, voices, make_request,
                            SpeechSettings(sample_rate=engine.sample_rate))
    worker.start()
    yield Served(service, voices, worker)
    service.close()
    worker.stop()


async def speak(service: SpeechService, voice: str) -> np.ndarray:
    said = await service.one_shot(TEXT, VoiceWish(name=voice))
    assert said is not None
    try:
        return np.concatenate([await piece.audio() for piece in said.pieces])
    finally:
        said.speech.close()


@pytest.mark.slow
async def test_a_missing_anchor_is_built_in_the_requests_own_job(
        served: Served, engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    later = served.voices.get("later")
    assert later is not None and served.voices.anchor_missing(later)
    assert served.voices.voice_part(later).ref_codes is None  # the text thread never waits
    with caplog.at_level(logging.INFO):
        audio = await speak(served.service, "later")
    (built,) = [r for r in caplog.records
                if r.getMessage() == "Building the anchor of voice 'later' on its first use"]
    assert built.threadName == "omnivoice-worker"
    assert served.worker.jobs_done == 1 and served.worker.calls_done == 1
    assert not served.voices.anchor_missing(later)
    # The same audio as the request gets once the anchor is there (the seed: the voice's).
    request = make_request_factory(served.voices, False, deterministic=True)(later, TEXT)
    assert request.ref_codes is not None
    np.testing.assert_array_equal(audio, engine.synthesize_batch([request], options=OPTIONS)[0])
    again = await speak(served.service, "later")
    np.testing.assert_array_equal(again, audio)
    assert served.worker.calls_done == 1  # built once


@pytest.mark.slow
async def test_a_voice_with_its_anchor_goes_down_ready(served: Served) -> None:
    await speak(served.service, "first")
    assert served.worker.jobs_done == 1 and served.worker.calls_done == 0


# --------------------------------------------------------------------------- the queue


def job_of(loop: asyncio.AbstractEventLoop, request: Any, prepare: Any = None) -> Job:
    return Job(request=request, loop=loop, future=loop.create_future(),
               started=loop.create_future(), prepare=prepare)


def run(queue: JobQueue, call: Call | None) -> None:
    assert call is not None
    queue.run_call(call, engine=None)  # type: ignore[arg-type]


async def test_a_job_waits_for_its_preparation_and_others_pass_it() -> None:
    loop = asyncio.get_running_loop()
    queue = JobQueue(max_queued=4, max_batch=8, batch_window_s=0.0, in_flight=lambda: 0)
    queue.open()
    done = SynthesisRequest(text="Prepared.", seed=2)
    prepared = job_of(loop, SynthesisRequest(text="Raw."), lambda engine, request: done)
    ready = job_of(loop, SynthesisRequest(text="Ready."))
    queue.put(prepared)
    queue.put(ready)
    with queue.changed:
        assert queue.waiting == 1 and queue.has_calls
        assert queue.take(8) == [ready]  # the ready job does not wait behind it
        run(queue, queue.next_call())
        assert queue.take(8) == [prepared] and prepared.request is done
    assert queue.load == 2 and queue.counts.calls_done == 1


async def test_a_preparation_waiting_for_the_background_runs_again_after_it() -> None:
    loop = asyncio.get_running_loop()
    queue = JobQueue(max_queued=4, max_batch=8, batch_window_s=0.0, in_flight=lambda: 0)
    queue.open()
    tries: list[int] = []
    done = SynthesisRequest(text="With its anchor.")

    def prepare(engine: Engine, request: SynthesisRequest) -> SynthesisRequest:
        tries.append(1)
        if len(tries) == 1:
            raise AfterBackground("the background batch holds this voice")
        return done

    job = job_of(loop, SynthesisRequest(text="Without."), prepare)
    queue.put(job)
    run(queue, queue.next_call())
    with queue.changed:
        assert queue.take(8) == [] and queue.next_call() is None  # not again in the hook
    queue.background_ended()
    run(queue, queue.next_call())
    assert queue.take(8) == [job] and job.request is done and len(tries) == 2


async def test_a_failed_preparation_fails_only_its_job() -> None:
    loop = asyncio.get_running_loop()
    queue = JobQueue(max_queued=4, max_batch=8, batch_window_s=0.0, in_flight=lambda: 0)
    queue.open()

    def broken(engine: Engine, request: SynthesisRequest) -> SynthesisRequest:
        raise RuntimeError("the anchor could not be read")

    job = job_of(loop, SynthesisRequest(text="Broken."), broken)
    queue.put(job)
    run(queue, queue.next_call())
    with pytest.raises(RuntimeError, match="could not be read"):
        await asyncio.wait_for(job.future, 5)
    assert queue.load == 0
