"""The Wyoming handler in process, against a fake speech backend: protocol translation only.

A real :class:`SpeechService` over a fake worker (no engine: each piece's "audio" is a
constant tone whose length encodes the piece's text length), on a real socket pair with the
real ``wyoming`` event reader. Each test runs in milliseconds; the real server process and
engine are covered by ``test_server_protocol.py`` and the robustness suites.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

from wyoming_omnivoice.speech import SpeechService, SpeechSettings
from wyoming_omnivoice.speech.pacing import DecodeSpeed
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.library import VoiceLibrary
from wyoming_omnivoice.wyoming_protocol.context import WyomingContext, WyomingSettings
from wyoming_omnivoice.wyoming_protocol.handler import OmniVoiceEventHandler

RATE = 24000
VOICES = VoiceCatalog([
    VoicePreset(name="anna", description="Anna", languages=("en",), instruct="female"),
    VoicePreset(name="bernd", description="Bernd", languages=("de",), instruct="male"),
])


@dataclass
class FakeRequest:
    voice: str
    text: str


class FakeJob:
    def __init__(self, request: FakeRequest, loop: asyncio.AbstractEventLoop,
                 hold: asyncio.Event | None) -> None:
        self.request = request
        self.started: asyncio.Future[None] = loop.create_future()
        self.future: asyncio.Future[np.ndarray] = loop.create_future()
        self.cancelled = False
        loop.create_task(self._run(hold))

    async def _run(self, hold: asyncio.Event | None) -> None:
        self.started.set_result(None)
        if hold is not None:
            await hold.wait()
        if not self.future.done():
            self.future.set_result(tone(self.request.text))

    def cancel(self) -> None:
        self.cancelled = True
        if not self.future.done():
            self.future.cancel()


class FakeWorker:
    """The worker's interface to the service, decoding instantly (or when released)."""

    def __init__(self) -> None:
        self.submitted: list[FakeRequest] = []
        self.jobs: list[FakeJob] = []
        self.hold: asyncio.Event | None = None
        self.alive = True
        self.queued = 0
        #: The pacing reads the host's decode speed from the worker (a prior here).
        self.speed = DecodeSpeed()

    def submit(self, request: FakeRequest) -> FakeJob:
        self.submitted.append(request)
        job = FakeJob(request, asyncio.get_running_loop(), self.hold)
        self.jobs.append(job)
        return job


def tone(text: str) -> np.ndarray:
    """100 samples of 0.25 per character of the piece."""
    return np.full(100 * len(text), 0.25, dtype=np.float32)


def pcm_of(text: str) -> bytes:
    return np.round(tone(text) * 32767.0).astype("<i2").tobytes()


@dataclass
class Pair:
    worker: FakeWorker
    service: SpeechService
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def send(self, *events: Event) -> None:
        for event in events:
            await async_write_event(event, self.writer)

    async def read_until(self, end: str) -> list[Event]:
        events: list[Event] = []
        while True:
            event = await asyncio.wait_for(async_read_event(self.reader), 5)
            assert event is not None, f"connection closed after {[e.type for e in events]}"
            events.append(event)
            if event.type == end:
                return events


@pytest.fixture
async def pair(request: pytest.FixtureRequest) -> AsyncIterator[Pair]:
    options: dict[str, Any] = getattr(request, "param", {})
    worker = FakeWorker()
    service = SpeechService(
        worker, VoiceLibrary(VOICES, "anna"),
        lambda voice, text, requested=None: FakeRequest(voice.name, text),  # type: ignore[arg-type]
        SpeechSettings(sample_rate=RATE,
                       max_text_length=options.get("max_text_length", 5000),
                       max_concurrent=options.get("max_concurrent", 4)))
    # No lead-in unless a test asks for one: the others compare the pieces' audio exactly.
    context = WyomingContext(service=service, settings=WyomingSettings(
        samples_per_chunk=1024, streaming=options.get("streaming", True),
        lead_in_ms=options.get("lead_in_ms", 0)))
    ours, theirs = socket.socketpair()
    server_reader, server_writer = await asyncio.open_connection(sock=ours)
    reader, writer = await asyncio.open_connection(sock=theirs)
    handler = OmniVoiceEventHandler(server_reader, server_writer, context)
    task = asyncio.create_task(handler.run())
    yield Pair(worker, service, reader, writer)
    writer.close()
    task.cancel()
    service.close()


