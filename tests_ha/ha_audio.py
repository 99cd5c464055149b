"""Getting audio out of Home Assistant's ``tts`` and reading it back.

Everything goes through Home Assistant's own code: ``tts.async_create_stream`` is what the
``tts.speak`` action and Assist pipelines use (language and option checks, caching, the
ffmpeg conversion), and the message stream is how a pipeline feeds a streaming engine text
while the conversation agent is still writing it.
"""

from __future__ import annotations

import asyncio
import io
import struct
import subprocess
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Any

import imageio_ffmpeg
from homeassistant.components import tts
from homeassistant.core import HomeAssistant
from mutagen.mp3 import MP3, HeaderNotFoundError

#: Only keeps a broken server from hanging the run; no test asserts on timing.
HANG_GUARD_S = 120.0


async def speak(hass: HomeAssistant, entity_id: str, message: str,
                language: str | None = None, options: dict[str, Any] | None = None
                ) -> tuple[str, bytes]:
    """The audio of one message, as ``tts.speak`` gets it: (extension, bytes)."""
    stream = tts.async_create_stream(hass, entity_id, language, options)
    stream.async_set_message(message)
    async with asyncio.timeout(HANG_GUARD_S):
        data = b"".join([chunk async for chunk in stream.async_stream_result()])
    return stream.extension, data


async def speak_pieces(hass: HomeAssistant, entity_id: str, pieces: Sequence[str],
                       language: str | None = None, options: dict[str, Any] | None = None
                       ) -> tuple[str, bytes]:
    """The audio of a message that arrives in pieces, as an Assist pipeline streams it."""

    async def text() -> AsyncGenerator[str]:
        for piece in pieces:
            await asyncio.sleep(0)  # let the engine start on what it has
            yield piece

    stream = tts.async_create_stream(hass, entity_id, language, options)
    stream.async_set_message_stream(text())
    async with asyncio.timeout(HANG_GUARD_S):
        data = b"".join([chunk async for chunk in stream.async_stream_result()])
    return stream.extension, data


@dataclass(frozen=True)
class Wav:
    rate: int
    width: int
    channels: int
    #: PCM bytes actually present (a streamed WAV's header declares 0 frames).
    pcm: bytes

    @property
    def seconds(self) -> float:
        return len(self.pcm) / (self.rate * self.width * self.channels)


def read_wav(data: bytes) -> Wav:
    """Parse a RIFF/WAVE file by its chunks, counting the data bytes that are there."""
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", f"not a WAV file: {data[:16]!r}"
    offset = 12
    fmt: tuple[int, int, int] | None = None
    while offset + 8 <= len(data):
        chunk_id = data[offset:offset + 4]
        size = struct.unpack_from("<I", data, offset + 4)[0]
        body = offset + 8
        if chunk_id == b"fmt ":
            _format, channels, rate, _byte_rate, _align, bits = struct.unpack_from(
                "<HHIIHH", data, body)
            fmt = (rate, bits // 8, channels)
        elif chunk_id == b"data":
            assert fmt is not None, "WAV data chunk before its fmt chunk"
            # A streamed WAV says 0 (or a placeholder) here: the bytes that follow are the audio.
            return Wav(fmt[0], fmt[1], fmt[2], data[body:])
        offset = body + size + (size & 1)
    raise AssertionError("WAV file without a data chunk")


@dataclass(frozen=True)
class Mp3:
    rate: int
    channels: int
    seconds: float


def read_mp3(data: bytes) -> Mp3:
    """An mp3 file's format (mutagen) and its length as decoded by ffmpeg."""
    info = MP3(io.BytesIO(data)).info
    return Mp3(info.sample_rate, info.channels, decoded_seconds(data))


def mp3_seconds(data: bytes) -> float:
    """Seconds of MPEG audio by its frames; 0.0 for a file without any (the ID3-only mp3
    that ffmpeg makes of a WAV without audio)."""
    try:
        return float(MP3(io.BytesIO(data)).info.length)
    except HeaderNotFoundError:
        return 0.0


def decoded_seconds(data: bytes) -> float:
    """Seconds of audio in a file as ffmpeg decodes it."""
    rate = 24000
    result = subprocess.run(
        [imageio_ffmpeg.get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-i", "pipe:0",
         "-f", "s16le", "-ac", "1", "-ar", str(rate), "pipe:1"],
        input=data, capture_output=True, check=True, timeout=HANG_GUARD_S)
    return len(result.stdout) / (2 * rate)
