"""Shared fixtures: free ports, a real server subprocess, Wyoming client helpers, the
``slow`` marker.

The server tests start ``python -m wyoming_omnivoice`` as a subprocess on a free loopback
port with the tiny model (``tests/fixtures/models/tiny``) and talk to it with the real
``wyoming`` client. Read timeouts below only keep a broken server from hanging the suite;
no test asserts on timing.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TINY_MODEL = FIXTURES / "models" / "tiny"

#: Safety limits so a broken server fails a test instead of hanging the suite.
READY_TIMEOUT_S = 180.0
READ_TIMEOUT_S = 120.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def port() -> int:
    return free_port()


# --------------------------------------------------------------------------- model fixtures

#: The tiny model's two forms of graph I/O: as ``tests/fixtures/models/tiny`` holds it
#: (float32 everywhere), and as the published files are (embeddings and heads graphs
#: converted by the exporter's float16 pass, taking and giving float16).
MODEL_IO = ("fp32-io", "fp16-io")


@pytest.fixture(scope="session")
def fp16io_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model with float16 embeddings and heads graphs, made like the published
    ones (``tools/fp16io.py``: onnxconverter-common's ``convert_float_to_float16`` with the
    exporter's default settings), built once per session in a temporary folder."""
    from tools.fp16io import make_fp16io_dir

    return make_fp16io_dir(TINY_MODEL, tmp_path_factory.mktemp("fp16io") / "tiny-fp16io")


@pytest.fixture(scope="session", params=MODEL_IO)
def tiny_model(request: pytest.FixtureRequest) -> Path:
    """The tiny model folder, once per form of graph I/O (:data:`MODEL_IO`): every engine
    test that takes it runs on both."""
    if request.param == "fp32-io":
        return TINY_MODEL
    path: Path = request.getfixturevalue("fp16io_model")
    return path


# --------------------------------------------------------------------------- the slow marker

#: Fixtures that start a server process: every test using one is ``slow``.
SERVER_FIXTURES = frozenset({"tiny_server", "server_factory", "studio_factory", "studio"})
_CURRENT: list[pytest.Item] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: starts a server process or takes over a second (deselect with "
        "-m 'not slow' for the fast suite)")
    config.addinivalue_line("markers", "microphone: the browser gets a fake microphone")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    _CURRENT[:] = [item]


def require_slow(what: str) -> None:
    """Fail a test that starts ``what`` without the ``slow`` marker (the fast suite,
    ``pytest -m "not slow"``, must never start a server)."""
    if _CURRENT and _CURRENT[0].get_closest_marker("slow") is None:
        pytest.fail(f"{_CURRENT[0].nodeid} starts {what}: mark it @pytest.mark.slow",
                    pytrace=False)


# --------------------------------------------------------------------------- server process


@dataclass
class ServerProcess:
    """A ``python -m wyoming_omnivoice`` subprocess; logs go to ``log_path``."""

    args: list[str]
    log_path: Path
    port: int
    process: subprocess.Popen | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: What runs the server: the package, or a test-only entry such as faulty_server.py.
    entry: list[str] = field(default_factory=lambda: ["-m", "wyoming_omnivoice"])
    #: Run in the child before the server (a memory cgroup's ``preexec``).
    preexec: Callable[[], None] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") \
            if self.log_path.exists() else ""

    def start(self) -> ServerProcess:
        require_slow("a server process")
        env = dict(os.environ)
        env.update(self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *self.entry, *self.args],
                cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, env=env,
                preexec_fn=self.preexec,
            )
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> ServerProcess:
        """Wait for the "Ready" log line (the server logs it once it accepts connections)."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "Ready" in self.log:
                return self
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"server exited with {self.process.returncode} before ready:\n{self.log}"
                )
            time.sleep(0.1)
        raise RuntimeError(f"server not ready after {timeout} s:\n{self.log}")

    def wait_exit(self, timeout: float = READY_TIMEOUT_S) -> int:
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not stop; returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(10)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


def tiny_server_args(port: int, data_dir: Path, *extra: str) -> list[str]:
    return [
        "--uri", f"tcp://127.0.0.1:{port}", "--model-dir", str(TINY_MODEL), "--device", "cpu",
        "--data-dir", str(data_dir), "--debug", *extra,
    ]


@pytest.fixture(scope="session")
def shared_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir for the session's servers, so anchors are built once."""
    return tmp_path_factory.mktemp("server-data")


