"""The languages and voices Home Assistant offers for the server, by its own rules.

Home Assistant 2026.2 (``components/wyoming/tts.py``, ``components/tts``,
``components/assist_pipeline/pipeline.py``, ``util/language.py``):

- the engine's languages are the union of its voices' languages;
- a pipeline in language L gets the engine when ``language.matches(L, engine languages)``
  finds a tag (same base language; regions only rank the matches), and the first voice of
  that tag's list becomes the pipeline's voice;
- a language's voices are listed by ``description or name``, sorted by that text;
- ``tts.speak`` (a stream with an explicit language) needs the exact tag among the engine's.
"""

from __future__ import annotations

import re

import pytest
from homeassistant.components.assist_pipeline.pipeline import (
    _async_resolve_default_pipeline_settings,
)
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import language as language_util

from conftest import HomeAssistantWithServer
from ha_audio import read_wav, speak

#: Pipeline languages (Home Assistant's own tags, homeassistant/generated/languages.py)
#: with a sentence in each.
PIPELINE_LANGUAGES = {
    "en": "The kitchen light is on.",
    "de": "Das Licht in der Küche ist an.",
    "fr": "La lumière de la cuisine est allumée.",
    "es": "La luz de la cocina está encendida.",
    "pl": "Światło w kuchni jest włączone.",
    "pt": "A luz da cozinha está acesa.",
    "pt-BR": "A luz da cozinha está acesa.",
    "ja": "台所の電気がついています。",
    "zh-Hans": "厨房的灯开着。",
}

#: Tags people write in ``tts.speak`` calls: the base tag and the usual regional form.
SPEAK_TAGS = ["en", "en-US", "en-GB", "de", "de-DE", "fr", "fr-FR", "es", "es-ES",
              "pl", "pl-PL", "pt", "pt-PT", "pt-BR", "ja", "ja-JP", "zh", "zh-CN"]

#: Words that mark a voice that must not be a language's default (the first voice).
NOT_A_DEFAULT = re.compile(r"child|kid|teen|whisper|elderly|old|儿童|童|耳语|老", re.IGNORECASE)


def tts_entity(ha: HomeAssistantWithServer):  # type: ignore[no-untyped-def]
    return ha.hass.data["tts"].get_entity(ha.entity_id)


def advertised(ha: HomeAssistantWithServer) -> dict[str, tuple[list[str], str]]:
    """The installed voices of the info Home Assistant read: name -> (languages, shown as)."""
    service = ha.hass.data["wyoming"][ha.entry_id].service
    program = next(program for program in service.info.tts if program.installed)
    return {voice.name: (list(voice.languages), voice.description or voice.name)
            for voice in program.voices if voice.installed}


async def test_engine_languages_are_the_union_of_voice_languages(
        ha: HomeAssistantWithServer) -> None:
    entity = tts_entity(ha)
    voices = advertised(ha)
    union = {language for languages, _shown in voices.values() for language in languages}
    assert set(entity.supported_languages) == union
    assert entity.default_language in union
    for language in union:
        listed = entity.async_get_supported_voices(language)
        assert [voice.voice_id for voice in listed] == sorted(
            (name for name, (languages, _) in voices.items() if language in languages),
            key=lambda name: voices[name][1])


@pytest.mark.parametrize("pipeline_language", list(PIPELINE_LANGUAGES))
async def test_new_pipeline_gets_the_engine_and_an_adult_voice(
        ha: HomeAssistantWithServer, pipeline_language: str) -> None:
    """A household whose Home Assistant speaks L creates a pipeline: our server is offered,
    with a neutral adult voice as the default, and it speaks L's text."""
    hass = ha.hass
    hass.config.language = pipeline_language
    settings = _async_resolve_default_pipeline_settings(
        hass, tts_engine_id=ha.entity_id, pipeline_name="test")
    base = pipeline_language.split("-")[0]
    assert settings["tts_engine"] == ha.entity_id, (
        f"Home Assistant does not offer the server for {pipeline_language} pipelines; "
        f"engine languages: {sorted(tts_entity(ha).supported_languages)}")
    tts_language = settings["tts_language"]
    assert tts_language is not None
    assert language_util.Dialect.parse(tts_language).language == base
    voices = tts_entity(ha).async_get_supported_voices(tts_language)
    assert voices, f"no voices listed for {tts_language}"
    default = voices[0]
    assert settings["tts_voice"] == default.voice_id
    assert not NOT_A_DEFAULT.search(default.name), (
        f"{tts_language}: the first voice by description is {default.name!r} "
        f"({default.voice_id}); Home Assistant makes it the default")
    assert tts_language in advertised(ha)[default.voice_id][0]

    extension, data = await speak(hass, ha.entity_id, PIPELINE_LANGUAGES[pipeline_language],
                                  language=tts_language,
                                  options={"voice": default.voice_id,
                                           "preferred_format": "wav"})
    assert extension == "wav"
    assert read_wav(data).seconds > 0.3
    assert f"Stream with voice {default.voice_id}\n" in ha.server.log


@pytest.mark.parametrize(("pipeline_language", "voice", "sixteen"), [
    ("pt-BR", "pt-BR-female", "dezesseis"), ("pt", "pt-female", "dezasseis")])
async def test_portuguese_pipelines_hear_their_own_numbers(
        ha: HomeAssistantWithServer, pipeline_language: str, voice: str, sixteen: str) -> None:
    """Home Assistant sends only the voice: a Brazilian pipeline gets the Brazilian voices
    (Brazilian number words), a Portuguese one the European voices."""
    hass = ha.hass
    hass.config.language = pipeline_language
    settings = _async_resolve_default_pipeline_settings(
        hass, tts_engine_id=ha.entity_id, pipeline_name="test")
    # Home Assistant scores "pt" and "pt-PT" alike for a "pt" pipeline and breaks the tie by
    # the order of a set of tags (the hash seed), so either is the European choice.
    chosen = settings["tts_language"]
    assert chosen in ({"pt", "pt-PT"} if pipeline_language == "pt" else {pipeline_language})
    assert settings["tts_voice"] == voice
    other = "pt-female" if voice.startswith("pt-BR") else "pt-BR-female"
    for tag in {pipeline_language, chosen}:
        offered = {v.voice_id for v in tts_entity(ha).async_get_supported_voices(tag)}
        assert voice in offered and other not in offered, tag
    extension, data = await speak(hass, ha.entity_id, "Faltam 16 dias.",
                                  language=chosen,
                                  options={"voice": voice, "preferred_format": "wav"})
    assert extension == "wav" and read_wav(data).seconds > 0.3
    assert f"Voice {voice} reads {'pt-BR' if 'BR' in voice else 'pt'} text as: " \
           f"'Faltam {sixteen} dias.'" in ha.server.log


async def test_tts_speak_accepts_the_tags_people_write(ha: HomeAssistantWithServer) -> None:
    """``tts.speak`` refuses a language tag the engine does not list exactly."""
    from homeassistant.components import tts

    refused = []
    for tag in SPEAK_TAGS:
        try:
            tts.async_create_stream(ha.hass, ha.entity_id, tag)
        except HomeAssistantError:
            refused.append(tag)
    assert not refused, f"tts.speak refuses {refused}"
