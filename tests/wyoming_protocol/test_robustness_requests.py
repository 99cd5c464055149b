"""Odd and hostile request content against the real server (tiny model, real client).

Empty, whitespace-only, emoji-only and control-character texts, 100,000 characters (one-shot
and streamed), SSML and unknown text formats, unknown voice, speaker and language: each gets
either correct audio or one ``error`` event (then still ``audio-stop``), and the connection
stays usable.
"""

from __future__ import annotations

import pytest
from conftest import (
    ServerProcess,
    audio_cycles,
    pcm_bytes,
    read_until,
    stream_once,
    synthesize_once,
    types_of,
)
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

HUGE = 100_000


async def still_usable(client: AsyncClient) -> None:
    await client.write_event(Describe().event())
    assert (await read_until(client, {"info"}))[-1].type == "info"
    events = await synthesize_once(client, "Still fine.")
    assert len(audio_cycles(events)) == 1
    assert pcm_bytes(events)


def the_error(events: list[Event]) -> dict:
    errors = [e.data for e in events if e.type == "error"]
    assert len(errors) == 1, types_of(events)
    return errors[0]


@pytest.mark.parametrize("text", [
    "",
    "   \n\t  \r\n ",
    "😀🎉👍🏽❤️",
    "\u200b\u200d\ufe0f",
    "**  **",
])
async def test_nothing_to_say_gives_a_silent_audio_cycle(tiny_server: ServerProcess,
                                                         text: str) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await synthesize_once(client, text)
        assert types_of(events) == ["audio-start", "audio-chunk", "audio-stop"]
        assert set(pcm_bytes(events)) == {0}  # 20 ms of silence (an mp3 needs a frame)
        await still_usable(client)


@pytest.mark.parametrize("text", [
    "Hello\x00 world\x07, how\x1b[31m are you\x7f?",
    "Line one.\x0b\x0cLine two.\r\n",
    "Zero\ufeff width\u2028 and\u2029 separators.",
])
async def test_control_characters_are_spoken_around(tiny_server: ServerProcess,
                                                    text: str) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await synthesize_once(client, text)
        assert "error" not in types_of(events), events
        assert len(audio_cycles(events)) == 1
        assert pcm_bytes(events)
        await still_usable(client)


async def test_100k_characters_one_shot_is_refused(tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await synthesize_once(client, "word " * (HUGE // 5))
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        error = the_error(events)
        assert error["code"] == "text-too-long"
        assert "--max-text-length" in error["text"]
        await still_usable(client)


async def test_100k_characters_streamed_is_refused(tiny_server: ServerProcess) -> None:
    chunks = ["Sentence number one is here. " * 100] * (HUGE // 2900)
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await stream_once(client, chunks, compat=False)
        assert types_of(events)[-1] == "synthesize-stopped"
        assert the_error(events)["code"] == "text-too-long"
        await still_usable(client)


async def test_ssml_tags_are_stripped(tiny_server: ServerProcess) -> None:
    ssml = ('<speak version="1.0"><prosody rate="slow">Hello <break time="1s"/> '
            "world &amp; friends.</prosody></speak>")
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Synthesize(text=ssml, text_format="ssml").event())
        events = await read_until(client, {"audio-stop"})
        assert "error" not in types_of(events)
        assert len(audio_cycles(events)) == 1
        await client.write_event(Synthesize(text="<speak></speak>", text_format="ssml").event())
        assert types_of(await read_until(client, {"audio-stop"})) == \
            ["audio-start", "audio-chunk", "audio-stop"]


async def test_ssml_stream_is_spoken_without_tags(tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Event("synthesize-start", {"text_format": "ssml"}))
        for chunk in ("<speak>Good ", "morning. </speak>"):
            await client.write_event(SynthesizeChunk(text=chunk).event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
        assert "error" not in types_of(events)
        assert len(audio_cycles(events)) == 1


@pytest.mark.parametrize("fmt", ["markdown", "html", "audio/wav"])
async def test_unsupported_text_format_is_refused_clearly(tiny_server: ServerProcess,
                                                          fmt: str) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Synthesize(text="Hello.", text_format=fmt).event())
        events = await read_until(client, {"audio-stop"})
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        error = the_error(events)
        assert error["code"] == "unsupported-text-format"
        assert fmt in error["text"] and "ssml" in error["text"]
        await client.write_event(Event("synthesize-start", {"text_format": fmt}))
        await client.write_event(SynthesizeChunk(text="Hello. ").event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
        assert the_error(events)["code"] == "unsupported-text-format"
        assert "audio-chunk" not in types_of(events)
        await still_usable(client)


async def test_unknown_voice_names_are_spoken_with_the_default_voice(
        tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        for name in ("nobody", "../../etc/passwd", "x" * 5000, "en-female-young\x00"):
            events = await synthesize_once(client, "Hello.", voice=name)
            assert "error" not in types_of(events)
            assert len(audio_cycles(events)) == 1
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name="nobody")).event())
        await client.write_event(SynthesizeChunk(text="Hello. ").event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
        assert "error" not in types_of(events) and len(audio_cycles(events)) == 1
        await still_usable(client)
    assert "Unknown voice 'xxxxxxxx" in tiny_server.log
    assert "x" * 200 not in tiny_server.log  # a huge name is shortened in the log


async def test_unknown_speaker_is_ignored(tiny_server: ServerProcess) -> None:
    """OmniVoice voices have no speakers: a speaker name is ignored, the voice is used."""
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        voice = SynthesizeVoice(name="en-female-young", speaker="nobody")
        await client.write_event(Synthesize(text="Hello there.", voice=voice).event())
        events = await read_until(client, {"audio-stop"})
        assert len(audio_cycles(events)) == 1


@pytest.mark.parametrize("language", ["xx-klingon", "", "zz", "en_US.UTF-8", "\x00"])
async def test_unknown_language_falls_back_to_the_default_voice(tiny_server: ServerProcess,
                                                                language: str) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Event("synthesize", {"text": "Hello there.",
                                                      "voice": {"language": language}}))
        events = await read_until(client, {"audio-stop"})
        assert "error" not in types_of(events)
        assert len(audio_cycles(events)) == 1
