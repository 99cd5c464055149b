"""Idle connections are closed and the number of connections is capped (real server)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import READ_TIMEOUT_S, ServerProcess, audio_cycles
from test_robustness_faults import start_server
from test_robustness_wire import Raw

#: Seconds of silence after which the idle server closes a connection with nothing running.
IDLE_S = 0.3
LONG_TEXT = " ".join(
    f"Sentence number {i} of a long announcement that keeps the server busy for a while."
    for i in range(30)
)


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
                ) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("idle"), shared_data_dir,
                   "--idle-timeout", str(IDLE_S))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
                  ) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("capped"), shared_data_dir,
                   "--max-connections", "2")
    try:
        yield server
    finally:
        server.stop()


async def closed_by_server(raw: Raw) -> bool:
    """True when the server closes the connection without sending anything first (the
    30 s bound only keeps a broken server from stalling the suite)."""
    return await asyncio.wait_for(raw.read(), 30) is None


async def test_silent_connection_is_closed(idle_server: ServerProcess) -> None:
    raw = await Raw.open(idle_server)
    assert await closed_by_server(raw)
    # A connection that opened a stream and then said nothing is gone too.
    raw = await Raw.open(idle_server)
    await raw.send_event("synthesize-start", {})
    assert await closed_by_server(raw)
    assert idle_server.alive


async def test_connection_with_work_in_progress_is_kept(idle_server: ServerProcess) -> None:
    """Synthesis of a long text outlasts the idle timeout many times over; the client sends
    nothing meanwhile and still gets all of its audio."""
    raw = await Raw.open(idle_server)
    await raw.send_event("synthesize", {"text": LONG_TEXT})
    started = time.monotonic()
    events = await raw.read_until({"audio-stop", "error"})
    took = time.monotonic() - started
    assert [e.type for e in events][-1] == "audio-stop"
    assert len(audio_cycles(events)) == 1
    assert took > IDLE_S  # it really was silent for longer than the idle timeout
    # Between requests the connection is idle again and is closed.
    assert await closed_by_server(raw)


async def test_connections_over_the_cap_are_refused(capped_server: ServerProcess) -> None:
    first, second = await Raw.open(capped_server), await Raw.open(capped_server)
    for raw in (first, second):  # a round trip: both handlers are registered
        await raw.send_event("describe")
        assert (await raw.read()).type == "info"  # type: ignore[union-attr]
    third = await Raw.open(capped_server)
    refused = await third.read()
    assert refused is not None and refused.type == "error"
    assert refused.data["code"] == "too-many-connections"
    assert await third.read() is None  # and closed
    # The open connections are unaffected.
    await first.send_event("describe")
    assert (await first.read()).type == "info"  # type: ignore[union-attr]
    # Once one closes, a new connection is served.
    second.writer.close()
    deadline = time.monotonic() + READ_TIMEOUT_S
    while True:
        fresh = await Raw.open(capped_server)
        await fresh.send_event("describe")
        answer = await fresh.read()
        fresh.writer.close()
        if answer is not None and answer.type == "info":
            break
        assert time.monotonic() < deadline, capped_server.log
        await asyncio.sleep(0.1)
    assert "--max-connections" in capped_server.log
    assert capped_server.alive
