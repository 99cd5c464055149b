"""From (voice, text) to the engine's request: language, normalisation, voice reference.

- Language: the voice's (Chinese text picks the voice's Chinese variety when it has one),
  unless the text is clearly in another script (:mod:`.request_language`).
- Normalisation follows the voice's own switch when it has one; otherwise it is on when
  ``--normalize-text`` is on and the language has a full rule set (others are spoken as
  written, as upstream does by default).
- Reference: a cloned voice's clone prompt (with its loudness), else a designed voice's
  anchor (built on first use for a voice whose language was not preloaded), else none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wyoming_omnivoice.speech.request_language import request_language
from wyoming_omnivoice.voices.assets import VoiceAssets
from wyoming_omnivoice.voices.catalog import VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest


#: Builds the engine request for (voice, text); raises ValueError for bad input.
RequestBuilder = Callable[[VoicePreset, str], "SynthesisRequest"]


def make_request_factory(assets: VoiceAssets, normalize_default: bool) -> RequestBuilder:
    """A builder of engine requests; it raises ValueError for bad input."""
    from wyoming_omnivoice import SynthesisRequest
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    # The language identification (speech/text_language_id.py) starts loading after the
    # server is ready (speech/warmup.py); until then a voice speaks its own language.
    def make_request(voice: VoicePreset, text: str) -> SynthesisRequest:
        language = request_language(voice, text)
        if voice.normalize_text is not None:
            normalize = voice.normalize_text
        else:
            normalize = normalize_default and supports_language(language)
        if normalize:
            text = normalize_text(text, language)
        prompt = assets.prompts.get(voice.name)
        anchor = assets.anchor_for(voice)
        if prompt is not None:
            return SynthesisRequest(text=text, language=language, instruct=voice.instruct,
                                    speed=voice.speed, ref_codes=prompt.codes,
                                    ref_text=prompt.text, ref_rms=prompt.rms)
        if anchor is not None:
            return SynthesisRequest(text=text, language=language, instruct=voice.instruct,
                                    speed=voice.speed, ref_codes=anchor.codes,
                                    ref_text=anchor.text)
        return SynthesisRequest(text=text, language=language, instruct=voice.instruct,
                                speed=voice.speed)

    return make_request
