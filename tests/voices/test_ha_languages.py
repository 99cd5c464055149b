"""Voices for every Home Assistant language: tags, per-language voices, the order Home
Assistant shows them in, the voices file's language overrides, the request's language."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from wyoming_omnivoice.anchors.texts import ANCHOR_TEXTS
from wyoming_omnivoice.engine.prompt.languages import language_info
from wyoming_omnivoice.speech.request_language import (
    reading_language,
    request_language,
    text_language,
)
from wyoming_omnivoice.text.normalize import FULL_LANGUAGES, supports_language
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.config import VoiceConfigError, build_catalog
from wyoming_omnivoice.voices.ha_languages import (
    HA_LANGUAGE_TAGS,
    REGIONAL_VARIANTS,
    ha_language_ids,
    language_for_tag,
    variant_for_tag,
    variants_of,
)
from wyoming_omnivoice.wyoming_protocol.info import build_info

#: Home Assistant's Assist language list (homeassistant/generated/languages.py, LANGUAGES).
HA_ASSIST_LANGUAGES = (
    "af", "ar", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en", "en-GB", "eo",
    "es", "es-419", "et", "eu", "fa", "fi", "fr", "fy", "ga", "gl", "gsw", "he", "hi", "hr",
    "hu", "hy", "id", "is", "it", "ja", "ka", "ko", "lb", "lt", "lv", "mk", "ml", "nb", "nl",
    "nn", "pl", "pt", "pt-BR", "ro", "ru", "sk", "sl", "sq", "sr", "sr-Latn", "sv", "ta", "te",
    "th", "tr", "uk", "ur", "vi", "zh-Hans", "zh-Hant",
)
#: The one OmniVoice does not speak (Swiss German; de-CH is German's).
NOT_SPOKEN = {"gsw"}


def ha_voices_by_language(catalog: VoiceCatalog) -> dict[str, list[tuple[str, str]]]:
    """What Home Assistant's wyoming TTS entity builds: per advertised language, the voices
    as (shown name = description or name, voice id), sorted by the shown name."""
    voices: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for voice in build_info(catalog, streaming=True).tts[0].voices:
        for language in voice.languages:
            voices[language].append((voice.description or voice.name, voice.name))
    return {language: sorted(entries) for language, entries in voices.items()}


def test_every_assist_language_omnivoice_speaks_is_advertised_with_its_exact_tag() -> None:
    advertised = {tag for tags in HA_LANGUAGE_TAGS.values() for tag in tags}
    for tag in HA_ASSIST_LANGUAGES:
        if tag in NOT_SPOKEN:
            assert language_for_tag(tag) is None
            continue
        assert tag in advertised, tag  # tts.speak needs the exact tag
    for language in ha_language_ids():
        assert language_info(language) is not None, language  # an OmniVoice id
        assert language in ANCHOR_TEXTS, language  # anchored on its own language


@pytest.mark.parametrize(("tag", "language"), [
    ("de-DE", "de"), ("de_CH", "de"), ("pt-BR", "pt"), ("zh-Hant", "zh"), ("zh-HK", "yue"),
    ("ar", "arb"), ("AR-eg", "arb"), ("sr-Latn", "sr"), ("en-ZA", "en"), ("xx", None),
])
def test_tags_map_to_omnivoice_ids(tag: str, language: str | None) -> None:
    assert language_for_tag(tag) == language


def test_per_language_voices_list_only_their_language_and_ids_are_stable() -> None:
    catalog = build_catalog()
    german = catalog.get("de-female")
    assert german is not None and german.languages == ("de",)
    assert german.advertised_languages() == ["de", "de-DE", "de-AT", "de-CH"]
    # The ids that existed before the per-language voices are all still there.
    for name in ("en-female-young", "en-male-young", "en-female-british", "en-male-british",
                 "en-female-australian", "en-male-australian", "en-male-indian",
                 "en-female-canadian", "en-female-elderly", "en-male-elderly",
                 "en-female-teen", "en-child", "en-whisper", "zh-female", "zh-male",
                 "zh-whisper", "zh-sichuan-female", "zh-dongbei-male", "zh-henan-male"):
        assert name in catalog, name
    # Accents are English-only, dialects Chinese-only; written-out zh-female wins.
    assert not any(p.name.endswith("british") and p.language != "en" for p in catalog)
    assert all(p.language == "zh" for p in catalog if "话" in (p.instruct or ""))
    zh_female = catalog.get("zh-female")
    assert zh_female is not None and zh_female.instruct == "女, 青年"
    assert "female" not in catalog and "child" not in catalog  # templates are not voices


def test_regional_variants_get_voices_of_their_own() -> None:
    """Home Assistant sends the voice, never the pipeline's language: a Brazilian pipeline
    is offered the pt-BR voices only (read the Brazilian way), a Portuguese one the pt
    voices; both share the anchor (same content)."""
    catalog = build_catalog()
    by_language = ha_voices_by_language(catalog)
    templates = {p.template for p in catalog if p.language == "pt" and p.template}
    assert {name for _, name in by_language["pt-BR"]} == {f"pt-BR-{t}" for t in templates}
    assert {name for _, name in by_language["pt"]} == {f"pt-{t}" for t in templates}
    assert by_language["pt-PT"] == by_language["pt"]
    european, brazilian = catalog.get("pt-female"), catalog.get("pt-BR-female")
    assert european is not None and brazilian is not None
    assert (european.variant, brazilian.variant) == ("pt", "pt-BR")
    assert brazilian.languages == ("pt",)  # the engine speaks Portuguese
    assert brazilian.content_key() == european.content_key()
    assert (european.reading_language("pt"), brazilian.reading_language("pt")) == \
        ("pt", "pt-BR")
    assert brazilian.reading_language("en") == "en"
    # A voice the catalogue does not generate (cloned, written out) lists every tag.
    plain = VoicePreset(name="mine", description="Mine", languages=("pt",))
    assert plain.advertised_languages() == ["pt", "pt-PT", "pt-BR"]
    assert plain.reading_language("pt") == "pt"
    # Unknown names and language-only requests find the variant's voices.
    assert catalog.route("en-female-young", name="pt-BR-female-old").preset.name == \
        "pt-BR-female"
    assert catalog.route("en-female-young", language="pt-BR").preset.name == "pt-BR-female"
    assert catalog.route("en-female-young", language="pt_br").preset.name == "pt-BR-female"
    assert catalog.route("en-female-young", language="pt-PT").preset.name == "pt-female"


def test_every_regional_normalisation_table_has_voices() -> None:
    """A language whose normalisation has a table per region (pt-BR) has voices per region,
    and each variant names a table normalisation knows."""
    regional = [code for code in FULL_LANGUAGES if "-" in code]
    assert regional  # pt-BR
    for code in regional:
        base = code.split("-")[0]
        assert code in variants_of(base), code
        assert variant_for_tag(code) == code
    for language, variants in REGIONAL_VARIANTS.items():
        assert language in variants, language  # the plain voice names keep their variant
        assert supports_language(language)
        for variant, tags in variants.items():
            assert variant in FULL_LANGUAGES, variant
            assert all(variant_for_tag(tag) == variant for tag in tags)
            assert all(language_for_tag(tag) == language for tag in tags)
            assert set(tags) <= set(HA_LANGUAGE_TAGS[language])
        assert {t for tags in variants.values() for t in tags} == set(
            HA_LANGUAGE_TAGS[language])


def test_home_assistant_shows_the_adult_default_first_in_every_language() -> None:
    """HA sorts a language's voices by description and a new pipeline takes the first."""
    by_language = ha_voices_by_language(build_catalog())
    assert len(by_language) == sum(len(tags) for tags in HA_LANGUAGE_TAGS.values())
    for tag, voices in by_language.items():
        shown, first = voices[0]
        assert first.endswith("-female"), (tag, voices[:3])
        assert shown.startswith("Female voice") and "child" not in shown
        assert "whisper" not in shown