def types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def audio(events: list[Event]) -> bytes:
    return b"".join(event.payload or b"" for event in events if event.type == "audio-chunk")


async def test_describe_lists_the_catalogue(pair: Pair) -> None:
    await pair.send(Describe().event())
    (event,) = await pair.read_until("info")
    assert [voice.name for voice in Info.from_event(event).tts[0].voices] == ["anna", "bernd"]


async def test_one_shot_is_one_cycle_of_the_pieces_audio(pair: Pair) -> None:
    text = "The kitchen light is on. The door is locked."
    await pair.send(Synthesize(text=text).event())
    events = await pair.read_until("audio-stop")
    assert types(events)[0] == "audio-start" and "error" not in types(events)
    spoken = [request.text for request in pair.worker.submitted]
    assert "".join(spoken).replace(" ", "") == text.replace(" ", "")
    assert audio(events) == b"".join(pcm_of(piece) for piece in spoken)


async def test_a_voice_by_name_and_an_unknown_name_by_its_language(pair: Pair) -> None:
    await pair.send(Synthesize(text="Hallo.", voice=SynthesizeVoice(name="bernd")).event())
    await pair.read_until("audio-stop")
    # Raw data: wyoming's SynthesizeVoice drops the language when a name is given.
    await pair.send(Event("synthesize", {"text": "Hallo.",
                                         "voice": {"name": "nobody", "language": "de"}}))
    await pair.read_until("audio-stop")
    await pair.send(Synthesize(text="Hello.").event())
    await pair.read_until("audio-stop")
    assert [request.voice for request in pair.worker.submitted] == ["bernd", "bernd", "anna"]


async def test_stream_speaks_sentence_by_sentence_and_ends_with_stopped(pair: Pair) -> None:
    await pair.send(SynthesizeStart().event(),
                    SynthesizeChunk(text="First sentence here. Sec").event(),
                    SynthesizeChunk(text="ond one now.").event(),
                    SynthesizeStop().event())
    events = await pair.read_until("synthesize-stopped")
    assert types(events).count("audio-start") == 2 == types(events).count("audio-stop")
    assert [request.text for request in pair.worker.submitted] == [
        "First sentence here.", "Second one now."]


@pytest.mark.parametrize(("event", "code"), [
    (Synthesize(text="x" * 50), "text-too-long"),
    (Event("synthesize", {"text": "Hi.", "text_format": "xml"}), "unsupported-text-format"),
    (Event("synthesize", {"text": 5}), "invalid-event"),
])
@pytest.mark.parametrize("pair", [{"max_text_length": 20}], indirect=True)
async def test_a_refused_one_shot_gets_its_error_and_an_empty_cycle(
        pair: Pair, event: Synthesize | Event, code: str) -> None:
    await pair.send(event if isinstance(event, Event) else event.event())
    events = await pair.read_until("audio-stop")
    assert types(events) == ["error", "audio-start", "audio-stop"]
    assert events[0].data["code"] == code
    assert pair.worker.submitted == []


async def test_blank_text_is_a_short_silent_cycle(pair: Pair) -> None:
    await pair.send(Synthesize(text="  **  ").event())
    events = await pair.read_until("audio-stop")
    assert types(events) == ["audio-start", "audio-chunk", "audio-stop"]
    assert set(audio(events)) == {0} and pair.worker.submitted == []


async def test_shutting_down_refuses_new_requests(pair: Pair) -> None:
    pair.service.draining = True
    await pair.send(Synthesize(text="Hello.").event())
    events = await pair.read_until("audio-stop")
    assert events[0].data["code"] == "shutting-down"
    await pair.send(SynthesizeStart().event(), SynthesizeStop().event())
    events = await pair.read_until("synthesize-stopped")
    assert types(events) == ["error", "synthesize-stopped"]


