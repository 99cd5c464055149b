"""How the server turns (voice, text) into an engine request: normalisation and references."""

from __future__ import annotations

import numpy as np
import pytest

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.speech.request_builder import make_request_factory
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


def portuguese(name: str, variant: str | None) -> VoicePreset:
    return VoicePreset(name=name, description=name, languages=("pt",), instruct="female",
                       variant=variant)


@pytest.mark.parametrize(("variant", "requested", "expected"), [
    ("pt", None, "Faltam dezasseis dias."),  # pt-female: European
    ("pt-BR", None, "Faltam dezesseis dias."),  # pt-BR-female: Brazilian
    (None, None, "Faltam dezasseis dias."),  # a written-out Portuguese voice: European
    ("pt", "pt-BR", "Faltam dezesseis dias."),  # the request's tag wins over the voice's
    (None, "pt_br", "Faltam dezesseis dias."),
    ("pt-BR", "pt-PT", "Faltam dezasseis dias."),
    ("pt-BR", "pt", "Faltam dezasseis dias."),
    ("pt-BR", "de-DE", "Faltam dezesseis dias."),  # a tag of another language: the voice's
])
def test_portuguese_is_read_the_way_of_the_region_asked_for(
        variant: str | None, requested: str | None, expected: str) -> None:
    make = make_request_factory(VoiceAssets(), normalize_default=True)
    request = make(portuguese("pt-voice", variant), "Faltam 16 dias.", requested)
    assert request.text == expected
    assert request.language == "pt"  # the engine speaks Portuguese either way


def test_text_in_another_script_is_not_read_as_brazilian() -> None:
    make = make_request_factory(VoiceAssets(), normalize_default=True)
    request = make(portuguese("pt-BR-female", "pt-BR"), "Απομένουν 16 ημέρες.", "pt-BR")
    assert request.language == "el"
    assert "dezesseis" not in request.text
