"""Shutdown under load: a request that outlasts the drain is ended, not cut off silently.

The real server with ``--shutdown-timeout 0.5``; one client in the middle of a long one-shot
reply, one in the middle of a stream (no ``synthesize-stop`` sent yet). On SIGTERM each
must get an ``error`` with code ``shutting-down`` and then its end event (``audio-stop``,
``synthesize-stopped``), and the log must say that the server closed the connections.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from conftest import audio_cycles, read_until, types_of
from fault_kit import Launch, start, tiny_copy
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart

pytestmark = pytest.mark.slow

LONG_TEXT = " ".join(
    f"This is sentence number {n}, which keeps the synthesis busy for a while." for n in
    range(1, 37))


async def test_requests_cut_by_shutdown_get_an_error_and_their_end(tmp_path: Path) -> None:
    launch = Launch(tmp_path / "data", tiny_copy(tmp_path / "model"),
                    extra=["--shutdown-timeout", "0.5"])
    server = start(launch, tmp_path).wait_ready()
    try:
        async with AsyncClient.from_uri(server.uri) as one_shot, \
                AsyncClient.from_uri(server.uri) as streamed:
            await one_shot.write_event(Synthesize(text=LONG_TEXT).event())
            await streamed.write_event(SynthesizeStart().event())
            for sentence in LONG_TEXT.split(". "):
                await streamed.write_event(SynthesizeChunk(text=sentence + ". ").event())
            first = await read_until(one_shot, {"audio-chunk"})
            early = await read_until(streamed, {"audio-chunk"})
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)

            rest = await read_until(one_shot, {"audio-stop"})
            errors = [e for e in rest if e.type == "error"]
            assert [e.data["code"] for e in errors] == ["shutting-down"], types_of(rest)
            assert types_of(rest).index("error") < len(rest) - 1  # before its audio-stop
            assert len(audio_cycles(first + rest)) == 1

            tail = await read_until(streamed, {"synthesize-stopped"})
            errors = [e for e in tail if e.type == "error"]
            assert [e.data["code"] for e in errors] == ["shutting-down"], types_of(tail)
            assert types_of(tail)[-2:] == ["error", "synthesize-stopped"]
            audio_cycles(early + tail)  # every audio cycle is closed
        assert server.wait_exit(60) == 0
        log = server.log
        assert "still in progress after 0.5 s" in log
        assert "The server ended 2 request(s) with a shutting-down error" in log
        assert "Client disconnected" not in log
    finally:
        server.stop()