def test_info_stays_small() -> None:
    event = build_info(build_catalog(), streaming=True).event()
    import json

    size = len(json.dumps(event.data, ensure_ascii=False).encode())
    assert size < 100_000, size  # tens of KiB (benchmarks/bench_info.py prints it)


def test_voice_languages_restrict_and_extend(tmp_path: Path) -> None:
    path = tmp_path / "voices.yaml"
    path.write_text("voice_languages:\n  child: [en, de]\n  whisper: [all, nan]\n"
                    "  en-female-british: [en, German]\n", encoding="utf-8")
    catalog = build_catalog(path)
    assert {p.name for p in catalog if p.template == "child"} == {"en-child", "de-child"}
    assert "nan-whisper" in catalog and "fr-whisper" in catalog
    british = catalog.get("en-female-british")
    assert british is not None and british.languages == ("en", "de")
    bad = tmp_path / "bad.yaml"
    bad.write_text("voice_languages:\n  nobody: [en]\n", encoding="utf-8")
    with pytest.raises(VoiceConfigError, match="nobody"):
        build_catalog(bad)
    bad.write_text("voice_languages:\n  child: [klingon]\n", encoding="utf-8")
    with pytest.raises(VoiceConfigError, match="klingon"):
        build_catalog(bad)


def test_unknown_voice_speaks_with_the_best_voice_of_its_language() -> None:
    catalog = build_catalog()
    route = catalog.route("en-female-young", name="de-female-old")
    assert route.preset.name == "de-female" and route.note and "de-female-old" in route.note
    assert catalog.route("en-female-young", name="nobody").preset.name == "en-female-young"
    # "no" is Norwegian, but Norwegian voices are named nb-...: not a language prefix here.
    assert catalog.route("en-female-young", name="no-such-voice").preset.name == \
        "en-female-young"
    assert catalog.route("en-female-young", name="x", language="fr-FR").preset.name == \
        "fr-female"


