"""The audio format every protocol sends: 16-bit little-endian mono PCM.

The speech service gives float32 samples in [-1, 1]; the Wyoming side sends them as
``audio-chunk`` payloads and the web side as WAV, FLAC or raw PCM answers. Both convert
here, so an answer carries exactly the samples a Wyoming client gets for the same audio.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Speech as the engine gives it and every part passes it on: float32 mono samples in [-1, 1]
#: at the engine's sample rate (the one audio type of the service and both protocols).
Audio = np.ndarray[Any, np.dtype[np.float32]]

#: Bytes per sample (16-bit).
SAMPLE_WIDTH = 2
#: Mono.
CHANNELS = 1


def audio_to_pcm(audio: np.ndarray[Any, np.dtype[Any]]) -> bytes:
    """float32 [-1, 1] -> 16-bit little-endian PCM."""
    samples = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
    return np.round(samples * 32767.0).astype("<i2").tobytes()
