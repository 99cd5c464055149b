"""Text a client sends is checked where it enters: through the real server, every protocol.

A lone surrogate (``"\\ud800"`` in the JSON) used to reach the tokenizer inside the engine's
worker (``TypeError: TextInputSequence must be str``, a traceback in the log,
``synthesis-failed``). It is now refused at the speech service's entry with ``text-invalid``
naming the character and where it is, before any work is queued; control characters and
noncharacters are cleaned. The same check serves Wyoming one-shot, streamed chunks (a
surrogate pair split between two chunks is joined), streaming disabled and the HTTP API.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator

import numpy as np
import pytest
import soundfile
from conftest import ServerProcess, free_port, tiny_server_args
from raw_client import Raw, frame
from studio_http import http_request, multipart
from wyoming.event import Event

#: Starts a server process: not in the fast suite.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir
           ) -> Iterator[tuple[ServerProcess, int]]:
    port, web_port = free_port(), free_port()
    log = tmp_path_factory.mktemp("text-entry") / "server.log"
    args = tiny_server_args(port, shared_data_dir, "--preload-languages", "none",
                            "--web-uri", f"http://127.0.0.1:{web_port}")
    process = ServerProcess(args, log, port).start()
    try:
        yield process.wait_ready(), web_port
    finally:
        process.stop()


def raw_frame(event_type: str, data_json: bytes) -> bytes:
    """A frame whose data block is the given JSON bytes as they are (escapes kept)."""
    header = {"type": event_type, "data_length": len(data_json)}
    return json.dumps(header).encode() + b"\n" + data_json


def errors_of(events: list[Event]) -> list[dict]:
    return [event.data for event in events if event.type == "error"]


def audio_bytes(events: list[Event]) -> int:
    return sum(len(event.payload or b"") for event in events if event.type == "audio-chunk")


async def still_served(raw: Raw) -> None:
    await raw.send_event("synthesize", {"text": "Still here."})
    events = await raw.read_until({"audio-stop"})
    assert not errors_of(events) and audio_bytes(events) > 0


def assert_clean_log(server: ServerProcess) -> None:
    assert "Traceback" not in server.log
    assert "synthesis-failed" not in server.log


async def test_a_lone_surrogate_is_refused_at_the_door(server) -> None:
    process, _ = server
    raw = await Raw.open(process)
    try:
        await raw.send(raw_frame("synthesize", b'{"text": "Hello \\ud800 world."}'))
        events = await raw.read_until({"audio-stop"})
        assert [event.type for event in events] == ["error", "audio-start", "audio-stop"]
        (error,) = errors_of(events)
        assert error["code"] == "text-invalid"
        assert "U+D800" in error["text"] and "character 7" in error["text"]
        await still_served(raw)
    finally:
        await raw.close()
    assert_clean_log(process)


async def test_a_stream_chunk_with_a_lone_surrogate_fails_the_stream(server) -> None:
    process, _ = server
    raw = await Raw.open(process)
    try:
        await raw.send(frame("synthesize-start"))
        await raw.send(frame("synthesize-chunk", {"text": "First sentence here. "}))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "then \\udc00 more"}'))
        await raw.send(frame("synthesize-stop"))
        events = await raw.read_until({"synthesize-stopped"})
        (error,) = errors_of(events)
        assert error["code"] == "text-invalid" and "U+DC00" in error["text"]
        assert "character 27" in error["text"]  # counted over the stream
        await still_served(raw)
    finally:
        await raw.close()
    assert_clean_log(process)


async def test_a_surrogate_pair_split_between_chunks_is_joined(server) -> None:
    process, _ = server
    raw = await Raw.open(process)
    try:
        await raw.send(frame("synthesize-start"))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "Hello \\ud83d"}'))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "\\ude00 world. "}'))
        await raw.send(frame("synthesize-stop"))
        events = await raw.read_until({"synthesize-stopped"})
        assert not errors_of(events) and audio_bytes(events) > 0
        # A high surrogate that no low one follows before the stop is refused at the stop.
        await raw.send(frame("synthesize-start"))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "Hello there \\ud83d"}'))
        await raw.send(frame("synthesize-stop"))
        events = await raw.read_until({"synthesize-stopped"})
        (error,) = errors_of(events)
        assert error["code"] == "text-invalid" and "U+D83D" in error["text"]
        await still_served(raw)
    finally:
        await raw.close()
    assert_clean_log(process)


async def test_control_characters_are_cleaned_and_spoken(server) -> None:
    process, _ = server
    raw = await Raw.open(process)
    try:
        await raw.send(frame("synthesize", {"text": "Hello\x00there \x1b[0m and\x7f\x85 bye."}))
        events = await raw.read_until({"audio-stop"})
        assert not errors_of(events) and audio_bytes(events) > 0
    finally:
        await raw.close()
    assert "Removed from the text" in process.log and "U+0000" in process.log
    assert_clean_log(process)


async def test_a_character_split_inside_its_utf8_bytes_gets_a_named_error(server) -> None:
    """A client that cuts the UTF-8 bytes of one character between two chunks sends two
    frames whose data is not UTF-8: each gets ``invalid-event`` (the frame was read whole,
    the connection stays), the stream fails (its text has a hole) and still ends."""
    process, _ = server
    encoded = "Grüße aus Köln. ".encode()
    cut = encoded.index("ü".encode()) + 1
    for inline in (False, True):
        raw = await Raw.open(process)
        try:
            await raw.send(frame("synthesize-start"))
            for part in (encoded[:cut], encoded[cut:]):
                if inline:  # the data inside the header line, as older clients send it
                    await raw.send(b'{"type": "synthesize-chunk", "data": {"text": "'
                                   + part + b'"}}\n')
                else:
                    await raw.send(raw_frame("synthesize-chunk", b'{"text": "' + part + b'"}'))
            await raw.send(frame("synthesize-stop"))
            events = await raw.read_until({"synthesize-stopped"})
            codes = [error["code"] for error in errors_of(events)]
            assert codes and set(codes) == {"invalid-event"}, events
            assert audio_bytes(events) == 0
            await still_served(raw)
        finally:
            await raw.close()
    assert_clean_log(process)


async def test_streaming_disabled_checks_the_joined_text(server_factory) -> None:
    process = server_factory("--no-streaming", "--preload-languages", "none")
    raw = await Raw.open(process)
    try:
        await raw.send(frame("synthesize-start"))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "Hi \\ud83d"}'))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "\\ude00 there. "}'))
        await raw.send(frame("synthesize-stop"))
        events = await raw.read_until({"synthesize-stopped"})
        assert not errors_of(events) and audio_bytes(events) > 0
        await raw.send(frame("synthesize-start"))
        await raw.send(raw_frame("synthesize-chunk", b'{"text": "Hi \\udfff there."}'))
        await raw.send(frame("synthesize-stop"))
        events = await raw.read_until({"synthesize-stopped"})
        (error,) = errors_of(events)
        assert error["code"] == "text-invalid" and "U+DFFF" in error["text"]
        await still_served(raw)
    finally:
        await raw.close()
    assert_clean_log(process)


@pytest.mark.parametrize("path", ["/v1/audio/speech", "/api/preview"])
def test_http_refuses_a_lone_surrogate_with_a_named_error(server, path: str) -> None:
    process, web_port = server
    field = "input" if path.startswith("/v1") else "text"
    body = {field: "Hello \ud800 world.", "voice": "en-female-young"}
    answer = http_request("127.0.0.1", web_port, "POST", path, json_body=body)
    assert answer.status == 400 and answer.code == "text_invalid", answer.body
    assert "U+D800" in answer.json()["error"]["message"]
    body[field] = "Hello\x00 world."
    answer = http_request("127.0.0.1", web_port, "POST", path, json_body=body)
    assert answer.status == 200, answer.body
    assert_clean_log(process)


def recording(seconds: float = 2.0, rate: int = 16000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    buffer = io.BytesIO()
    soundfile.write(buffer, 0.3 * np.sin(2 * np.pi * 220 * t), rate, format="WAV",
                    subtype="PCM_16")
    return buffer.getvalue()


def test_the_studio_text_fields_take_the_same_check(server) -> None:
    """A description with a lone surrogate was saved, and then no Wyoming ``info`` could be
    written (every describe failed); a transcript that is not UTF-8 was a 500."""
    process, web_port = server

    def call(method: str, path: str, **kwargs):
        return http_request("127.0.0.1", web_port, method, path, **kwargs)

    take = call("POST", "/api/takes", json_body={"design": {"gender": "female"},
                                                  "language": "en"}).json()["take"]["id"]
    answer = call("POST", "/api/voices", json_body={"take": take, "name": "surrogate-ann",
                                                     "description": "Ann \ud800"})
    assert answer.status == 400 and answer.code == "text_invalid", answer.body
    answer = call("POST", "/api/voices", json_body={"take": take, "name": "nul-ann",
                                                     "description": "Ann\x00 of\x1b here"})
    assert answer.status == 201 and answer.json()["voice"]["description"] == "Ann of here"
    answer = call("PATCH", "/api/voices/nul-ann", json_body={"description": "\udfff"})
    assert answer.status == 400 and answer.code == "text_invalid", answer.body
    for transcript, code in ((b"Hello \xff there", "bad_form"),
                             ("Hello \ud800 there".encode("utf-8", "surrogatepass"),
                              "bad_form")):
        body, content_type = multipart({"language": "en"}, "audio", "a.wav", recording())
        body = body.replace(b"--studio-test-boundary-7d3f--", b"--studio-test-boundary-7d3f"
                            b'\r\nContent-Disposition: form-data; name="transcript"\r\n\r\n'
                            + transcript + b"\r\n--studio-test-boundary-7d3f--")
        answer = call("POST", "/api/clone", body=body, headers={"Content-Type": content_type})
        assert answer.status == 400 and answer.code == code, answer.body
    document = call("GET", "/api/voices/nul-ann/export").json()
    document["description"] = "\ud83d"
    answer = call("POST", "/api/voices/import?name=copy-ann", json_body=document)
    assert answer.status == 400 and answer.code == "text_invalid", answer.body
    assert "nul-ann" in wyoming_info(process)
    assert_clean_log(process)


def wyoming_info(process: ServerProcess) -> str:
    """A Wyoming ``info`` as JSON text (it could be written: describe works)."""

    async def describe() -> str:
        raw = await Raw.open(process)
        try:
            await raw.send_event("describe")
            events = await raw.read_until({"info"})
        finally:
            await raw.close()
        return json.dumps(events[-1].data)

    return asyncio.run(describe())
