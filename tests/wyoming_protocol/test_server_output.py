"""The ordered output of a connection, on a real socket pair (no server process needed)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import numpy as np
import pytest
from wyoming.event import Event, async_read_event
from wyoming.tts import SynthesizeStopped

from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.wyoming_protocol.connection import Connection, ConnectionLimits
from wyoming_omnivoice.wyoming_protocol.output import OrderedOutput
from wyoming_omnivoice.wyoming_protocol.requests import Kind, PcmBuffer, Piece, Reply, Request

VOICE = VoicePreset(name="v", description="v", languages=("en",), instruct="female")


class Plain(Connection):
    async def handle_event(self, event: Event) -> bool:
        return True


@pytest.fixture
async def pair() -> AsyncIterator[tuple[OrderedOutput, asyncio.StreamReader, list[Request]]]:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    client_reader, client_writer = await asyncio.open_connection(sock=theirs)
    finished: list[Request] = []
    connection = Plain(reader, writer, ConnectionLimits(), set())
    output = OrderedOutput(connection, 24000, finish=finished.append, abort=connection.drop)
    yield output, client_reader, finished
    output.cancel()
    writer.close()
    client_writer.close()


async def read_types(reader: asyncio.StreamReader, count: int) -> list[str]:
    types = []
    for _ in range(count):
        event = await asyncio.wait_for(async_read_event(reader), 30)
        assert event is not None
        types.append(event.type)
    return types


async def never() -> np.ndarray:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def test_a_piece_dropped_because_its_stream_failed_is_not_an_error(pair) -> None:
    """A stream fails (text too long) while the sender waits for one of its pieces: the
    piece is dropped silently; only the stream's own answers follow."""
    output, client, finished = pair
    request = Request(kind=Kind.STREAM, voice=VOICE, pcm=PcmBuffer(1024))
    piece = Piece(request=request, text="Never spoken.", task=asyncio.create_task(never()))
    output.put(piece)
    await asyncio.sleep(0.05)  # the sender now waits for the piece's audio
    request.fail()
    piece.task.cancel()
    output.put(Reply([Event("error", {"text": "too long", "code": "text-too-long"})]))
    output.put(Reply([SynthesizeStopped().event()], ends=request))
    assert await read_types(client, 2) == ["error", "synthesize-stopped"]
    assert finished == [request]


async def test_a_one_shot_failing_before_audio_still_gets_its_ending(pair) -> None:
    output, client, finished = pair
    request = Request(kind=Kind.ONE_SHOT, voice=VOICE, pcm=PcmBuffer(1024))

    async def fails() -> np.ndarray:
        raise RuntimeError("engine fault")

    output.put(Piece(request=request, text="First.", task=asyncio.create_task(fails()),
                     opens=True, closes=False))
    output.put(Piece(request=request, text="Second.", task=asyncio.create_task(never()),
                     opens=False, closes=True, ends_request=True))
    assert await read_types(client, 3) == ["error", "audio-start", "audio-stop"]
    assert finished == [request]
