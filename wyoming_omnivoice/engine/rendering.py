"""A batch's codes to finished audio: one vocoder pass over every chunk of every item
(few shapes, see :mod:`.vocoder`), then each item's chunks cross-faded and post-processed
like upstream."""

from __future__ import annotations

import time

import numpy as np

from wyoming_omnivoice.engine.audio.postprocess import cross_fade_chunks, post_process
from wyoming_omnivoice.engine.audio.vocoder import Vocoder, check_codes
from wyoming_omnivoice.engine.constants import SAMPLE_RATE
from wyoming_omnivoice.engine.synthesis_stats import SynthesisStats


def render_batch(vocoder: Vocoder, codes: list[list[np.ndarray]],
                 ref_rms: list[float | None], stats: SynthesisStats) -> list[np.ndarray]:
    """Float32 audio per item from its chunks' ``[8, T]`` codes; fills ``stats``' vocoder
    and post-processing phases."""
    waves = vocoder.decode_many([check_codes(c) for chunks in codes for c in chunks])
    done = vocoder.last_stats
    stats.vocoder_s, stats.vocoder_calls = done.seconds, done.calls
    stats.vocoder_bucketed = done.bucketed
    started = time.perf_counter()
    out, start = [], 0
    for chunks, rms in zip(codes, ref_rms, strict=True):
        audio = waves[start:start + len(chunks)]
        start += len(chunks)
        joined = audio[0] if len(audio) == 1 else cross_fade_chunks(audio, SAMPLE_RATE)
        out.append(post_process(joined, rms))
    stats.post_s = time.perf_counter() - started
    return out
