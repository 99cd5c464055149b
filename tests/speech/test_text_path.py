"""Property-based: any text a client sends gets speech or a named error, over every protocol.

One real server (tiny model, ``--max-text-length`` 200, Wyoming and the HTTP API) takes any
Python string: surrogates (lone and paired), control and format characters, combining
marks, direction marks, emoji sequences, every script, lengths to just past the limit;
streams cut anywhere: between characters, between the two UTF-16 halves of one (the server
joins them), or inside a character's UTF-8 bytes on the wire (each such chunk's data is not
UTF-8: ``invalid-event``; a surrogate written as the three bytes a lax encoder makes, the
same). Each path keeps ONE connection for all its examples. For every input:

- audio, or a named error, and exactly which: ``text-too-long`` past the limit,
  ``text-invalid`` for a lone surrogate, else audio (a text with nothing to say gets a
  short silence); over HTTP the same as ``text_*`` codes (``text_required`` for blank);
- the request's end event (``audio-stop``, ``synthesize-stopped``) and whole audio cycles;
- no traceback or internal error in the server's log;
- the next request on the same connection is served.

Examples are derandomized (the same on every run): ``EXAMPLES`` per path, twice as many for
streams (shared by their four ways of cutting); the server decodes in 4 steps (the text
path is under test, not the audio). ``-s`` prints how many examples each path ran.
"""

from __future__ import annotations

import http.client
import io
import json
import re
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import READ_TIMEOUT_S, ServerProcess, audio_cycles, free_port, tiny_server_args
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from raw_client import BlockingRaw, frame
from wyoming.event import Event

#: Starts a server process and decodes hundreds of requests: not in the fast suite.
pytestmark = pytest.mark.slow

LIMIT = 200
#: Examples per path (derandomized: CI runs the same ones every time).
EXAMPLES = 40

#: What clients send that the text path has to survive.
FRAGMENTS = [
    "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\x00", "\x07", "\x08", "\x1b[31m",
    "\x7f", "\x85", "\x9f", "\t", "\n", "\r\n", "\v", "\f", "\u2028", "\u2029", "\ufffe",
    "\uffff", "\ufdd0", "\U0010ffff", "\ufffd", "\ufeff", "\u00ad", "\u200b", "\u200c",
    "\u200d", "\u2060", "\u200e", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069",
    "\u061c", "\U000e0041", "\ue000", "\U000f0000", "\u0378",
    "e\u0301", "Z\u0337\u0322\u031b\u0300\u0301\u0302\u0303", "\u0301\u0301\u0301",
    "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "👍🏽", "🇩🇪", "1️⃣", "❤️", "😀",
    "Hello there.", "It is 21.5 °C at 10:30.", "Grüße aus Köln, 3 Stunden.", "Привет, мир.",
    "Γεια σου;", "שלום עולם.", "مرحبا بالعالم؟", "سلام دنیا", "नमस्ते दुनिया।",
    "สวัสดีครับ โลก ", "你好，世界。", "こんにちは、世界。", "안녕하세요.", "ሰላም ለዓለም።",
    "Բարեւ աշխարհ։", "வணக்கம்.", "გამარჯობა.", "Xin chào.", "Merhaba 3'te.",
    "**bold** _x_ `code`", "[laughter]", "[", "]", "<speak>", "https://example.com/x",
    "…", "!?", ".", " ", "   ", "0", "1,000,000.5", "$3.99", "١٢٣", "１２",
]
any_char = st.characters(exclude_categories=())
texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(any_char, max_size=16), max_size=14)
    .map("".join),
    st.text(any_char, max_size=40),
    st.text(any_char, min_size=LIMIT - 8, max_size=LIMIT + 8),  # about the limit
)

#: Named answers; anything else is an internal failure.
WYOMING_CODES = {"text-invalid", "text-too-long", "invalid-event"}
LOG_FAILURES = re.compile(r"Traceback|Logging error|Unexpected error|internal-error|"
                          r"synthesis-failed|invalid-request|Internal error")


def has_lone_surrogate(text: str) -> bool:
    return bool(re.search("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])"
                          "[\udc00-\udfff]", text))


