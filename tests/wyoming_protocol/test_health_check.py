"""The container health check against real Wyoming servers on loopback ports."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial

import pytest
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, TtsProgram, TtsVoice
from wyoming.server import AsyncEventHandler, AsyncServer

from wyoming_omnivoice import health_check

ATTRIBUTION = Attribution(name="k2-fsa", url="https://github.com/k2-fsa/OmniVoice")


def _info(*, installed: bool = True, programs: int = 1) -> Info:
    voice = TtsVoice(
        name="narrator", description="test voice", attribution=ATTRIBUTION, installed=True,
        version=None, languages=["en"],
    )
    program = TtsProgram(
        name="omnivoice", description="OmniVoice", attribution=ATTRIBUTION,
        installed=installed, version="0.1.0", voices=[voice],
    )
    return Info(tts=[program] * programs)


class Handler(AsyncEventHandler):
    def __init__(self, answer: Callable[[], Event | None], *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._answer = answer

    async def handle_event(self, event: Event) -> bool:
        if not Describe.is_type(event.type):
            return True
        reply = self._answer()
        if reply is None:  # close without answering
            return False
        if reply.type == "hang":
            await asyncio.sleep(3600)
        await self.write_event(reply)
        return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@asynccontextmanager
async def serving(answer: Callable[[], Event | None]) -> AsyncIterator[str]:
    uri = f"tcp://127.0.0.1:{_free_port()}"
    server = AsyncServer.from_uri(uri)
    await server.start(partial(Handler, answer))
    try:
        yield uri
    finally:
        await server.stop()


async def test_healthy_server_passes() -> None:
    async with serving(lambda: _info().event()) as uri:
        summary = await health_check.probe(uri, timeout=10)
    assert summary == "omnivoice 0.1.0 with 1 voices"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (lambda: _info(installed=False).event(), "not available"),
        (lambda: _info(programs=0).event(), "no text-to-speech program"),
        (lambda: Error(text="engine failed", code="model").event(), r"engine failed \(model\)"),
        (lambda: None, "closed the connection"),
    ],
    ids=["worker-died", "no-tts", "error-event", "closed"],
)
async def test_unhealthy_answers_are_reported(
    answer: Callable[[], Event | None], reason: str
) -> None:
    async with serving(answer) as uri:
        with pytest.raises(health_check.Unhealthy, match=reason):
            await health_check.probe(uri, timeout=10)


async def test_silent_server_times_out() -> None:
    async with serving(lambda: Event(type="hang")) as uri:
        with pytest.raises(health_check.Unhealthy, match=r"no info .* within 0\.2 s"):
            await health_check.probe(uri, timeout=0.2)


async def test_nothing_listening_is_reported() -> None:
    uri = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(health_check.Unhealthy, match="cannot connect"):
        await health_check.probe(uri, timeout=10)


async def _run_module(uri: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wyoming_omnivoice.health_check", "--uri", uri, "--timeout", "20",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_module_exit_codes_as_docker_sees_them() -> None:
    async with serving(lambda: _info().event()) as uri:
        code, out, _ = await _run_module(uri)
    assert (code, out.strip()) == (0, "healthy: omnivoice 0.1.0 with 1 voices")
    async with serving(lambda: _info(installed=False).event()) as uri:
        code, _, err = await _run_module(uri)
    assert code == 1
    assert err.startswith("unhealthy: TTS program omnivoice is not available")
