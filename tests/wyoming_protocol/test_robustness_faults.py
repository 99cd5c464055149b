"""Faults and lifecycle: engine errors, a dying worker, stuck clients, signals, bad caches.

Engine faults come from the test-only entry ``tests/faulty_server.py``: the real server
whose engine is wrapped so that a text containing ``faultengine`` raises an
onnxruntime-style error, ``faultmemory`` a ``MemoryError``, ``faultdeath`` kills the worker
thread. Everything else is the real server, engine and client.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    READ_TIMEOUT_S,
    REPO_ROOT,
    TINY_MODEL,
    ServerProcess,
    audio_cycles,
    describe,
    free_port,
    pcm_bytes,
    read_until,
    stream_once,
    synthesize,
    synthesize_once,
    tiny_server_args,
    types_of,
)
from faulty_server import FaultyEngine
from server_start import start_server, wait_for_log
from wyoming.client import AsyncClient
from wyoming.info import Info
from wyoming.tts import Synthesize

from wyoming_omnivoice import Engine, SynthesisRequest
from wyoming_omnivoice.app import startup
from wyoming_omnivoice.health_check import Unhealthy, _judge
from wyoming_omnivoice.speech import SpeechService, SpeechSettings
from wyoming_omnivoice.speech.worker import InferenceWorker, WorkerStoppedError
from wyoming_omnivoice.voices.config import build_catalog
from wyoming_omnivoice.voices.library import VoiceLibrary
from wyoming_omnivoice.wyoming_protocol.context import WyomingContext
from wyoming_omnivoice.wyoming_protocol.errors import StartupError

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

LONG_TEXT = " ".join(
    f"This is sentence number {n}, which keeps the synthesis busy for a while." for n in
    range(1, 13)
)


@pytest.fixture(scope="module")
def fault_server(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path
                 ) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("faults"), shared_data_dir, faulty=True)
    try:
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- engine faults


@pytest.mark.parametrize(("text", "needle"), [
    ("Please faultengine now.", "ONNXRuntimeError"),
    ("Please faultmemory now.", "MemoryError"),
])
async def test_engine_fault_fails_only_that_request(fault_server: ServerProcess, text: str,
                                                    needle: str) -> None:
    async with AsyncClient.from_uri(fault_server.uri) as client:
        events = await synthesize_once(client, text)
        # The error, then the request still ends with audio-stop (clients that ignore
        # error events do not hang).
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        assert events[0].data["code"] == "synthesis-failed"
        assert needle in events[0].data["text"]
        events = await synthesize_once(client, "And now a normal sentence.")
        assert len(audio_cycles(events)) == 1
    assert (await describe(fault_server.uri)).tts[0].installed


async def test_engine_fault_in_a_batch_spares_the_neighbours(fault_server: ServerProcess
                                                             ) -> None:
    texts = ["Neighbour one is fine.", "Boom faultengine here.", "Neighbour two is fine."]
    results = await asyncio.gather(*(synthesize(fault_server.uri, t) for t in texts))
    for text, events in zip(texts, results, strict=True):
        if "fault" in text:
            assert types_of(events) == ["error", "audio-start", "audio-stop"]
        else:
            assert len(audio_cycles(events)) == 1 and pcm_bytes(events)


async def test_engine_fault_mid_stream_still_ends_the_stream(fault_server: ServerProcess
                                                             ) -> None:
    async with AsyncClient.from_uri(fault_server.uri) as client:
        events = await stream_once(client, ["First part is fine. ", "Then faultengine. ",
                                            "Never spoken."], compat=False)
        assert types_of(events)[-1] == "synthesize-stopped"
        assert [e.data["code"] for e in events if e.type == "error"] == ["synthesis-failed"]
        events = await stream_once(client, ["A fresh stream works. "], compat=False)
        assert len(audio_cycles(events)) == 1


async def test_dead_worker_fails_requests_and_exits_non_zero(tmp_path: Path,
                                                             shared_data_dir: Path) -> None:
    server = start_server(tmp_path, shared_data_dir, faulty=True)
    try:
        events = await synthesize(server.uri, "This faultdeath kills the worker.")
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        assert events[0].data["code"] == "worker-stopped"
        assert server.wait_exit(60) == 1  # the container restarts it
        assert "The synthesis worker died" in server.log
    finally:
        server.stop()


async def test_dead_worker_makes_info_unhealthy() -> None:
    """In process: the real worker thread dies; info reports the program not installed."""
    engine = FaultyEngine(Engine.load(TINY_MODEL, device="cpu"))
    deaths: list[BaseException] = []
    worker = InferenceWorker(engine, on_death=deaths.append)
    worker.start()
    catalog = build_catalog(None)
    service = SpeechService(
        worker, VoiceLibrary(catalog, catalog.names[0]),
        lambda voice, text, requested=None: SynthesisRequest(text=text),
        SpeechSettings(sample_rate=engine.sample_rate))
    context = WyomingContext(service=service)
    _judge(Info.from_event(context.describe()))  # healthy
    job = worker.submit(SynthesisRequest(text="faultdeath", language="en"))
    with pytest.raises(WorkerStoppedError):
        await asyncio.wait_for(job.future, READ_TIMEOUT_S)
    assert not worker.alive and len(deaths) == 1
    with pytest.raises(Unhealthy, match="not available"):
        _judge(Info.from_event(context.describe()))
    with pytest.raises(WorkerStoppedError):
        worker.submit(SynthesisRequest(text="Anyone there?"))
    with pytest.raises(WorkerStoppedError):
        worker.call(lambda engine: engine.sample_rate)
    worker.stop(timeout=10)


# --------------------------------------------------------------------------- slow clients


async def test_client_that_never_reads_is_dropped(tmp_path: Path, shared_data_dir: Path
                                                  ) -> None:
    server = start_server(tmp_path, shared_data_dir, "--write-timeout", "2",
                          "--max-concurrent", "1")
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(_frame(Synthesize(text=LONG_TEXT * 2)))
        # While the stuck client's output piles up, others are still answered.
        assert (await describe(server.uri)).tts[0].installed
        wait_for_log(server, "--write-timeout")
        # Its request slot was released: with --max-concurrent 1 a new request is served.
        events = await synthesize(server.uri, "The stuck one is gone.")
        assert len(audio_cycles(events)) == 1
        sock.close()
    finally:
        assert server.stop() == 0


def _frame(eventable) -> bytes:
    import json

    event = eventable.event()
    blob = json.dumps(event.data).encode()
    return json.dumps({"type": event.type, "data_length": len(blob)}).encode() + b"\n" + blob


# --------------------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_finishes_requests_in_progress_then_exits_zero(
        tmp_path: Path, shared_data_dir: Path, sig: signal.Signals) -> None:
    server = start_server(tmp_path, shared_data_dir, "--shutdown-timeout", "300")
    try:
        async with AsyncClient.from_uri(server.uri) as client:
            await client.write_event(Synthesize(text=LONG_TEXT).event())
            first = await read_until(client, {"audio-chunk", "error"})
            assert first[-1].type == "audio-chunk"
            assert server.process is not None
            server.process.send_signal(sig)
            rest = await read_until(client, {"audio-stop"})
            events = first + rest
            assert len(audio_cycles(events)) == 1  # complete, not cut off
            assert await client.read_event() is None  # then the connection is closed
        assert server.wait_exit(60) == 0
        assert "Waiting up to" in server.log
    finally:
        server.stop()


async def test_shutdown_wait_is_bounded(tmp_path: Path, shared_data_dir: Path) -> None:
    server = start_server(tmp_path, shared_data_dir, "--shutdown-timeout", "0.5")
    try:
        async with AsyncClient.from_uri(server.uri) as client:
            await client.write_event(Synthesize(text=LONG_TEXT * 3).event())
            await read_until(client, {"audio-chunk"})
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            assert server.wait_exit(60) == 0
        assert "still in progress after 0.5 s" in server.log
    finally:
        server.stop()


async def test_new_requests_are_refused_while_draining(tmp_path: Path, shared_data_dir: Path
                                                       ) -> None:
    server = start_server(tmp_path, shared_data_dir, "--shutdown-timeout", "60")
    try:
        async with AsyncClient.from_uri(server.uri) as busy, \
                AsyncClient.from_uri(server.uri) as late:
            await busy.write_event(Synthesize(text=LONG_TEXT).event())
            first = await read_until(busy, {"audio-chunk"})
            assert server.process is not None
            server.process.send_signal(signal.SIGTERM)
            wait_for_log(server, "Waiting up to")
            events = await synthesize_once(late, "Too late.")
            assert types_of(events) == ["error", "audio-start", "audio-stop"]
            assert events[0].data["code"] == "shutting-down"
            events = await stream_once(late, ["Too late as well. "])
            assert types_of(events) == ["error", "synthesize-stopped"]
            assert events[0].data["code"] == "shutting-down"
            rest = await read_until(busy, {"audio-stop"})
            assert len(audio_cycles(first + rest)) == 1  # the request in progress completed
        assert server.wait_exit(60) == 0
    finally:
        server.stop()


# --------------------------------------------------------------------------- startup


def test_cuda_failure_falls_back_to_cpu_only_with_auto(monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    """A GPU provider that fails to create sessions: auto falls back loudly, cuda stops."""
    from wyoming_omnivoice import engine as engine_api
    from wyoming_omnivoice.engine import loading
    from wyoming_omnivoice.engine.runtime import onnx_sessions as sessions
    from wyoming_omnivoice.engine.runtime.onnx_sessions import ProviderChoice

    real = sessions.choose_providers

    def broken_gpu(device: str, **_options: bool) -> ProviderChoice:
        if device == "cpu":
            return real(device)
        return ProviderChoice("cuda", ("NoSuchGpuExecutionProvider",))

    monkeypatch.setattr(loading, "choose_providers", broken_gpu)
    monkeypatch.setattr(sessions, "choose_providers", broken_gpu)
    # the engine's public interface caches the name once it was asked for it
    monkeypatch.setattr(engine_api, "choose_providers", broken_gpu, raising=False)
    with caplog.at_level(logging.ERROR):
        engine = startup.load_engine(TINY_MODEL, "auto")
    assert engine.device == "cpu"
    assert any("FALLING BACK TO THE CPU" in r.getMessage() and r.levelno == logging.ERROR
               for r in caplog.records)
    with pytest.raises(StartupError, match="--device auto to allow the CPU"):
        startup.load_engine(TINY_MODEL, "cuda")


def test_device_cuda_without_cuda_stops_with_a_clear_message(tmp_path: Path) -> None:
    import subprocess
    import sys


    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", *tiny_server_args(free_port(), tmp_path)
         [:-1], "--device", "cuda"], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=120, check=False)
    assert result.returncode == 2
    assert "--device cpu" in result.stderr


@pytest.mark.parametrize("damage", ["empty", "garbage", "zip", "wrong-shape", "directory"])
async def test_broken_anchor_cache_is_rebuilt_not_fatal(tmp_path: Path, shared_data_dir: Path,
                                                        damage: str) -> None:
    import shutil

    data_dir = tmp_path / "data"
    shutil.copytree(shared_data_dir / "anchors", data_dir / "anchors")
    victims = sorted((data_dir / "anchors").glob("*.npz"))
    assert victims
    for victim in victims:
        if damage == "empty":
            victim.write_bytes(b"")
        elif damage == "garbage":
            victim.write_bytes(b"\x93NUMPY garbage" * 10)
        elif damage == "zip":
            victim.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
        elif damage == "wrong-shape":
            np.savez(victim, codes=np.zeros((3, 2)), text=np.array("x"), key=np.array("y"))
        else:
            victim.unlink()
            victim.mkdir()
    server = start_server(tmp_path, data_dir)
    try:
        assert "Generating the anchor" in server.log
        events = await synthesize(server.uri, "Rebuilt and fine.")
        assert len(audio_cycles(events)) == 1
    finally:
        assert server.stop() == 0
