"""Every request ends, whatever goes wrong: a one-shot ``synthesize`` with ``audio-stop``,
a stream with ``synthesize-stopped`` (an ``error`` event may come first).

Clients that ignore ``error`` events (Home Assistant before 2025.7 reads a one-shot answer
until ``audio-stop`` with no timeout) must never be left waiting. Each error path is tried
on the real server (the test-only entry ``faulty_server.py`` makes the engine fail on cue)
with the real wyoming client.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    ServerProcess,
    audio_cycles,
    read_until,
    stream_once,
    synthesize_once,
    types_of,
)
from server_start import start_server
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

LIMIT = 80


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
           ) -> Iterator[ServerProcess]:
    process = start_server(tmp_path_factory.mktemp("endings"), shared_data_dir,
                           "--max-text-length", str(LIMIT), "--max-concurrent", "1",
                           faulty=True)
    try:
        yield process
    finally:
        process.stop()


ONE_SHOT_FAILURES = [
    (Event("synthesize", {"text": "x" * (LIMIT + 1)}), "text-too-long"),
    (Event("synthesize", {"text": "Please faultengine now."}), "synthesis-failed"),
    (Event("synthesize", {"text": "Please faultvalue now."}), "invalid-request"),
    (Event("synthesize", {"text": "Hello.", "text_format": "markdown"}),
     "unsupported-text-format"),
    (Event("synthesize", {"text": 42}), "invalid-event"),
    (Event("synthesize", {"text": "Hello.", "voice": "not an object"}), "invalid-event"),
]


@pytest.mark.parametrize(("event", "code"), ONE_SHOT_FAILURES,
                         ids=[code + str(i) for i, (_, code) in enumerate(ONE_SHOT_FAILURES)])
async def test_a_failed_one_shot_still_ends_with_audio_stop(server: ServerProcess,
                                                            event: Event, code: str) -> None:
    async with AsyncClient.from_uri(server.uri) as client:
        await client.write_event(event)
        events = await read_until(client, {"audio-stop"})
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        assert events[0].data["code"] == code and events[0].data["text"]
        # The connection is still usable.
        events = await synthesize_once(client, "Still fine.")
        assert len(audio_cycles(events)) == 1


async def test_a_one_shot_failing_after_its_first_audio_closes_its_cycle(
        server: ServerProcess) -> None:
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "First this is fine. Then faultengine.")
    kinds = types_of(events)
    assert kinds[0] == "audio-start" and "audio-chunk" in kinds
    assert kinds[-2:] == ["error", "audio-stop"] or kinds[-3:-1] == ["error", "audio-chunk"]
    assert kinds.count("audio-stop") == 1 and kinds.count("error") == 1


@pytest.mark.parametrize(("chunks", "code"), [
    (["This stream grows. ", "y" * LIMIT], "text-too-long"),
    (["A fine sentence. ", "Then faultengine. ", "Never spoken."], "synthesis-failed"),
    (["A fine sentence. ", "Then faultvalue. ", "Never spoken."], "invalid-request"),
])
async def test_a_failed_stream_still_ends_with_synthesize_stopped(
        server: ServerProcess, chunks: list[str], code: str) -> None:
    async with AsyncClient.from_uri(server.uri) as client:
        events = await stream_once(client, chunks, compat=True)
        assert types_of(events)[-1] == "synthesize-stopped"
        assert [e.data["code"] for e in events if e.type == "error"] == [code]
        assert types_of(events).count("synthesize-stopped") == 1
        events = await stream_once(client, ["A fresh stream works. "])
        assert len(audio_cycles(events)) == 1


async def test_a_stream_refused_at_its_start_still_ends(server: ServerProcess) -> None:
    async with AsyncClient.from_uri(server.uri) as client:
        await client.write_event(Event("synthesize-start", {"text_format": "html"}))
        await client.write_event(SynthesizeChunk(text="Hello there. ").event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
        assert types_of(events) == ["error", "synthesize-stopped"]
        assert events[0].data["code"] == "unsupported-text-format"


async def test_busy_requests_still_end(server: ServerProcess) -> None:
    """--max-concurrent 1: an open stream holds the only slot; others are refused, and
    their requests still end."""
    async with AsyncClient.from_uri(server.uri) as holder, \
            AsyncClient.from_uri(server.uri) as other:
        await holder.write_event(SynthesizeStart().event())
        await holder.write_event(SynthesizeChunk(text="I hold the slot. ").event())
        await read_until(holder, {"audio-stop"})
        events = await synthesize_once(other, "Me too, please.")
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        assert events[0].data["code"] == "busy"
        events = await stream_once(other, ["Me too. "])
        assert types_of(events) == ["error", "synthesize-stopped"]
        assert events[0].data["code"] == "busy"
        await holder.write_event(SynthesizeStop().event())
        assert types_of(await read_until(holder, {"synthesize-stopped"}))[-1] == \
            "synthesize-stopped"
        # The slot is free again.
        events = await synthesize_once(other, "Now it is my turn.")
        assert len(audio_cycles(events)) == 1
