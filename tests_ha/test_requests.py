"""A named voice, an unknown voice and blank text, as Home Assistant sends them.

Home Assistant sends a voice name only when the user chose one, and never a language. A
voice saved in a pipeline and later removed from the server (or mistyped in a
``tts.speak`` call) must still be spoken, not left hanging or silent.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from conftest import HomeAssistantWithServer, ha_errors
from ha_audio import HANG_GUARD_S, mp3_seconds, read_mp3, read_wav, speak, speak_pieces

MIN_SECONDS = 0.3
UNKNOWN_VOICE = "a-voice-removed-since"


def voice_ids(ha: HomeAssistantWithServer, language: str) -> list[str]:
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    voices = entity.async_get_supported_voices(language) or []
    return [voice.voice_id for voice in voices]


async def test_named_voice_reaches_the_server(ha: HomeAssistantWithServer) -> None:
    """The voice picked in Home Assistant (not its default, the first) is the one used."""
    voices = voice_ids(ha, "en")
    assert len(voices) > 1
    chosen = voices[-1]
    extension, data = await speak(ha.hass, ha.entity_id, "Dinner is ready.",
                                  language="en", options={"voice": chosen,
                                                          "preferred_format": "wav"})
    assert extension == "wav"
    assert read_wav(data).seconds > MIN_SECONDS
    assert f"Stream with voice {chosen}\n" in ha.server.log


async def test_named_voice_in_the_one_shot_client(ha: HomeAssistantWithServer) -> None:
    chosen = voice_ids(ha, "en")[-1]
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    async with asyncio.timeout(HANG_GUARD_S):
        extension, data = await entity.async_get_tts_audio(
            "The garage is closed.", "en", {"voice": chosen})
    assert extension == "wav"
    assert read_wav(data).seconds > MIN_SECONDS
    assert f"One-shot with voice {chosen} " in ha.server.log


@pytest.mark.parametrize("audio_format", ["wav", "mp3"])
async def test_unknown_voice_is_spoken_with_a_warning(ha: HomeAssistantWithServer,
                                                      audio_format: str) -> None:
    extension, data = await speak(ha.hass, ha.entity_id, f"Unknown voice, {audio_format}.",
                                  language="en", options={"voice": UNKNOWN_VOICE,
                                                          "preferred_format": audio_format})
    assert extension == audio_format
    seconds = read_wav(data).seconds if audio_format == "wav" else read_mp3(data).seconds
    assert seconds > MIN_SECONDS
    warnings = [line for line in ha.server.log.splitlines()
                if line.startswith("WARNING") and UNKNOWN_VOICE in line]
    assert warnings, "the server did not warn about the unknown voice"


async def test_unknown_voice_of_a_german_pipeline_speaks_german(
        ha: HomeAssistantWithServer) -> None:
    """A German pipeline's saved voice, since removed: the server picks a German voice (the
    name's ``de-`` prefix; Home Assistant never sends the language) and says so."""
    removed = "de-removed-voice"
    extension, data = await speak(ha.hass, ha.entity_id, "Das Licht ist an.", language="de",
                                  options={"voice": removed, "preferred_format": "wav"})
    assert extension == "wav"
    assert read_wav(data).seconds > MIN_SECONDS
    used = re.findall(r"^DEBUG:\S+:Stream with voice (\S+)$", ha.server.log, re.MULTILINE)
    assert used and used[-1] in voice_ids(ha, "de"), used
    assert any(line.startswith("WARNING") and removed in line and used[-1] in line
               for line in ha.server.log.splitlines())


async def test_unknown_voice_in_the_one_shot_client(ha: HomeAssistantWithServer) -> None:
    """Before 2025.7, Home Assistant waited forever for an unknown voice's ``audio-stop``."""
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    async with asyncio.timeout(HANG_GUARD_S):
        extension, data = await entity.async_get_tts_audio(
            "Unknown voice, one-shot.", "en", {"voice": UNKNOWN_VOICE})
    assert extension == "wav"
    assert read_wav(data).seconds > MIN_SECONDS


@pytest.mark.parametrize("audio_format", ["wav", "mp3"])
async def test_blank_text_gives_empty_audio_not_an_error(ha: HomeAssistantWithServer,
                                                         ha_log: pytest.LogCaptureFixture,
                                                         audio_format: str) -> None:
    """Blank text (an automation with an empty template) is answered with valid, near-empty
    audio: Home Assistant builds its WAV header from ``audio-start``, and ffmpeg makes mp3
    of it; without one, ffmpeg fails and Home Assistant logs an error. With the default file
    cache Home Assistant tags the stored mp3, which needs an MPEG frame: the server's
    20 ms of silence gives one (an mp3 of no samples logs "ID3 tag error")."""
    extension, data = await speak(ha.hass, ha.entity_id, "  \n ",
                                  options={"preferred_format": audio_format})
    assert extension == audio_format
    seconds = read_wav(data).seconds if audio_format == "wav" else mp3_seconds(data)
    assert seconds < MIN_SECONDS
    # Home Assistant stores (and tags) the file after the audio was delivered: wait for it,
    # and judge its log here.
    await ha.hass.async_block_till_done()
    errors = ha_errors(ha_log)
    ha_log.clear()
    assert not errors, errors


async def test_blank_pieces_give_empty_audio(ha: HomeAssistantWithServer) -> None:
    extension, data = await speak_pieces(ha.hass, ha.entity_id, [" ", "", "\n"],
                                         options={"preferred_format": "wav"})
    assert extension == "wav"
    assert read_wav(data).seconds < MIN_SECONDS


async def test_blank_text_in_the_one_shot_client(ha: HomeAssistantWithServer) -> None:
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    async with asyncio.timeout(HANG_GUARD_S):
        extension, data = await entity.async_get_tts_audio(" ", "en", {})
    # The one-shot client gives a WAV only when audio arrived; an empty answer is b"".
    assert extension == "wav"
    assert data == b"" or read_wav(data).seconds < MIN_SECONDS
