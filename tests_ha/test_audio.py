"""WAV and mp3 through Home Assistant's ``tts``, whole messages and messages in pieces."""

from __future__ import annotations

from conftest import HomeAssistantWithServer
from ha_audio import read_mp3, read_wav, speak, speak_pieces

#: Shortest audio taken as speech: the tiny model speaks ~0.1 s per character or so,
#: and an empty or header-only answer is 0.
MIN_SECONDS = 0.3


async def test_wav_is_the_server_audio_unconverted(ha: HomeAssistantWithServer) -> None:
    extension, data = await speak(ha.hass, ha.entity_id, "The kitchen light is on.",
                                  options={"preferred_format": "wav"})
    assert extension == "wav"
    wav = read_wav(data)
    assert (wav.rate, wav.width, wav.channels) == (24000, 2, 1)
    assert len(wav.pcm) % 2 == 0
    assert wav.seconds > MIN_SECONDS


async def test_satellite_format_is_converted_by_ffmpeg(ha: HomeAssistantWithServer) -> None:
    """What a voice satellite asks for: 16 kHz mono 16-bit WAV (ffmpeg resamples)."""
    options = {"preferred_format": "wav", "preferred_sample_rate": 16000,
               "preferred_sample_channels": 1, "preferred_sample_bytes": 2}
    extension, data = await speak(ha.hass, ha.entity_id, "The front door is locked.",
                                  options=options)
    assert extension == "wav"
    wav = read_wav(data)
    assert (wav.rate, wav.width, wav.channels) == (16000, 2, 1)
    assert wav.seconds > MIN_SECONDS


async def test_mp3_is_the_default_and_decodes(ha: HomeAssistantWithServer) -> None:
    """``tts.speak`` without options gives mp3, made by ffmpeg from the server's WAV."""
    extension, data = await speak(ha.hass, ha.entity_id, "It is twenty degrees outside.")
    assert extension == "mp3"
    mp3 = read_mp3(data)
    assert mp3.rate == 24000
    assert mp3.channels == 1
    assert mp3.seconds > MIN_SECONDS


async def test_text_arriving_in_pieces_is_spoken_whole(ha: HomeAssistantWithServer) -> None:
    """An Assist pipeline streams the agent's answer; pieces split words and sentences."""
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    assert entity.async_supports_streaming_input()  # so Home Assistant streams to us
    pieces = ["The kitchen ", "light is on", ". The fr", "ont door is ", "locked", "."]
    extension, data = await speak_pieces(ha.hass, ha.entity_id, pieces,
                                         options={"preferred_format": "wav"})
    assert extension == "wav"
    streamed = read_wav(data)
    assert (streamed.rate, streamed.width, streamed.channels) == (24000, 2, 1)
    # Both sentences are spoken: more audio than the first sentence alone.
    _, first_only = await speak(ha.hass, ha.entity_id, "The kitchen light is on.",
                                options={"preferred_format": "wav"})
    assert streamed.seconds > read_wav(first_only).seconds > MIN_SECONDS


async def test_text_in_pieces_as_mp3(ha: HomeAssistantWithServer) -> None:
    extension, data = await speak_pieces(ha.hass, ha.entity_id,
                                         ["Good ", "morning", ", it is ", "sunny", "."])
    assert extension == "mp3"
    assert read_mp3(data).seconds > MIN_SECONDS


async def test_one_shot_client_of_older_releases(ha: HomeAssistantWithServer) -> None:
    """Home Assistant before 2025.7 sends one ``synthesize`` and reads until ``audio-stop``.
    That client code is still in the integration; call it directly."""
    entity = ha.hass.data["tts"].get_entity(ha.entity_id)
    extension, data = await entity.async_get_tts_audio("The window is open.", "en", {})
    assert extension == "wav"
    wav = read_wav(data)
    assert (wav.rate, wav.width, wav.channels) == (24000, 2, 1)
    assert wav.seconds > MIN_SECONDS
