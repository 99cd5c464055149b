"""One warm-up at start-up, so the first request is as fast as the next.

Sessions are initialised, the normaliser's imports done, and one single-step synthesis runs
with the default voice (every graph once). Sessions hand their working memory back after
each run (:func:`..engine.sessions.shrinking_run_options`), so a warm-up burst of a full
batch would no longer keep a busy moment's allocations ready, only cost the restart time.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine

#: The warm-up synthesis: short, so start-up stays quick.
WARMUP_TEXT = "Ready."
#: A normalisation sample with a number, a decimal and a time.
NORMALIZE_SAMPLE = "It is 21.5 degrees at 10:30."


def warm_up(engine: Engine, catalog: VoiceCatalog, default: VoicePreset,
            make_request: RequestBuilder, options: DecodeOptions, max_batch: int = 1,
            prefix_cache: int = 0) -> None:
    """Warm the engine and the text normalisers; StartupError if the default voice fails
    (``max_batch`` is kept for callers; the burst it sized is gone, see the module;
    ``prefix_cache``: the requests' ``--prefix-cache``, whose session is warmed too)."""
    from wyoming_omnivoice.engine import return_freed_memory
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    engine.warm_up(prefix_cache=prefix_cache)
    for language in sorted({lang for preset in catalog for lang in preset.languages}):
        if supports_language(language):
            normalize_text(NORMALIZE_SAMPLE, language)
    # One step through every graph (embeddings, backbone, scoring, vocoder) with the
    # default voice: the first request then meets warm sessions. The full 16-step
    # synthesis and the batch of max_batch that were here cost a restart about 5 s at the
    # real size on 2 cores, and the batch left its working memory resident.
    try:
        engine.synthesize_batch([make_request(default, WARMUP_TEXT)],
                                options=replace(options, num_step=1))
    except ValueError as err:
        raise StartupError(f"Warm-up synthesis with voice {default.name!r} failed: {err}"
                           ) from None
    return_freed_memory()
