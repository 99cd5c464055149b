"""Audio in and out of the web server: answers as WAV/FLAC/PCM, uploads sniffed and decoded.

Answers carry exactly the 16-bit PCM a Wyoming client gets for the same audio
(``speech.pcm.audio_to_pcm``), in a WAV or FLAC container or raw.

An upload is trusted for nothing: its type comes from its first bytes (``RIFF....WAVE``,
``fLaC``, ``OggS``), never from its name or content type; it is decoded on a thread of its
own, off the event loop, within a time limit, and its length is checked against the limit.
"""

from __future__ import annotations

import asyncio
import io
import wave
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from wyoming_omnivoice.speech import CHANNELS, SAMPLE_WIDTH, Audio, audio_to_pcm
from wyoming_omnivoice.web.errors import ApiError
from wyoming_omnivoice.web.options import WebLimits

FORMATS = {"wav": "audio/wav", "flac": "audio/flac", "pcm": "audio/pcm"}

#: One decode at a time: a hostile file can hold at most this one thread.
_DECODER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="upload-decode")


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(CHANNELS)
        writer.setsampwidth(SAMPLE_WIDTH)
        writer.setframerate(sample_rate)
        writer.writeframes(pcm)
    return buffer.getvalue()


def encode_audio(audio: Audio, sample_rate: int, response_format: str) -> bytes:
    """``wav``, ``flac`` (lossless, from the same 16-bit samples) or raw ``pcm``."""
    pcm = audio_to_pcm(audio)
    if response_format == "pcm":
        return pcm
    if response_format == "wav":
        return wav_bytes(pcm, sample_rate)
    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, np.frombuffer(pcm, dtype="<i2"), sample_rate, format="FLAC",
                    subtype="PCM_16")
    return buffer.getvalue()


def sniff_audio(data: bytes) -> str | None:
    """``wav``, ``flac`` or ``ogg`` by the file's magic bytes, else None."""
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:4] == b"fLaC":
        return "flac"
    if data[:4] == b"OggS":
        return "ogg"
    return None


def _decode(data: bytes, max_seconds: float) -> tuple[Audio, int]:
    import soundfile

    try:
        info = soundfile.info(io.BytesIO(data))
        if info.frames > max_seconds * info.samplerate:
            raise ApiError(413, "recording_too_long", f"The recording is {info.duration:.0f} s "
                           f"long; the limit is {max_seconds:g} s (recording length limit). "
                           "3-10 s of clear speech clone best.")
        samples, sample_rate = soundfile.read(io.BytesIO(data), dtype="float32",
                                              always_2d=True)
    except ApiError:
        raise
    except Exception as err:  # libsndfile's errors have several types
        raise ApiError(400, "unreadable_recording", f"The recording cannot be read ({err}); "
                       "use a WAV, FLAC or OGG file") from None
    if samples.shape[0] == 0:
        raise ApiError(400, "empty_recording", "The recording holds no samples")
    # As load_reference_audio reads a voice folder's file: the same samples either way.
    return samples.mean(axis=1, dtype=np.float32), int(sample_rate)


async def decode_upload(data: bytes, limits: WebLimits) -> tuple[str, Audio, int]:
    """(kind, mono float32 samples, sample rate) of an uploaded recording, or ApiError."""
    if len(data) > limits.max_upload_bytes:
        raise ApiError(413, "upload_too_large", f"The recording is {len(data)} bytes; the "
                       f"limit is {limits.max_upload_bytes} bytes (upload size limit)")
    kind = sniff_audio(data)
    if kind is None:
        raise ApiError(415, "unsupported_recording", "The file is not a WAV, FLAC or OGG "
                       "recording (checked by its content, not its name)")
    loop = asyncio.get_running_loop()
    try:
        samples, sample_rate = await asyncio.wait_for(
            loop.run_in_executor(_DECODER, _decode, data, limits.max_upload_seconds),
            limits.decode_timeout_s)
    except TimeoutError:
        raise ApiError(400, "decode_timeout", f"The recording took over "
                       f"{limits.decode_timeout_s:g} s to decode (decode time limit); "
                       "send a plain WAV file") from None
    return kind, samples, sample_rate
