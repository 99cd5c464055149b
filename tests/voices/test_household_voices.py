"""The household's voice per language ("use for LANGUAGE" in the studio): it speaks a request
naming no voice in that language, comes first in the voice list (its description marked,
so Home Assistant's sorted list starts with it), and is kept across restarts in a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyoming_omnivoice.voices import VoiceCatalog, VoiceLibrary, VoicePreset
from wyoming_omnivoice.voices.catalog import HOUSEHOLD_MARK
from wyoming_omnivoice.voices.household import household_file, read_household

DEFAULT = VoicePreset(name="en-female", description="Female voice", languages=("en",),
                      instruct="female")
GERMAN = VoicePreset(name="de-female", description="Female voice", languages=("de",),
                     instruct="female")
ANNA = VoicePreset(name="anna", description="Anna", languages=("de", "en"), instruct="female")
JOAO = VoicePreset(name="joao", description="João", languages=("pt",), variant="pt-BR",
                   instruct="male")
LUSA = VoicePreset(name="lusa", description="Lusa", languages=("pt",), instruct="female")


def library(tmp_path: Path) -> VoiceLibrary:
    return VoiceLibrary(VoiceCatalog([DEFAULT, GERMAN, ANNA, JOAO, LUSA]), "en-female",
                        household=household_file(tmp_path))


def test_a_chosen_voice_speaks_its_language_when_no_voice_is_named(tmp_path: Path) -> None:
    voices = library(tmp_path)
    assert voices.route(language="de") == GERMAN  # the first German voice, before
    assert voices.choose_for("German", "anna") == "de"
    for language in ("de", "de-DE", "de-AT", "de_ch"):
        assert voices.route(language=language) == ANNA
    assert voices.route("de-female") == GERMAN  # a named voice is that voice
    assert voices.route("de-nobody") == ANNA  # an unknown German name: the household's
    assert voices.route() == DEFAULT  # no language: the default voice's (English)
    assert voices.route(language="en") == DEFAULT  # anna speaks English, not chosen for it
    voices.choose_for("en", "anna")
    assert voices.route() == ANNA and voices.route(language="en-GB") == ANNA
    assert voices.default() == DEFAULT  # --voice itself is unchanged


def test_it_comes_first_for_its_language_and_sorts_first_in_home_assistant(
        tmp_path: Path) -> None:
    voices = library(tmp_path)
    voices.choose_for("de", "anna")
    listed = voices.catalog.advertised()
    assert listed[0].preset == ANNA and listed[0].description == HOUSEHOLD_MARK + "Anna"
    assert listed[0].languages == ["de", "de-DE", "de-AT", "de-CH"]
    # Its other language keeps its plain description, where it was in the list.
    plain = [entry for entry in listed[1:] if entry.preset == ANNA]
    assert [(e.description, e.languages[0]) for e in plain] == [("Anna", "en")]
    # Home Assistant sorts a language's voices by description: the marked one first.
    german = sorted(e.description for e in listed if "de" in e.languages)
    assert german[0] == HOUSEHOLD_MARK + "Anna"
    assert [e.preset.name for e in listed].count("anna") == 2


def test_a_regional_variant_is_its_own_language(tmp_path: Path) -> None:
    voices = library(tmp_path)
    assert voices.choose_for("pt_br", "joao") == "pt-BR"
    voices.choose_for("pt", "lusa")  # every Portuguese tag, but Brazil has its own
    assert voices.route(language="pt-BR") == JOAO
    assert voices.route(language="pt-PT") == LUSA and voices.route(language="pt") == LUSA
    tags = {e.preset.name: e.languages for e in voices.catalog.advertised()
            if e.description.startswith(HOUSEHOLD_MARK)}
    assert tags == {"joao": ["pt-BR"], "lusa": ["pt", "pt-PT"]}
    with pytest.raises(ValueError, match="does not speak 'pt-PT'"):
        voices.choose_for("pt-PT", "joao")  # a Brazilian voice lists Brazil only


def test_kept_across_restarts_and_undone_the_same_way(tmp_path: Path) -> None:
    voices = library(tmp_path)
    voices.choose_for("de", "anna")
    voices.choose_for("pt-BR", "joao")
    assert read_household(household_file(tmp_path)) == {"de": "anna", "pt-BR": "joao"}
    again = library(tmp_path)  # a restart
    assert again.route(language="de") == ANNA and again.route(language="pt-BR") == JOAO
    assert again.unchoose("German") and not again.unchoose("de")
    assert library(tmp_path).route(language="de") == GERMAN
    assert library(tmp_path).route(language="pt-BR") == JOAO


def test_a_removed_voice_is_no_household_voice(tmp_path: Path) -> None:
    voices = library(tmp_path)
    voices.choose_for("de", "anna")
    voices.unchoose_voice("anna")
    voices.remove("anna")
    assert voices.route(language="de") == GERMAN
    assert read_household(household_file(tmp_path)) == {}
    voices.choose_for("de", "de-female")
    voices.remove("de-female")  # without unchoose_voice first: remove does it
    assert read_household(household_file(tmp_path)) == {}


def test_a_voice_not_served_now_is_kept_for_later(tmp_path: Path) -> None:
    path = household_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("languages:\n  de: gone-voice\n", encoding="utf-8")
    voices = library(tmp_path)
    assert voices.route(language="de") == GERMAN
    voices.add([VoicePreset(name="gone-voice", description="Back", languages=("de",))])
    assert voices.route(language="de").name == "gone-voice"


@pytest.mark.parametrize("text", ["languages: [de, anna]\n", ":\n  - broken", "12\n"])
def test_a_broken_file_is_reported_and_chooses_nothing(
        tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture) -> None:
    path = household_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert library(tmp_path).route(language="de") == GERMAN
    assert str(path) in caplog.text


def test_a_choice_needs_a_voice_that_speaks_the_language(tmp_path: Path) -> None:
    voices = library(tmp_path)
    with pytest.raises(ValueError, match="There is no voice 'nobody'"):
        voices.choose_for("de", "nobody")
    with pytest.raises(ValueError, match="does not speak 'fr'"):
        voices.choose_for("fr", "anna")
    with pytest.raises(ValueError, match="Unknown language"):
        voices.choose_for("xx-none", "anna")
    assert not household_file(tmp_path).exists()
