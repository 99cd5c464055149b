"""Idle connections are closed and the number of connections is capped (real server)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import READ_TIMEOUT_S, ServerProcess, audio_cycles, describe, synthesize
from raw_client import Raw, frame
from server_start import start_server, wait_for_log

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

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
    events = await raw.read_until({"audio-stop"})
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


def rss_mib(pid: int) -> float:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


#: Small events the attacking client sends without reading: describes and bad chunks, each
#: answered (an ``info``, an ``error``). Unbounded, the answers held some 140 MiB.
ATTACK_EVENTS = 20_000


async def test_client_that_sends_without_reading_is_closed_memory_stays_bounded(
        tmp_path: Path, shared_data_dir: Path) -> None:
    """The attack: start a long synthesis, never read, keep sending small events. The
    server closes that connection once its answers pile up; its memory stays flat and
    other clients are served."""
    server = start_server(tmp_path, shared_data_dir, "--write-timeout", "600")
    try:
        assert server.process is not None
        before = rss_mib(server.process.pid)
        attacker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        attacker.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        attacker.connect(("127.0.0.1", server.port))
        attacker.sendall(frame("synthesize", {"text": LONG_TEXT}))
        small = [frame("describe"), frame("synthesize-chunk", {"text": 7})]
        with contextlib.suppress(OSError):  # OSError: the server closed the connection on us
            for index in range(ATTACK_EVENTS):
                attacker.sendall(small[index % 2])
        wait_for_log(server, "without reading the answers")
        peak = rss_mib(server.process.pid)
        assert peak - before < 64, f"RSS grew from {before:.0f} to {peak:.0f} MiB"
        # Everyone else is unaffected.
        assert (await describe(server.uri)).tts[0].installed
        events = await synthesize(server.uri, "Still serving the others.")
        assert len(audio_cycles(events)) == 1
        attacker.close()
        assert server.alive
    finally:
        server.stop()