@pytest.mark.parametrize("pair", [{"max_concurrent": 1}], indirect=True)
async def test_busy_past_max_concurrent_and_the_slot_is_freed(pair: Pair) -> None:
    pair.worker.hold = asyncio.Event()
    await pair.send(Synthesize(text="One.").event(), Synthesize(text="Two.").event())
    while not pair.worker.submitted:
        await asyncio.sleep(0.001)
    assert pair.service.active == 1
    pair.worker.hold.set()
    events = await pair.read_until("audio-stop")
    events += await pair.read_until("audio-stop")
    assert types(events).count("error") == 1
    assert [e.data["code"] for e in events if e.type == "error"] == ["busy"]
    assert pair.service.active == 0


async def test_a_client_that_leaves_cancels_its_pending_pieces(pair: Pair) -> None:
    pair.worker.hold = asyncio.Event()
    await pair.send(Synthesize(text="One sentence. Another sentence. A third one.").event())
    while not pair.worker.jobs:
        await asyncio.sleep(0.001)
    pair.writer.close()
    def settled() -> bool:
        return all(job.cancelled for job in pair.worker.jobs) and pair.service.active == 0

    for _ in range(2000):  # a bound for a broken handler, not a timing assertion
        if settled():
            break
        await asyncio.sleep(0.005)
    assert settled()
    assert not any(job.future.done() and not job.future.cancelled()
                   for job in pair.worker.jobs)  # nothing was decoded for a gone client


@pytest.mark.parametrize("pair", [{"streaming": False}], indirect=True)
async def test_without_streaming_the_stream_text_is_spoken_as_one(pair: Pair) -> None:
    await pair.send(SynthesizeStart().event(), SynthesizeChunk(text="Hello there. ").event(),
                    SynthesizeChunk(text="General.").event(), SynthesizeStop().event())
    events = await pair.read_until("synthesize-stopped")
    assert types(events).count("audio-start") == 1
    assert "".join(request.text for request in pair.worker.submitted) != ""


# ---- pacing: how much text each piece speaks (speech/pacing.py) ------------------------

THREE = ("The living room lights are now turned on. The kitchen is at twenty one degrees, "
         "and the heating will switch off at ten tonight. Tomorrow will be sunny.")


def host(pair: Pair, overhead: float, per_frame: float) -> None:
    """Teach the service this host's decode speed, as the real worker does."""
    for frames in (40, 80, 120):
        pair.worker.speed.record([frames], overhead + per_frame * frames)


async def test_a_fast_host_speaks_the_rest_in_one_piece_after_the_first(pair: Pair) -> None:
    host(pair, 0.01, 0.001)
    await pair.send(Synthesize(text=THREE).event())
    events = await pair.read_until("audio-stop")
    assert types(events).count("audio-start") == 1
    spoken = [request.text for request in pair.worker.submitted]
    assert spoken == ["The living room lights are now turned on.", THREE.split(". ", 1)[1]]
    assert audio(events) == b"".join(pcm_of(piece) for piece in spoken)


async def test_a_slow_host_speaks_clause_by_clause_in_one_cycle(pair: Pair) -> None:
    host(pair, 2.0, 0.2)  # far slower than real time: every later piece is one clause
    await pair.send(Synthesize(text=THREE).event())
    events = await pair.read_until("audio-stop")
    assert types(events).count("audio-start") == 1 == types(events).count("audio-stop")
    spoken = [request.text for request in pair.worker.submitted]
    assert spoken == ["The living room lights are now turned on.",
                      "The kitchen is at twenty one degrees,",
                      "and the heating will switch off at ten tonight.",
                      "Tomorrow will be sunny."]
    assert audio(events) == b"".join(pcm_of(piece) for piece in spoken)


