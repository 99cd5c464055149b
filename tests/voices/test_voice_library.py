"""The voice library: the one owner of the voices being served. A change is one call, and
whatever asks next (routing, the catalogue, a request's voice part) sees it."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from wyoming_omnivoice.engine import VoicePrompt
from wyoming_omnivoice.voices import Anchor, VoiceCatalog, VoiceLibrary, VoicePreset

ANNA = VoicePreset(name="anna", description="Anna", languages=("en",), instruct="female")
BERND = VoicePreset(name="bernd", description="Bernd", languages=("de",), instruct="male",
                    speed=1.1)
CODES = np.zeros((8, 4), dtype=np.int64)


def library() -> VoiceLibrary:
    return VoiceLibrary(VoiceCatalog([ANNA]), "anna")


def test_an_added_voice_is_served_with_its_reference_at_once() -> None:
    voices = library()
    before = voices.catalog
    voices.add([BERND], anchors={"bernd": Anchor(codes=CODES, text="Hallo.")})
    assert voices.catalog is not before  # describe's cache is keyed by the catalogue
    assert voices.route("bernd") == BERND
    part = voices.voice_part(BERND)
    assert (part.instruct, part.speed, part.ref_text) == ("male", 1.1, "Hallo.")
    assert part.ref_codes is CODES and part.ref_rms is None


def test_a_clone_prompt_comes_before_an_anchor() -> None:
    voices = library()
    prompt = VoicePrompt(codes=CODES, text="Hello there.", rms=0.1)
    voices.add([BERND], anchors={"bernd": Anchor(codes=CODES, text="Hallo.")},
               prompts={"bernd": prompt})
    part = voices.voice_part(BERND)
    assert (part.ref_text, part.ref_rms) == ("Hello there.", 0.1)


def test_a_removed_voice_takes_its_references_along() -> None:
    voices = library()
    voices.add([BERND], anchors={"bernd": Anchor(codes=CODES, text="Hallo.")})
    voices.remove("bernd")
    assert "bernd" not in voices
    assert voices.voice_part(BERND).ref_codes is None


def test_the_default_voice_is_never_removed() -> None:
    voices = library()
    with pytest.raises(ValueError, match="default voice"):
        voices.remove("anna")
    assert voices.default() == ANNA


def test_an_unknown_name_is_routed_with_a_note(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert library().route("nobody") == ANNA
    assert "nobody" in caplog.text


def test_without_a_folder_watcher_looking_for_voices_changes_nothing() -> None:
    voices = library()
    before = voices.catalog
    voices.look_for_voices()
    assert voices.catalog is before