def received(text: str) -> str:
    """What the server reads from the JSON of ``text`` (a pair's two escapes: one char)."""
    return json.loads(json.dumps(text))


def expected_error(text: str) -> str | None:
    """What the server must answer a whole text: the length is checked first."""
    if len(received(text)) > LIMIT:
        return "text-too-long"
    if has_lone_surrogate(text):
        return "text-invalid"
    return None


@dataclass
class Log:
    """The server's log read from where the last example left it."""

    path: Path
    offset: int = 0
    examples: dict[str, int] = field(default_factory=dict)

    def new(self) -> str:
        with self.path.open("rb") as log:
            log.seek(self.offset)
            text = log.read().decode("utf-8", "replace")
        self.offset += len(text.encode("utf-8", "replace"))
        return text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir
           ) -> Iterator[tuple[ServerProcess, int, Log]]:
    port, web_port = free_port(), free_port()
    path = tmp_path_factory.mktemp("text-path") / "server.log"
    args = tiny_server_args(port, shared_data_dir, "--preload-languages", "none",
                            "--max-text-length", str(LIMIT), "--num-steps", "4",
                            "--web-uri", f"http://127.0.0.1:{web_port}")
    process = ServerProcess(args, path, port).start()
    try:
        log = Log(path)
        yield process.wait_ready(), web_port, log
        print(f"\nExamples run per path: {log.examples}")
    finally:
        process.stop()


@pytest.fixture(scope="module")
def wyoming(server) -> Iterator[BlockingRaw]:
    """One Wyoming connection for every example of a path."""
    connection = BlockingRaw(server[0])
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def web(server) -> Iterator[http.client.HTTPConnection]:
    """One keep-alive HTTP connection for every example."""
    connection = http.client.HTTPConnection("127.0.0.1", server[1], timeout=READ_TIMEOUT_S)
    yield connection
    connection.close()


def codes(events: list[Event]) -> list[str]:
    return [event.data.get("code", "") for event in events if event.type == "error"]


def pcm(events: list[Event]) -> int:
    return sum(len(event.payload or b"") for event in events if event.type == "audio-chunk")


def after_example(server, connection: BlockingRaw, path: str) -> None:
    """The same connection serves the next request; the log holds no internal failure."""
    process, _, log = server
    connection.send(frame("synthesize", {"text": "Ok."}))
    events = connection.read_until({"audio-stop"})
    assert not codes(events) and pcm(events) > 0
    assert process.alive
    failures = LOG_FAILURES.findall(log.new())
    assert not failures, failures
    log.examples[path] = log.examples.get(path, 0) + 1


SETTINGS = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: A stream's examples are shared by its four ways of cutting.
STREAM_SETTINGS = settings(SETTINGS, max_examples=2 * EXAMPLES)


@SETTINGS
@given(text=texts)
def test_wyoming_one_shot(server, wyoming: BlockingRaw, text: str) -> None:
    wyoming.send(frame("synthesize", {"text": text}))  # JSON escapes: any string goes
    events = wyoming.read_until({"audio-stop"})
    assert len(audio_cycles(events)) == 1
    expected = expected_error(text)
    if expected is None:
        assert not codes(events) and pcm(events) > 0, (codes(events), events[:1])
    else:
        assert codes(events) == [expected] and pcm(events) == 0
    after_example(server, wyoming, "wyoming one-shot")


def utf16_units(text: str) -> str:
    """Each character beyond the BMP as its two surrogates (what a UTF-16 client cuts)."""
    return "".join(char if ord(char) <= 0xFFFF else chr(0xD800 + ((ord(char) - 0x10000) >> 10))
                   + chr(0xDC00 + (ord(char) & 0x3FF)) for char in text)


def cut(sequence, points: list[int]) -> list:
    bounds = sorted({min(point, len(sequence)) for point in points})
    return [sequence[start:end] for start, end in zip([0, *bounds], [*bounds, len(sequence)],
                                                      strict=True) if end > start]