async def test_a_stream_merged_by_the_pacing_keeps_whole_cycles(pair: Pair) -> None:
    host(pair, 0.01, 0.001)
    pair.worker.hold = asyncio.Event()  # the first piece decodes until released
    await pair.send(SynthesizeStart().event(),
                    SynthesizeChunk(text="First sentence here. Second one now. ").event(),
                    SynthesizeChunk(text="Third one, which is a little longer than the "
                                         "others, comes last.").event(),
                    SynthesizeStop().event())
    await asyncio.sleep(0.2)
    pair.worker.hold.set()
    events = await pair.read_until("synthesize-stopped")
    assert types(events).count("audio-start") == types(events).count("audio-stop")
    spoken = [request.text for request in pair.worker.submitted]
    assert spoken[0] == "First sentence here."
    assert " ".join(spoken) == ("First sentence here. Second one now. Third one, which is a "
                                "little longer than the others, comes last.")
    assert len(spoken) == 2  # the rest came while the first decoded: one piece
    assert audio(events) == b"".join(pcm_of(piece) for piece in spoken)
    # No empty cycle for the pieces the merged one spoke.
    starts = [i for i, t in enumerate(types(events)) if t == "audio-start"]
    assert all(types(events)[i + 1] == "audio-chunk" for i in starts)


# ---- the lead-in (--lead-in-ms) -------------------------------------------------------

LEAD_IN_SAMPLES = 7 * 1024  # 300 ms in whole chunks of 1024 samples: 299 ms


def cycles(events: list[Event]) -> list[bytes]:
    """Each audio cycle's PCM."""
    found: list[bytes] = []
    for event in events:
        if event.type == "audio-start":
            found.append(b"")
        elif event.type == "audio-chunk":
            found[-1] += event.payload or b""
    return found


@pytest.mark.parametrize("pair", [{"lead_in_ms": 300}], indirect=True)
async def test_the_lead_in_comes_right_before_the_first_audio(pair: Pair) -> None:
    text = "The kitchen light is on. The door is locked."
    await pair.send(Synthesize(text=text).event())
    events = await pair.read_until("audio-stop")
    assert types(events).count("audio-start") == 1 and "error" not in types(events)
    spoken = [request.text for request in pair.worker.submitted]
    assert audio(events) == bytes(LEAD_IN_SAMPLES * 2) + b"".join(pcm_of(p) for p in spoken)


@pytest.mark.parametrize("pair", [{"lead_in_ms": 300}], indirect=True)
async def test_a_request_failing_before_any_audio_gets_its_error_first(pair: Pair) -> None:
    """Nothing is written before the first audio: a failure then still gets its error
    first and an empty cycle, with no lead-in."""
    pair.worker.hold = asyncio.Event()
    await pair.send(Synthesize(text="One sentence.").event())
    while not pair.worker.jobs:
        await asyncio.sleep(0.001)
    pair.worker.jobs[0].future.set_exception(RuntimeError("the engine failed"))
    events = await pair.read_until("audio-stop")
    assert types(events) == ["error", "audio-start", "audio-stop"]


@pytest.mark.parametrize("pair", [{"lead_in_ms": 300}], indirect=True)
async def test_a_stream_gets_the_lead_in_before_its_first_sentence_only(pair: Pair) -> None:
    await pair.send(SynthesizeStart().event(),
                    SynthesizeChunk(text="First sentence here. ").event(),
                    SynthesizeChunk(text="Second one now.").event(), SynthesizeStop().event())
    events = await pair.read_until("synthesize-stopped")
    assert cycles(events) == [bytes(LEAD_IN_SAMPLES * 2) + pcm_of("First sentence here."),
                              pcm_of("Second one now.")]
    # The next reply on the connection is a reply of its own: its lead-in again.
    await pair.send(Synthesize(text="Again.").event())
    assert cycles(await pair.read_until("audio-stop")) == [
        bytes(LEAD_IN_SAMPLES * 2) + pcm_of("Again.")]


@pytest.mark.parametrize("pair", [{"lead_in_ms": 300, "max_text_length": 20}],
                         indirect=True)
async def test_no_lead_in_for_nothing_to_say_or_a_refusal(pair: Pair) -> None:
    await pair.send(Synthesize(text="  **  ").event())
    events = await pair.read_until("audio-stop")
    assert types(events) == ["audio-start", "audio-chunk", "audio-stop"]
    assert len(audio(events)) == int(0.02 * RATE) * 2  # the 20 ms silent cycle, as before
    await pair.send(Synthesize(text="x" * 50).event())
    events = await pair.read_until("audio-stop")
    assert types(events) == ["error", "audio-start", "audio-stop"]
