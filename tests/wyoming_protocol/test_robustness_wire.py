"""Hostile bytes on the wire: a real server subprocess answered through raw sockets.

Each case either gets an ``error`` event and keeps its connection (the frame was read
completely) or gets an ``error`` event and has its connection closed (frame boundaries
lost), and the server keeps serving everyone else. Read timeouts only stop a broken server
from hanging the suite; nothing here asserts on timing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import pytest
from conftest import (
    ServerProcess,
    audio_cycles,
    free_port,
    pcm_bytes,
    synthesize,
    tiny_server_args,
)
from raw_client import Raw, frame
from wyoming.event import Event

from wyoming_omnivoice.wyoming_protocol.wire import (
    MAX_DATA_BYTES,
    MAX_HEADER_BYTES,
    MAX_PAYLOAD_BYTES,
)

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

#: The hostile-client server drops a stalled frame after this many seconds.
READ_TIMEOUT_FLAG = "2"


@pytest.fixture(scope="module")
def hardened_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir
                    ) -> Iterator[ServerProcess]:
    port = free_port()
    log = tmp_path_factory.mktemp("wire-server") / "server.log"
    args = tiny_server_args(port, shared_data_dir, "--read-timeout", READ_TIMEOUT_FLAG)
    server = ServerProcess(args, log, port).start()
    try:
        yield server.wait_ready()
    finally:
        server.stop()


# --------------------------------------------------------------------------- raw helpers


def header(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def error_of(events: list[Event]) -> dict:
    errors = [e for e in events if e.type == "error"]
    assert len(errors) == 1, [e.type for e in events]
    return errors[0].data


async def assert_still_usable(raw: Raw) -> None:
    """The same connection answers describe."""
    await raw.send_event("describe")
    events = await raw.read_until({"info"})
    assert events[-1].data["tts"][0]["installed"] is True


async def assert_server_serves(server: ServerProcess) -> None:
    """A fresh connection describes and synthesizes correctly."""
    raw = await Raw.open(server)
    try:
        await assert_still_usable(raw)
    finally:
        await raw.close()
    events = await synthesize(server.uri, "Still here.")
    assert len(audio_cycles(events)) == 1
    assert len(pcm_bytes(events)) > 0


async def fatal_case(server: ServerProcess, data: bytes, code: str) -> dict:
    """Send ``data``; expect one error event with ``code``, then the connection closed."""
    raw = await Raw.open(server)
    try:
        await raw.send(data)
        events = await raw.read_to_close()
    finally:
        await raw.close()
    error = error_of(events)
    assert error["code"] == code, error
    return error


async def recoverable_case(server: ServerProcess, data: bytes, code: str,
                           one_shot: bool = False) -> dict:
    """Send ``data``; expect one error event with ``code``; the connection stays usable.

    ``one_shot``: the frame was a ``synthesize``, which still ends with ``audio-stop``.
    """
    raw = await Raw.open(server)
    try:
        await raw.send(data)
        events = await raw.read_until({"error"})
        if one_shot:
            events += await raw.read_until({"audio-stop"})
            assert [event.type for event in events] == ["error", "audio-start", "audio-stop"]
        await assert_still_usable(raw)
    finally:
        await raw.close()
    error = error_of(events)
    assert error["code"] == code, error
    return error


# --------------------------------------------------------------------------- frame-level


@pytest.mark.parametrize("line", [
    b"{not json\n",
    b"{\"type\": \"describe\"\n",
    b"\"just a string\"\n",
    b"[1, 2, 3]\n",
    b"42\n",
    b"null\n",
])
async def test_unparsable_or_non_object_header_closes_only_that_connection(
        hardened_server: ServerProcess, line: bytes) -> None:
    error = await fatal_case(hardened_server, line, "invalid-frame")
    assert "header line" in error["text"]
    await assert_server_serves(hardened_server)


async def test_invalid_utf8_header_that_reads_as_json_costs_that_event(
        hardened_server: ServerProcess) -> None:
    """The frame's lengths are known (the line reads as JSON around the bad bytes): only the
    event is refused; a ``synthesize`` still ends with its ``audio-stop``."""
    error = await recoverable_case(hardened_server, b"{\"type\": \"describe\xff\xfe\"}\n",
                                   "invalid-event")
    assert "UTF-8" in error["text"]
    line = b"{\"type\": \"synthesize\", \"data\": {\"text\": \"K\xc3\"}}\n"
    error = await recoverable_case(hardened_server, line, "invalid-event", one_shot=True)
    assert "header line is not valid UTF-8" in error["text"]


async def test_invalid_utf8_header_that_is_no_json_closes_that_connection(
        hardened_server: ServerProcess) -> None:
    error = await fatal_case(hardened_server, b"{\"type\": \xff\n", "invalid-frame")
    assert "UTF-8" in error["text"]


@pytest.mark.parametrize(("lengths", "code", "needle"), [
    ({"data_length": -5}, "invalid-frame", "negative"),
    ({"payload_length": -1}, "invalid-frame", "negative"),
    ({"data_length": "12"}, "invalid-frame", "whole number"),
    ({"data_length": 1.5}, "invalid-frame", "whole number"),
    ({"payload_length": True}, "invalid-frame", "whole number"),
    ({"data_length": 10**15}, "frame-too-large", str(MAX_DATA_BYTES)),
    ({"data_length": MAX_DATA_BYTES + 1}, "frame-too-large", "short texts"),
    ({"payload_length": 2**62}, "frame-too-large", str(MAX_PAYLOAD_BYTES)),
])
async def test_bad_lengths_are_refused_without_reading(
        hardened_server: ServerProcess, lengths: dict, code: str, needle: str) -> None:
    error = await fatal_case(hardened_server, header({"type": "synthesize", **lengths}), code)
    assert needle in error["text"]
    await assert_server_serves(hardened_server)


async def test_header_line_over_the_cap_gets_an_error(hardened_server: ServerProcess) -> None:
    line = b"{\"type\": \"describe\", \"pad\": \"" + b"x" * (MAX_HEADER_BYTES + 100) + b"\"}\n"
    error = await fatal_case(hardened_server, line, "frame-too-large")
    assert str(MAX_HEADER_BYTES) in error["text"]


async def test_megabyte_header_line_closes_connection(hardened_server: ServerProcess) -> None:
    """8 MiB of header without a newline: the server reads at most its cap, then closes."""
    raw = await Raw.open(hardened_server)
    try:
        with contextlib.suppress(ConnectionError, OSError):
            for _ in range(128):
                await raw.send(b"x" * 65536)
        events = await raw.read_to_close()
    finally:
        await raw.close()
    # The error event may be lost when the server resets a socket with unread bytes.
    assert all(e.type == "error" and e.data["code"] == "frame-too-large" for e in events)
    await assert_server_serves(hardened_server)
    assert "header line longer than" in hardened_server.log


async def test_missing_or_bad_type_is_recoverable(hardened_server: ServerProcess) -> None:
    for obj in ({"data": {}}, {"type": 5}, {"type": ""}, {"type": None}):
        error = await recoverable_case(hardened_server, header(obj), "invalid-event")
        assert "event type" in error["text"]


@pytest.mark.parametrize("data", [[1, 2], "text", 7, True])
async def test_inline_data_not_an_object(hardened_server: ServerProcess, data: object) -> None:
    error = await recoverable_case(hardened_server, header({"type": "synthesize", "data": data}),
                                   "invalid-event", one_shot=True)
    assert "JSON object" in error["text"]


@pytest.mark.parametrize("blob", [b"[1, 2]", b"\"text\"", b"{broken", b"{\"text\": \"\xff\"}"])
async def test_data_block_not_an_object(hardened_server: ServerProcess, blob: bytes) -> None:
    data = header({"type": "synthesize", "data_length": len(blob)}) + blob
    error = await recoverable_case(hardened_server, data, "invalid-event", one_shot=True)
    assert "data" in error["text"]


@pytest.mark.parametrize(("event_type", "data", "needle"), [
    ("synthesize", {"text": 42}, "text must be a string"),
    ("synthesize", {"text": ["a"]}, "text must be a string"),
    ("synthesize", {}, "text field is missing"),
    ("synthesize", {"text": "Hi.", "voice": "en-female-young"}, "voice must be an object"),
    ("synthesize", {"text": "Hi.", "voice": {"name": 3}}, "voice.name must be a string"),
    ("synthesize", {"text": "Hi.", "voice": {"language": ["en"]}}, "voice.language"),
    ("synthesize", {"text": "Hi.", "text_format": 1}, "text_format must be a string"),
    ("synthesize-start", {"voice": 17}, "voice must be an object"),
    ("synthesize-chunk", {"text": None}, "text must be a string"),
])
async def test_wrong_field_types_get_an_error(hardened_server: ServerProcess, event_type: str,
                                             data: dict, needle: str) -> None:
    error = await recoverable_case(hardened_server, frame(event_type, data), "invalid-event",
                                   one_shot=event_type == "synthesize")
    assert needle in error["text"]


async def test_payload_on_events_that_never_carry_one(hardened_server: ServerProcess) -> None:
    """A small stray payload is read and ignored: the event is served as usual."""
    raw = await Raw.open(hardened_server)
    try:
        await raw.send_event("describe", payload=b"\x00" * 100)
        assert (await raw.read_until({"info"}))[-1].type == "info"
        await raw.send_event("synthesize", {"text": "Payload."}, payload=b"junk" * 10)
        events = await raw.read_until({"audio-stop"})
        assert len(audio_cycles(events)) == 1
    finally:
        await raw.close()
    oversized = frame("describe", payload=b"\x00" * (MAX_PAYLOAD_BYTES + 1))
    error = await fatal_case(hardened_server, oversized, "frame-too-large")
    assert "payload" in error["text"]


@pytest.mark.parametrize("partial", [
    b"{\"type\": \"describe\"",                                  # header without newline
    header({"type": "synthesize", "data_length": 100}) + b"{\"text\": \"Hel",  # short data
    header({"type": "describe", "payload_length": 50}) + b"\x00" * 10,         # short payload
])
async def test_half_frame_then_stall_is_dropped(hardened_server: ServerProcess,
                                                partial: bytes) -> None:
    raw = await Raw.open(hardened_server)
    try:
        await raw.send(partial)
        events = await raw.read_to_close()  # the server gives up after --read-timeout
    finally:
        await raw.close()
    error = error_of(events)
    assert error["code"] == "timeout"
    assert "--read-timeout" in error["text"]


async def test_stalled_client_does_not_block_others(hardened_server: ServerProcess) -> None:
    stalled = await Raw.open(hardened_server)
    try:
        await stalled.send(b"{\"type\": \"synthesize\", \"data_length\": 999}\n{")
        await assert_server_serves(hardened_server)
    finally:
        await stalled.close()


async def test_blank_lines_between_frames_are_ignored(hardened_server: ServerProcess) -> None:
    raw = await Raw.open(hardened_server)
    try:
        await raw.send(b"\n\r\n  \n" + frame("describe"))
        assert (await raw.read_until({"info"}))[-1].type == "info"
    finally:
        await raw.close()


async def test_inline_data_in_header_line_is_accepted(hardened_server: ServerProcess) -> None:
    """Older clients put data in the header line; that is still a valid frame."""
    raw = await Raw.open(hardened_server)
    try:
        await raw.send(header({"type": "synthesize", "data": {"text": "Inline."}}))
        events = await raw.read_until({"audio-stop"})
        assert len(audio_cycles(events)) == 1
    finally:
        await raw.close()
