"""The studio's languages: pt-BR is a language to pick (a voice that reads the Brazilian
way and is offered to Brazilian pipelines); a take keeps its region into the saved voice,
and what a save or an edit names wins over it. (Over HTTP: test_studio_api.py.)"""

from __future__ import annotations

import pytest

from wyoming_omnivoice.voices.config import build_catalog
from wyoming_omnivoice.voices.language_list import VoiceLanguages
from wyoming_omnivoice.web.design import languages
from wyoming_omnivoice.web.errors import ApiError
from wyoming_omnivoice.web.studio import Studio
from wyoming_omnivoice.web.takes import Design


def test_the_language_list_offers_each_regional_variant() -> None:
    rows = {row["id"]: row for row in languages(build_catalog())}
    assert rows["pt"]["tags"] == ["pt", "pt-PT", "pt-BR"]
    assert (rows["pt-BR"]["name"], rows["pt-BR"]["tags"]) == ("Portuguese (Brazil)", ["pt-BR"])
    assert (rows["pt-PT"]["name"], rows["pt-PT"]["tags"]) == ("Portuguese (Portugal)",
                                                                ["pt", "pt-PT"])
    assert "fazendo" in rows["pt-BR"]["sample"] and rows["pt-PT"]["sample"] == rows["pt"]["sample"]
    ids = [row["id"] for row in languages(build_catalog())]
    assert ids.index("pt-BR") == ids.index("pt") + 1  # next to their language


def test_a_brazilian_take_previews_and_saves_brazilian() -> None:
    take = Design("female", "pt", variant="pt-BR")
    assert take.tag == "pt-BR"
    preset = take.preset("ana")
    assert (preset.languages, preset.variant) == (("pt",), "pt-BR")
    assert preset.reading_language("pt") == "pt-BR"
    assert Studio._languages(None, take) == VoiceLanguages(("pt",), "pt-BR")
    assert Studio._languages(["en"], take) == VoiceLanguages(("pt", "en"), "pt-BR")
    assert Studio._languages(["en", "pt-BR"], take) == VoiceLanguages(("pt", "en"), "pt-BR")
    # What the save names wins: a Brazilian take kept as a Portugal-only voice.
    assert Studio._languages(["pt-PT"], take) == VoiceLanguages(("pt",), "pt")
    assert Studio._languages(None, Design(None, "de")) == VoiceLanguages(("de",))


def test_an_edit_names_the_languages_as_they_are_shown() -> None:
    assert Studio._languages(["pt-BR", "en"]) == VoiceLanguages(("pt", "en"), "pt-BR")
    assert Studio._languages(["pt", "en"]) == VoiceLanguages(("pt", "en"))
    with pytest.raises(ApiError) as err:
        Studio._languages(["pt-BR", "pt-PT"])
    assert err.value.code == "bad_languages" and "two regional variants" in str(err.value)
