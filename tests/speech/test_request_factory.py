"""How the server turns (voice, text) into an engine request: normalisation and references."""

from __future__ import annotations

import numpy as np

from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.voices.anchors import Anchor
from wyoming_omnivoice.voices.assets import VoiceAssets
from wyoming_omnivoice.voices.catalog import VoicePreset

TEXT = "Battery at 85%."


def preset(name: str, language: str, normalize: bool | None = None) -> VoicePreset:
    return VoicePreset(name=name, description=name, languages=(language,),
                       instruct="female", normalize_text=normalize)


def test_normalisation_is_on_by_default_for_supported_languages() -> None:
    make = make_request_factory(VoiceAssets(), normalize_default=True)
    request = make(preset("en", "en"), TEXT)
    assert "85" not in request.text and "eighty-five" in request.text
    assert request.language == "en"


def test_unsupported_language_is_spoken_as_written() -> None:
    make = make_request_factory(VoiceAssets(), normalize_default=True)
    assert make(preset("ja", "ja"), TEXT).text == TEXT


def test_voice_switch_overrides_the_default_both_ways() -> None:
    on = make_request_factory(VoiceAssets(), normalize_default=True)
    off = make_request_factory(VoiceAssets(), normalize_default=False)
    assert on(preset("en-raw", "en", normalize=False), TEXT).text == TEXT
    assert "eighty-five" in off(preset("en-norm", "en", normalize=True), TEXT).text
    assert off(preset("en", "en"), TEXT).text == TEXT


def test_anchor_becomes_the_cloning_reference() -> None:
    codes = np.ones((8, 5), dtype=np.int64)
    assets = VoiceAssets(anchors={"en": Anchor(codes=codes, text="Anchor text.")})
    request = make_request_factory(assets, normalize_default=False)(preset("en", "en"), "Hi.")
    np.testing.assert_array_equal(request.ref_codes, codes)
    assert request.ref_text == "Anchor text."
    assert request.ref_rms is None
    assert request.instruct == "female"
