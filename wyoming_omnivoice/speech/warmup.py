"""The warm-up: checked before ready, run right after, so the first request is as fast as
the next.

Before ready (:func:`check_default_voice`): the default voice's request is built (its
language, normalisation, anchor), so a default voice that cannot be spoken still stops the
start with one line, and the default voice's normalisers are imported.

Right after ready (:func:`warm_up_after_ready`): one small single-step synthesis in the
default voice's language and instruct (no anchor: a short prompt, every graph once) runs on
the worker before it takes a request (a request that arrives meanwhile waits for it, about
0.2 s at the real size on 2 cores), and a background thread imports the other voices'
normalisers, one language at a time and only while no request is in progress (they hold
the GIL), then loads the language identification. Before ready these cost a restart about
2 s at the real size on 2 cores (0.8 s synthesis with the anchor, 0.6 s normalisers of 21
languages, 0.5 s language id competing for the GIL). A cold CPU session runs its first
forward about as fast as the next (the arenas shrink after every run,
:func:`.onnx_sessions.shrinking_run_options`), so what is left cold costs little.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING

from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
    from wyoming_omnivoice.speech.worker import InferenceWorker

_LOGGER = logging.getLogger(__name__)

#: The warm-up synthesis: short, so it is over quickly.
WARMUP_TEXT = "Ready."
#: A normalisation sample with a number, a decimal and a time.
NORMALIZE_SAMPLE = "It is 21.5 degrees at 10:30."


def check_default_voice(default: VoicePreset, make_request: RequestBuilder
                        ) -> SynthesisRequest:
    """The default voice's warm-up request, built now (its normalisers imported);
    StartupError when it cannot be built."""
    warm_normalizers(default.languages)
    try:
        return make_request(default, WARMUP_TEXT)
    except ValueError as err:
        raise StartupError(f"Warm-up synthesis with voice {default.name!r} failed: {err}"
                           ) from None


def warm_normalizers(languages: Iterable[str]) -> None:
    """Import and compile the text normalisers of ``languages``."""
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    for language in sorted(set(languages)):
        if supports_language(language):
            normalize_text(NORMALIZE_SAMPLE, language)


def warm_up_after_ready(worker: InferenceWorker, request: SynthesisRequest,
                        options: DecodeOptions, catalog: VoiceCatalog, default: VoicePreset,
                        idle: Callable[[], bool] = lambda: True, prefix_cache: int = 0,
                        ) -> tuple[Future[None], threading.Thread]:
    """Queue the warm-up synthesis on the worker (before any request can reach it) and
    start the text warm-up thread, which works only while ``idle()``; their future and
    thread (tests wait on them). ``prefix_cache``: the requests' ``--prefix-cache``, whose
    session is warmed too."""
    from wyoming_omnivoice.speech.text_language_id import start_loading

    small = replace(request, ref_codes=None, ref_text=None, ref_rms=None)

    def synthesize(engine: Engine) -> None:
        from wyoming_omnivoice.engine import return_freed_memory
        try:
            if engine.device == "cuda" or prefix_cache >= 2:
                # One forward per length and row bucket (CUDA graphs), the device step
                # loop checked and captured, and the prefix-cache session.
                engine.warm_up(prefix_cache=prefix_cache, options=options)
            engine.synthesize_batch([small], options=replace(options, num_step=1))
        except ValueError as err:  # checked before ready; the engine may still refuse
            _LOGGER.error("Warm-up synthesis with the default voice %r failed: %s; its "
                          "requests will fail the same way", default.name, err)
            return
        finally:
            return_freed_memory()
        _LOGGER.info("Warmed up: every graph ran once (the default voice %r)", default.name)

    warmed = worker.call(synthesize)
    others = {language for preset in catalog for language in preset.languages}
    others -= set(default.languages)

    def when_idle() -> None:
        while not idle():
            time.sleep(0.05)

    def text() -> None:
        for language in sorted(others):
            when_idle()
            warm_normalizers([language])
        when_idle()
        start_loading()
        _LOGGER.debug("Text normalisers of %d more language(s) ready", len(others))

    thread = threading.Thread(target=text, name="omnivoice-warm-text", daemon=True)
    thread.start()
    return warmed, thread
