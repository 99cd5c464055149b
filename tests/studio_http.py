"""Helpers for the voice studio tests: a tiny-model server with ``--web-uri``, plain HTTP
requests with full control of the headers, and Wyoming round trips to compare audio with.
"""

from __future__ import annotations

import asyncio
import http.client
import io
import json
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ServerProcess, free_port, tiny_server_args
from wyoming.audio import AudioChunk, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice

READ_TIMEOUT_S = 120.0


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def code(self) -> str | None:
        try:
            return self.json()["error"]["code"]
        except (ValueError, KeyError, TypeError):
            return None


@dataclass
class StudioServer:
    process: ServerProcess
    web_port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def request(self, method: str, path: str, *, json_body: Any = None,
                body: bytes | None = None, headers: dict[str, str] | None = None,
                host: str = "127.0.0.1") -> Answer:
        return http_request(host, self.web_port, method, path, json_body=json_body, body=body,
                            headers=headers)


def http_request(host: str, port: int, method: str, path: str, *, json_body: Any = None,
                 body: bytes | None = None, headers: dict[str, str] | None = None) -> Answer:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=READ_TIMEOUT_S)
    sent = dict(headers or {})
    sent.setdefault("Host", f"{host}:{port}")
    if json_body is not None:
        body = json.dumps(json_body).encode()
        sent.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()},
                      response.read())
    finally:
        connection.close()


class StudioStarter:
    """Starts tiny-model servers with the studio (``--deterministic``); stops them all."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[ServerProcess] = []

    def __call__(self, data_dir: Path, *extra: str, web_host: str = "127.0.0.1",
                 web_port: int | None = None, wait: bool = True) -> StudioServer:
        port = web_port or free_port()
        wyoming_port = free_port()
        # Only the default voice's anchor at start (each test has its own data dir).
        args = tiny_server_args(wyoming_port, data_dir, "--deterministic",
                                "--preload-languages", "none", "--web-uri",
                                f"http://{web_host}:{port}", *extra)
        process = ServerProcess(args, self.log_dir / f"server-{wyoming_port}.log",
                                wyoming_port).start()
        self.started.append(process)
        if wait:
            process.wait_ready()
        return StudioServer(process, port)

    def stop_all(self) -> None:
        for process in self.started:
            process.stop()


def multipart(fields: dict[str, str], file_field: str, file_name: str, data: bytes
              ) -> tuple[bytes, str]:
    boundary = "studio-test-boundary-7d3f"
    parts = [f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
             .encode() for name, value in fields.items()]
    parts.append(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{file_field}\"; "
                 f"filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                 .encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def wav_pcm(data: bytes) -> bytes:
    with wave.open(io.BytesIO(data)) as reader:
        assert reader.getnchannels() == 1 and reader.getsampwidth() == 2
        return reader.readframes(reader.getnframes())


def wav_seconds(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as reader:
        return reader.getnframes() / reader.getframerate()


async def _describe(uri: str) -> Info:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
            assert event is not None
            if Info.is_type(event.type):
                return Info.from_event(event)


#: The reply's lead-in (``--lead-in-ms``, default 300 ms, in whole chunks of 1024 samples)
#: before its audio, in bytes.
LEAD_IN_BYTES = 7 * 1024 * 2


async def _synthesize(uri: str, text: str, voice: str | SynthesizeVoice) -> bytes:
    """The reply's audio after its lead-in (checked to be silence of exactly that length:
    the servers here run with the default ``--lead-in-ms``)."""
    pcm = await _synthesize_all(uri, text, voice)
    assert not any(pcm[:LEAD_IN_BYTES]) and len(pcm) > LEAD_IN_BYTES
    return pcm[LEAD_IN_BYTES:]


async def _synthesize_all(uri: str, text: str, voice: str | SynthesizeVoice) -> bytes:
    pcm = b""
    wish = voice if isinstance(voice, SynthesizeVoice) else SynthesizeVoice(name=voice)
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text, voice=wish).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
            assert event is not None
            if Error.is_type(event.type):
                raise AssertionError(Error.from_event(event).text)
            if AudioChunk.is_type(event.type):
                pcm += AudioChunk.from_event(event).audio
            if AudioStop.is_type(event.type):
                return pcm


def wyoming_voices(server: StudioServer) -> list[str]:
    info = asyncio.run(_describe(server.process.uri))
    return [voice.name for voice in info.tts[0].voices]


def wyoming_info(server: StudioServer) -> Info:
    return asyncio.run(_describe(server.process.uri))


def wyoming_pcm(server: StudioServer, text: str, voice: str | SynthesizeVoice) -> bytes:
    """A one-shot's audio after its lead-in; ``voice``: a name, or a SynthesizeVoice (a
    language alone: ``SynthesizeVoice(language="de")``)."""
    return asyncio.run(_synthesize(server.process.uri, text, voice))


# ---- fixtures (imported by the test modules that use them) ------------------------------


@pytest.fixture
def studio_factory(tmp_path: Path) -> Iterator[StudioStarter]:
    """Studio servers for one test (each using it is ``slow``, see ``conftest.py``)."""
    starter = StudioStarter(tmp_path)
    yield starter
    starter.stop_all()


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    """One loopback studio shared by a module's tests (its own data dir)."""
    folder = tmp_path_factory.mktemp("studio")
    starter = StudioStarter(folder)
    try:
        yield starter(folder / "data")
    finally:
        starter.stop_all()