@pytest.mark.parametrize(("voice", "text", "language"), [
    ("de", "Das Licht im Wohnzimmer ist jetzt an.", "de"),
    ("de", "The kitchen light is on.", "de"),  # same script: the voice's language
    ("de", "Свет на кухне включён.", None),  # Cyrillic is not German: language-free
    ("en", "リビングの電気をつけました。", "ja"),
    ("en", "거실 불을 켰어요.", "ko"),
    ("ru", "Свет на кухне включён.", "ru"),
    ("ja", "東京は晴れです。", "ja"),
    ("zh", "客厅的灯已经打开了。", "zh"),
    ("el", "OK", "el"),  # too few letters to tell
    ("fr", "Ελλάδα και Αθήνα σήμερα.", "el"),
])
def test_text_in_another_script_is_not_read_as_the_voice_language(
        voice: str, text: str, language: str | None) -> None:
    assert text_language(voice, text) == language


def test_request_language_follows_the_voice() -> None:
    catalog = build_catalog()
    voice = catalog.get("pt-female")
    assert voice is not None
    assert request_language(voice, "A luz está acesa.") == "pt"
    assert request_language(voice, "A luz está acesa.", "pt-BR") == "pt"
    assert reading_language(voice, "pt", "pt-BR") == "pt-BR"
    assert reading_language(voice, "pt", None) == "pt"
    assert reading_language(voice, None, "pt-BR") is None


@pytest.mark.parametrize(("voice", "text", "language"), [
    # An English answer of a conversation agent through a German pipeline.
    ("de", "Good morning! It is sunny today with a high of 24 degrees and a light breeze.",
     "en"),
    ("de", "Guten Morgen! Heute ist es sonnig bei bis zu 24 Grad und einer leichten Brise.",
     "de"),
    ("en", "Du hast zwei Termine, und die Waschmaschine ist seit einer Stunde fertig.", "de"),
    ("de", "Timer set for 10 minutes.", "de"),  # short: the voice's language stays
    ("es", "Temporizador de 10 minutos.", "es"),  # py3langid says pt here, unsure: kept
])
def test_long_text_in_another_language_of_the_same_script(voice: str, text: str,
                                                         language: str) -> None:
    from wyoming_omnivoice.speech.text_language_id import wait_loaded

    assert wait_loaded(120)
    assert text_language(voice, text) == language


def test_list_voices_shows_the_regional_variant(tmp_path: Path) -> None:
    import io

    from wyoming_omnivoice.voices.listing import list_voices

    out = io.StringIO()
    assert list_voices(tmp_path, None, out=out) == 0
    rows = {line.split()[0]: line.split()[1] for line in out.getvalue().splitlines()[1:-1]}
    assert (rows["pt-female"], rows["pt-BR-female"], rows["de-female"]) == ("pt", "pt-BR", "de")
