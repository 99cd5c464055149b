"""Voices kept by the studio: pinned anchor files (data only), the studio voices file read
by the one catalogue, voice folders written whole, and the export file's validation."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.anchors.pinned import load_pinned_anchor, save_pinned_anchor
from wyoming_omnivoice.app.startup import gather_voices
from wyoming_omnivoice.voices.language_list import VoiceLanguages
from wyoming_omnivoice.voices.saved import SavedVoiceError, SavedVoices
from wyoming_omnivoice.voices.transfer import export_voice, parse_voice_file

CODES = (np.arange(8 * 30).reshape(8, 30) % 1024).astype(np.int64)
ANCHOR = Anchor(codes=CODES, text="Hello! This is how my voice sounds when I read aloud.")


def test_pinned_anchor_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    save_pinned_anchor(path, ANCHOR, "steps=16")
    loaded = load_pinned_anchor(path)
    assert np.array_equal(loaded.codes, CODES) and loaded.text == ANCHOR.text


def test_pinned_anchor_never_unpickles(tmp_path: Path) -> None:
    """An anchor file holding a pickled object is refused, never loaded."""
    path = tmp_path / "evil.npz"
    np.savez(path, format_version=np.array(1), codes=np.array([{"x": 1}], dtype=object),
             text=np.array("hi"))
    with pytest.raises(ValueError, match="unreadable"):
        load_pinned_anchor(path)


@pytest.mark.parametrize("codes", [np.zeros((7, 10)), np.full((8, 10), 1024), np.zeros((8, 0)),
                                   np.zeros((8, 10), dtype=np.float32)])
def test_pinned_anchor_checks_its_codes(tmp_path: Path, codes: np.ndarray) -> None:
    path = tmp_path / "bad.npz"
    np.savez(path, format_version=np.array(1), codes=codes, text=np.array("hi"))
    with pytest.raises(ValueError, match="anchor codes"):
        load_pinned_anchor(path)


def test_saved_designed_voice_is_in_the_one_catalogue(tmp_path: Path) -> None:
    saved = SavedVoices(tmp_path)
    preset = saved.save_designed("anna", "Anna", VoiceLanguages(("en", "de")), "female, elderly",
                                 None, ANCHOR)
    assert preset.anchor_file == (tmp_path / "studio" / "anchors" / "anna.npz").resolve()
    catalog, problems, _ = gather_voices(tmp_path, None)
    assert not problems
    listed = catalog.get("anna")
    assert listed is not None and listed.languages == ("en", "de")
    assert listed.instruct == "female, elderly" and listed.anchor_file == preset.anchor_file
    with pytest.raises(SavedVoiceError, match="already saved"):
        saved.save_designed("anna", "Anna", VoiceLanguages(("en",)), None, None, ANCHOR)
    saved.update("anna", "Anna, kitchen", VoiceLanguages(("de",)))
    assert gather_voices(tmp_path, None)[0].get("anna").description == "Anna, kitchen"
    saved.delete("anna")
    assert "anna" not in gather_voices(tmp_path, None)[0]
    assert not preset.anchor_file.exists()


def test_saved_cloned_voice_is_a_voice_folder(tmp_path: Path) -> None:
    from wyoming_omnivoice.voices.saved import Recording

    saved = SavedVoices(tmp_path)
    preset = saved.save_cloned("bob", "Bob", VoiceLanguages(("en", "fr")),
                               Recording(b"RIFF....WAVE", "wav"), "Hello there.")
    folder = tmp_path / "voices" / "bob"
    assert (folder / "reference.wav").read_bytes() == b"RIFF....WAVE"
    assert (folder / "reference.txt").read_text().strip() == "Hello there."
    assert preset.languages == ("en", "fr") and preset.is_cloned
    assert [p.name for p in (tmp_path / "voices").iterdir()] == ["bob"]  # no staging left
    saved.delete("bob")
    assert list((tmp_path / "voices").iterdir()) == []


def test_export_round_trip_and_validation(tmp_path: Path) -> None:
    preset = SavedVoices(tmp_path).save_designed("anna", "Anna", VoiceLanguages(("en",)),
                                                 "female", 1.1, ANCHOR)
    document = json.loads(json.dumps(export_voice(preset, ANCHOR, None)))
    voice = parse_voice_file(document, max_audio_bytes=1000)
    assert voice.anchor is not None and np.array_equal(voice.anchor.codes, CODES)
    assert (voice.name, voice.instruct, voice.speed) == ("anna", "female", 1.1)
    for key, value, message in [
        ("version", 2, "version"), ("format", "other", "not a voice file"),
        ("kind", "script", "kind"), ("languages", ["klingon"], "Unknown language"),
    ]:
        broken = json.loads(json.dumps(document))
        broken[key] = value
        with pytest.raises(ValueError, match=message):
            parse_voice_file(broken, max_audio_bytes=1000)
    short = json.loads(json.dumps(document))
    short["designed"]["anchor"]["codes"] = base64.b64encode(b"\x00" * 10).decode()
    with pytest.raises(ValueError, match="do not match their shape"):
        parse_voice_file(short, max_audio_bytes=1000)


BRAZILIAN = VoiceLanguages(("pt", "en"), "pt-BR")


def test_a_saved_voice_keeps_its_region_through_save_edit_and_restart(tmp_path: Path) -> None:
    from wyoming_omnivoice.voices.saved import Recording

    saved = SavedVoices(tmp_path)
    designed = saved.save_designed("ana", "Ana", BRAZILIAN, "female", None, ANCHOR)
    cloned = saved.save_cloned("bia", "Bia", VoiceLanguages(("pt",), "pt-BR"),
                               Recording(b"RIFF....WAVE", "wav"), "Olá, tudo bem?")
    assert (designed.variant, cloned.variant) == ("pt-BR", "pt-BR")
    assert "- pt-BR" in saved.voices_file.read_text(encoding="utf-8")
    assert "pt-BR" in (tmp_path / "voices" / "bia" / "voice.yaml").read_text(encoding="utf-8")
    catalog = gather_voices(tmp_path, None)[0]  # what a restart reads
    for name, languages in [("ana", ("pt", "en")), ("bia", ("pt",))]:
        preset = catalog.get(name)
        assert preset is not None and (preset.languages, preset.variant) == (languages, "pt-BR")
        assert preset.advertised_languages()[0] == "pt-BR"
    edited = saved.update("ana", "Ana, kitchen", VoiceLanguages(("en", "pt"), "pt-BR"))
    assert (edited.languages, edited.variant) == (("en", "pt"), "pt-BR")
    assert saved.update("bia", "Bia", VoiceLanguages(("pt",), "pt-BR")).variant == "pt-BR"
    catalog = gather_voices(tmp_path, None)[0]
    assert [catalog.get(name).variant for name in ("ana", "bia")] == ["pt-BR", "pt-BR"]
    plain = saved.update("ana", "Ana", VoiceLanguages(("pt",)))  # the region dropped on purpose
    assert plain.variant is None and gather_voices(tmp_path, None)[0].get("ana").variant is None


def test_the_voice_file_carries_the_region(tmp_path: Path) -> None:
    preset = SavedVoices(tmp_path).save_designed("ana", "Ana", BRAZILIAN, "female", None, ANCHOR)
    document = json.loads(json.dumps(export_voice(preset, ANCHOR, None)))
    # Engine ids, as version 1 has always had them, and the variant beside them.
    assert (document["version"], document["languages"], document["variant"]) == (
        1, ["pt", "en"], "pt-BR")
    assert parse_voice_file(document, max_audio_bytes=1000).languages == BRAZILIAN
    older = {key: value for key, value in document.items() if key != "variant"}
    assert parse_voice_file(older, max_audio_bytes=1000).languages == VoiceLanguages(
        ("pt", "en"))  # a file from before the field: the plain language
    tagged = dict(older, languages=["pt-BR", "en"])  # the variant's tag in the list
    assert parse_voice_file(tagged, max_audio_bytes=1000).languages == BRAZILIAN
    for variant in ["pt-XX", "en-GB", 7, "pt-PT"]:
        with pytest.raises(ValueError, match="'variant'"):
            parse_voice_file(dict(document, variant=variant), max_audio_bytes=1000)
    with pytest.raises(ValueError, match="'variant'"):  # not a variant of its languages
        parse_voice_file(dict(document, languages=["en"]), max_audio_bytes=1000)
    european = dict(document, variant="pt")  # pt-female's: the default variant, by name
    assert parse_voice_file(european, max_audio_bytes=1000).languages == VoiceLanguages(
        ("pt", "en"), "pt")
