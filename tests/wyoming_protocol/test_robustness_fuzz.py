"""Property-based: random event sequences and byte strings never hurt the server.

Hypothesis builds connections out of well-formed events of known and unknown types with
random data (wrong field types included), frames with inline data, bogus lengths and
random bytes. Each connection sends its frames to the real server subprocess, sometimes
reads for a moment, then goes away. After every example a fresh connection must get an
``info`` from ``describe``; after the run the server must synthesize correctly and its log
must hold no traceback (a handler exception would be a bug even if the connection
survived).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator

import pytest
from conftest import (
    ServerProcess,
    audio_cycles,
    describe,
    free_port,
    pcm_bytes,
    stream,
    synthesize,
    tiny_server_args,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

EVENT_TYPES = ["describe", "synthesize", "synthesize-start", "synthesize-chunk",
               "synthesize-stop", "synthesize-stopped", "audio-start", "audio-chunk",
               "audio-stop", "info", "error", "ping", "transcribe", "run-pipeline"]
FIELD_NAMES = ["text", "voice", "text_format", "name", "language", "speaker", "context",
               "rate"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=24),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
event_data = st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=6), json_values,
                             max_size=4)
event_type = st.sampled_from(EVENT_TYPES) | st.text(max_size=12)


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["event", "inline", "bogus-length", "bytes", "json-line"]))
    etype = draw(event_type)
    data = draw(event_data)
    if kind == "event":
        blob = json.dumps(data).encode() if data else b""
        payload = draw(st.binary(max_size=48))
        header: dict = {"type": etype}
        if blob:
            header["data_length"] = len(blob)
        if payload:
            header["payload_length"] = len(payload)
        return json.dumps(header).encode() + b"\n" + blob + payload
    if kind == "inline":
        return json.dumps({"type": etype, "data": data}).encode() + b"\n"
    if kind == "bogus-length":
        key = draw(st.sampled_from(["data_length", "payload_length"]))
        length = draw(st.integers(-(2**40), 2**40) | st.text(max_size=4) | st.floats())
        return (json.dumps({"type": etype, key: length}).encode() + b"\n"
                + draw(st.binary(max_size=64)))
    if kind == "json-line":
        return json.dumps(draw(json_values)).encode() + b"\n"
    return draw(st.binary(max_size=160))


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir
                ) -> Iterator[ServerProcess]:
    port = free_port()
    log = tmp_path_factory.mktemp("fuzz") / "server.log"
    server = ServerProcess(tiny_server_args(port, shared_data_dir, "--read-timeout", "1",
                                            "--max-text-length", "200"), log, port).start()
    try:
        yield server.wait_ready()
    finally:
        server.stop()


async def _send(server: ServerProcess, chunks: list[bytes], linger: bool) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        with contextlib.suppress(ConnectionError, OSError):
            for chunk in chunks:
                writer.write(chunk)
                await writer.drain()
            if linger:  # read whatever comes back for a moment (exercises the write path)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.3):
                        while await reader.read(65536):
                            pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


async def _example(server: ServerProcess, chunks: list[bytes], linger: bool) -> None:
    await _send(server, chunks, linger)
    info = await describe(server.uri)
    assert info.tts and info.tts[0].installed


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(chunks=st.lists(frames(), min_size=1, max_size=6), linger=st.booleans())
def test_random_traffic_never_hurts_the_server(fuzz_server: ServerProcess,
                                              chunks: list[bytes], linger: bool) -> None:
    assert fuzz_server.alive, fuzz_server.log
    asyncio.run(_example(fuzz_server, chunks, linger))


async def test_after_the_fuzzing_the_server_still_synthesizes(fuzz_server: ServerProcess
                                                              ) -> None:
    """Runs after the property test (same module server): correct audio, no tracebacks."""
    events = await synthesize(fuzz_server.uri, "Still speaking clearly.")
    assert len(audio_cycles(events)) == 1 and pcm_bytes(events)
    events = await stream(fuzz_server.uri, ["Streaming ", "works too. "])
    assert len(audio_cycles(events)) == 1
    assert fuzz_server.alive
    assert "Traceback" not in fuzz_server.log
    assert "Unexpected error" not in fuzz_server.log
