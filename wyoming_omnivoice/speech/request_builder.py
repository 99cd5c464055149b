"""From (voice, text) to the engine's request: language, normalisation, voice reference.

- Language: the voice's (Chinese text picks the voice's Chinese variety when it has one),
  unless the text is clearly in another script (:mod:`.request_language`).
- Normalisation follows the voice's own switch when it has one; otherwise it is on when
  ``--normalize-text`` is on and the language has a full rule set (others are spoken as
  written, as upstream does by default). It reads the text the way of the language's
  regional variant when the request names one (``pt-BR``) or the voice is one's
  (``pt-BR-female``), else the language's own way (:func:`.request_language.reading_language`).
- The voice's part (instruct, speed, and its reference: a cloned voice's clone prompt with
  its loudness, else a designed voice's anchor, else none) comes from the voices being
  served (:meth:`wyoming_omnivoice.voices.library.VoiceLibrary.voice_part`). A designed
  voice's anchor not built yet is built here only before the worker runs; once it runs, the
  request leaves without it and its job builds it on the worker's thread
  (:meth:`.pieces.Speech._submit`).
- ``--deterministic``: the seed derived from the voice and the text (:mod:`.determinism`).
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Protocol

from wyoming_omnivoice.speech.determinism import request_seed
from wyoming_omnivoice.speech.request_language import reading_language, request_language
from wyoming_omnivoice.voices.assets import VoicePart
from wyoming_omnivoice.voices.catalog import VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest


_LOGGER = logging.getLogger(__name__)


class RequestBuilder(Protocol):
    """Builds the engine request for (voice, text, the language tag the request named);
    raises ValueError for bad input."""

    def __call__(self, voice: VoicePreset, text: str,
                 requested: str | None = None) -> SynthesisRequest: ...


class VoiceParts(Protocol):
    """Where a voice's part of a request comes from (the voice library)."""

    def voice_part(self, preset: VoicePreset) -> VoicePart: ...


def make_request_factory(voices: VoiceParts, normalize_default: bool,
                         deterministic: bool = False) -> RequestBuilder:
    """A builder of engine requests; it raises ValueError for bad input. ``deterministic``:
    each request's seed derived from its voice and text (``--deterministic``)."""
    from wyoming_omnivoice import SynthesisRequest
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    # The language identification (speech/text_language_id.py) starts loading after the
    # server is ready (speech/warmup.py); until then a voice speaks its own language.
    def make_request(voice: VoicePreset, text: str,
                     requested: str | None = None) -> SynthesisRequest:
        language = request_language(voice, text, requested)
        reading = reading_language(voice, language, requested)
        if voice.normalize_text is not None:
            normalize = voice.normalize_text
        else:
            normalize = normalize_default and supports_language(reading)
        if normalize:
            written, text = text, normalize_text(text, reading)
            if text != written:  # what the rules changed (the warm-up's "Ready." is not)
                _LOGGER.debug("Voice %s reads %s text as: %r", voice.name, reading, text)
        part = voices.voice_part(voice)
        request = SynthesisRequest(text=text, language=language, instruct=part.instruct,
                                   speed=part.speed, ref_codes=part.ref_codes,
                                   ref_text=part.ref_text, ref_rms=part.ref_rms)
        if deterministic:
            request = dataclasses.replace(request, seed=request_seed(voice.name, request))
        return request

    return make_request