@dataclass
class Chunks:
    """A stream's ``synthesize-chunk`` frames, whether each frame's data is UTF-8 JSON,
    and how many characters the server reads from them."""

    frames: list[bytes]
    valid: bool
    length: int


def chunk_frames(text: str, level: str, points: list[int]) -> Chunks:
    """``text`` cut at ``points``: between characters, between UTF-16 halves, or anywhere
    in the bytes of its JSON string."""
    if level in ("characters", "utf16"):
        parts = cut(text if level == "characters" else utf16_units(text), points)
        return Chunks([frame("synthesize-chunk", {"text": part}) for part in parts], True,
                      sum(len(received(part)) for part in parts))
    literal = json.dumps(text, ensure_ascii=False)[1:-1]
    # utf8: what UTF-8 cannot hold as its JSON escape; wtf8: a surrogate as the three bytes
    # a lax encoder writes (never UTF-8: the frame is refused).
    errors = "backslashreplace" if level == "utf8" else "surrogatepass"
    frames, valid, length = [], True, 0
    for part in cut(literal.encode("utf-8", errors), points):
        data = b'{"text": "' + part + b'"}'
        try:
            length += len(json.loads(data.decode("utf-8"))["text"])
        except ValueError:
            valid = False
        frames.append(json.dumps({"type": "synthesize-chunk", "data_length": len(data)})
                      .encode() + b"\n" + data)
    return Chunks(frames, valid, length)


@STREAM_SETTINGS
@given(text=texts, level=st.sampled_from(["characters", "utf16", "utf8", "wtf8"]),
       points=st.lists(st.integers(0, 3 * LIMIT), max_size=8), compat=st.booleans())
def test_wyoming_stream(server, wyoming: BlockingRaw, text: str, level: str,
                        points: list[int], compat: bool) -> None:
    chunks = chunk_frames(text, level, points)
    wyoming.send(frame("synthesize-start"))
    for chunk in chunks.frames:
        wyoming.send(chunk)
    if compat:  # Home Assistant's copy of the whole text (ignored while streaming)
        wyoming.send(frame("synthesize", {"text": text}))
    wyoming.send(frame("synthesize-stop"))
    events = wyoming.read_until({"synthesize-stopped"})
    audio_cycles(events)  # whole cycles
    found = codes(events)
    assert set(found) <= WYOMING_CODES, found
    if not chunks.valid:  # a chunk's data is not UTF-8 JSON (a character cut in its bytes)
        assert "invalid-event" in found
    else:
        # Chunk by chunk, the first that fails says why (the length first): one error.
        allowed = ({"text-too-long"} if chunks.length > LIMIT else set()) | \
            ({"text-invalid"} if has_lone_surrogate(text) else set())
        if allowed:
            assert len(found) == 1 and found[0] in allowed, found
        else:
            assert not found and pcm(events) > 0, found
    after_example(server, wyoming, f"wyoming stream ({level})")


def wav_frames(body: bytes) -> int:
    with wave.open(io.BytesIO(body)) as reader:
        assert reader.getnchannels() == 1 and reader.getsampwidth() == 2
        return reader.getnframes()


def post(web: http.client.HTTPConnection, port: int, text: str) -> tuple[int, bytes]:
    body = json.dumps({"input": text}).encode()
    web.request("POST", "/v1/audio/speech", body=body,
                headers={"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"})
    answer = web.getresponse()
    return answer.status, answer.read()


@SETTINGS
@given(text=texts)
def test_http_speech(server, web: http.client.HTTPConnection, text: str) -> None:
    process, port, log = server
    status, body = post(web, port, text)
    expected = "text_required" if not text.strip() else expected_error(text)
    if expected is None:
        assert status == 200, body[:300]
        wav_frames(body)
    else:
        assert status == 400, body[:300]
        assert json.loads(body)["error"]["code"] == expected.replace("-", "_")
    status, body = post(web, port, "Ok.")  # the same connection is still served
    assert status == 200 and wav_frames(body) > 0
    assert process.alive
    failures = LOG_FAILURES.findall(log.new())
    assert not failures, failures
    log.examples["http"] = log.examples.get("http", 0) + 1
