"""One warm-up at start-up, so the first request is as fast as the next.

Sessions are initialised, the normaliser's imports done, one full synthesis runs with the
default voice, and one decode step of a full batch (``max_batch`` requests of the engine's
own reply-sized warm-up sentence) runs so
the allocations a burst of concurrent requests needs are made before "ready": the first
burst is not slowed by them, and resident memory stays flat after start-up instead of
stepping up at the first busy moment.
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
            make_request: RequestBuilder, options: DecodeOptions, max_batch: int = 1) -> None:
    """Warm the engine and the text normalisers; StartupError if the default voice fails."""
    from wyoming_omnivoice.engine import SHORT_REPLY
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    engine.warm_up()
    for language in sorted({lang for preset in catalog for lang in preset.languages}):
        if supports_language(language):
            normalize_text(NORMALIZE_SAMPLE, language)
    try:
        engine.synthesize_batch([make_request(default, WARMUP_TEXT)], options=options)
        if max_batch > 1:
            burst = [make_request(default, SHORT_REPLY)] * max_batch
            engine.generate_codes_batch(burst, options=replace(options, num_step=1))
    except ValueError as err:
        raise StartupError(f"Warm-up synthesis with voice {default.name!r} failed: {err}"
                           ) from None
