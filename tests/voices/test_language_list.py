"""A voice's languages as written (ids, names, a regional variant's tag such as pt-BR): the
voices file, voice.yaml and ``voice_languages`` read the variant, and what the studio
writes reads back the same; the request builder reads a Brazilian voice's text the
Brazilian way."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.voices.assets import VoiceAssets, preset_from_spec
from wyoming_omnivoice.voices.cloned import read_voice_folder
from wyoming_omnivoice.voices.config import VoiceConfigError, build_catalog
from wyoming_omnivoice.voices.language_list import (
    VoiceLanguages,
    parse_languages,
    regional,
    written_tag,
)


@pytest.mark.parametrize(("written", "languages", "variant"), [
    (["pt-BR", "en"], ("pt", "en"), "pt-BR"),
    (["pt_br"], ("pt",), "pt-BR"),
    (["en", "PT-br", "pt"], ("en", "pt"), "pt-BR"),
    (["pt-PT"], ("pt",), "pt"),
    (["pt", "Portuguese"], ("pt",), None),
    (["German", "de"], ("de",), None),
])
def test_regional_tags_name_a_variant(written: list[str], languages: tuple[str, ...],
                                      variant: str | None) -> None:
    assert parse_languages(written) == VoiceLanguages(languages, variant)


def test_what_is_written_reads_back_the_same() -> None:
    for voice in [VoiceLanguages(("pt", "en"), "pt-BR"), VoiceLanguages(("pt",), "pt"),
                  VoiceLanguages(("en", "pt")), VoiceLanguages(("de",))]:
        assert parse_languages(voice.written()) == voice
    assert VoiceLanguages(("pt", "en"), "pt-BR").written() == ["pt-BR", "en"]
    assert VoiceLanguages(("pt",), "pt").written() == ["pt-PT"]
    assert written_tag("en", "pt-BR") == "en"  # a variant is only its own language's


@pytest.mark.parametrize(("written", "message"), [
    (["pt-BR", "pt-PT"], "two regional variants"),
    (["klingon"], "Unknown language"),
    (["none"], "not usable for a voice"),
    (["en-GB"], "Unknown language"),  # a tag of a language without variants: not a variant
    ([True], "must be text"),
])
def test_bad_languages_say_what_is_wrong(written: list[object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_languages(written)
    assert regional("pt") is None and regional("en-GB") is None


def test_a_voices_file_entry_reads_brazilian(tmp_path: Path) -> None:
    path = tmp_path / "voices.yaml"
    path.write_text("voices:\n  - name: ana\n    instruct: female\n    languages: [pt-BR, en]\n"
                    "  - name: rui\n    language: pt\nvoice_languages:\n"
                    "  en-female-british: [en, pt-BR]\n", encoding="utf-8")
    catalog = build_catalog(path)
    ana, rui = catalog.get("ana"), catalog.get("rui")
    british = catalog.get("en-female-british")
    assert ana is not None and rui is not None and british is not None
    assert (ana.languages, ana.variant) == (("pt", "en"), "pt-BR")
    assert ana.advertised_languages()[0] == "pt-BR" and "pt-PT" not in ana.advertised_languages()
    assert ana.reading_language("pt") == "pt-BR" and ana.reading_language("en") == "en"
    assert (rui.variant, rui.reading_language("pt")) == (None, "pt")
    assert (british.languages, british.variant) == (("en", "pt"), "pt-BR")
    path.write_text("voices:\n  - name: ana\n    languages: [pt-BR, pt-PT]\n", encoding="utf-8")
    with pytest.raises(VoiceConfigError, match=r"ana.*two regional variants"):
        build_catalog(path)


def test_a_voice_folder_reads_brazilian(tmp_path: Path) -> None:
    folder = tmp_path / "voices" / "bia"
    folder.mkdir(parents=True)
    (folder / "reference.wav").write_bytes(b"RIFF....WAVE")
    (folder / "reference.txt").write_text("Olá, tudo bem?\n", encoding="utf-8")
    for meta in ("language: pt-BR\n", "languages: [pt-BR]\n"):
        (folder / "voice.yaml").write_text(meta, encoding="utf-8")
        preset = preset_from_spec(read_voice_folder(folder))
        assert (preset.languages, preset.variant, preset.language) == (("pt",), "pt-BR", "pt")
    (folder / "voice.yaml").write_text("language: pt-XX\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"voice\.yaml.*pt-XX"):
        read_voice_folder(folder)


def test_a_brazilian_voice_reads_its_numbers_the_brazilian_way(tmp_path: Path) -> None:
    path = tmp_path / "voices.yaml"
    path.write_text("voices:\n  - name: ana\n    languages: [pt-BR]\n  - name: rui\n"
                    "    languages: [pt]\n", encoding="utf-8")
    catalog = build_catalog(path)
    make = make_request_factory(VoiceAssets(), normalize_default=True)
    ana, rui = catalog.get("ana"), catalog.get("rui")
    assert ana is not None and rui is not None
    assert make(ana, "Estão 16 graus.").text == "Estão dezesseis graus."
    assert make(rui, "Estão 16 graus.").text == "Estão dezasseis graus."