@pytest.fixture
def server_factory(tmp_path: Path, shared_data_dir: Path
                   ) -> Iterator[Callable[..., ServerProcess]]:
    """Start tiny-model servers: ``server_factory(*extra_args, data_dir=None, wait=True)``."""
    started: list[ServerProcess] = []

    def start(*extra: str, data_dir: Path | None = None, wait: bool = True,
              args: Sequence[str] | None = None) -> ServerProcess:
        port = free_port()
        argv = list(args) if args is not None else tiny_server_args(
            port, data_dir or shared_data_dir, *extra)
        server = ServerProcess(argv, tmp_path / f"server-{port}.log", port).start()
        started.append(server)
        return server.wait_ready() if wait else server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def tiny_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
                ) -> Iterator[ServerProcess]:
    """One tiny-model server shared by the tests that do not change its flags."""
    port = free_port()
    log = tmp_path_factory.mktemp("tiny-server") / "server.log"
    server = ServerProcess(tiny_server_args(port, shared_data_dir), log, port).start()
    try:
        yield server.wait_ready()
    finally:
        server.stop()


# --------------------------------------------------------------------------- client helpers


async def read_event(client: AsyncClient, timeout: float = READ_TIMEOUT_S) -> Event:
    event = await asyncio.wait_for(client.read_event(), timeout)
    if event is None:
        raise ConnectionError("server closed the connection")
    return event


async def read_until(client: AsyncClient, end_types: Iterable[str],
                     timeout: float = READ_TIMEOUT_S) -> list[Event]:
    """Read events up to and including the first whose type is in ``end_types``."""
    end = set(end_types)
    events: list[Event] = []
    while True:
        event = await read_event(client, timeout)
        events.append(event)
        if event.type in end:
            return events


async def describe(uri: str) -> Info:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        events = await read_until(client, {"info"})
    return Info.from_event(events[-1])


def voice_of(name: str | None) -> SynthesizeVoice | None:
    return SynthesizeVoice(name=name) if name else None


async def synthesize_once(client: AsyncClient, text: str, voice: str | None = None
                          ) -> list[Event]:
    """One-shot request on an open connection; events up to audio-stop (every one-shot
    request ends with it, an error event first when it fails)."""
    await client.write_event(Synthesize(text=text, voice=voice_of(voice)).event())
    return await read_until(client, {"audio-stop"})


async def synthesize(uri: str, text: str, voice: str | None = None) -> list[Event]:
    async with AsyncClient.from_uri(uri) as client:
        return await synthesize_once(client, text, voice)


async def stream_once(client: AsyncClient, chunks: Sequence[str], voice: str | None = None,
                      *, compat: bool = True) -> list[Event]:
    """Home Assistant's streaming sequence: start, chunks, compatibility synthesize, stop.

    Returns every event up to ``synthesize-stopped``.
    """
    await client.write_event(SynthesizeStart(voice=voice_of(voice)).event())
    for chunk in chunks:
        await client.write_event(SynthesizeChunk(text=chunk).event())
    if compat:
        await client.write_event(Synthesize(text="".join(chunks), voice=voice_of(voice)).event())
    await client.write_event(SynthesizeStop().event())
    return await read_until(client, {"synthesize-stopped"})


async def stream(uri: str, chunks: Sequence[str], voice: str | None = None,
                 *, compat: bool = True) -> list[Event]:
    async with AsyncClient.from_uri(uri) as client:
        return await stream_once(client, chunks, voice, compat=compat)


def audio_cycles(events: Sequence[Event]) -> list[list[Event]]:
    """Group events into audio cycles: each list is audio-start, chunks..., audio-stop."""
    cycles: list[list[Event]] = []
    current: list[Event] | None = None
    for event in events:
        if event.type == "audio-start":
            assert current is None, "audio-start inside an open audio cycle"
            current = [event]
        elif event.type == "audio-chunk":
            assert current is not None, "audio-chunk outside an audio cycle"
            current.append(event)
        elif event.type == "audio-stop":
            assert current is not None, "audio-stop without audio-start"
            current.append(event)
            cycles.append(current)
            current = None
    assert current is None, "audio cycle not closed"
    return cycles


def pcm_bytes(events: Sequence[Event]) -> bytes:
    return b"".join(e.payload or b"" for e in events if e.type == "audio-chunk")


def types_of(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


# The voice studio's fixtures (studio_factory, studio) live with its helpers; imported last,
# since those helpers import this module's ServerProcess.
from studio_browser import browser  # noqa: E402, F401
from studio_http import studio, studio_factory  # noqa: E402, F401
