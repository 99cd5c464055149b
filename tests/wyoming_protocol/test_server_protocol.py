"""Wyoming conformance of the real server (tiny model, subprocess, real wyoming client)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import (
    ServerProcess,
    audio_cycles,
    describe,
    pcm_bytes,
    read_event,
    read_until,
    stream_once,
    synthesize_once,
    types_of,
)
from wyoming.audio import AudioChunk, AudioStart
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeVoice,
)

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

RATE = 24000
SAMPLES_PER_CHUNK = 1024


def check_format(cycle: list) -> None:
    start = AudioStart.from_event(cycle[0])
    assert (start.rate, start.width, start.channels) == (RATE, 2, 1)
    chunks = [AudioChunk.from_event(e) for e in cycle[1:-1]]
    assert chunks, "an audio cycle without audio"
    for chunk in chunks:
        assert (chunk.rate, chunk.width, chunk.channels) == (RATE, 2, 1)
    assert all(len(c.audio) == SAMPLES_PER_CHUNK * 2 for c in chunks[:-1])
    assert 0 < len(chunks[-1].audio) <= SAMPLES_PER_CHUNK * 2
    assert len(chunks[-1].audio) % 2 == 0


async def test_describe_lists_one_program_and_voices(tiny_server: ServerProcess) -> None:
    info = await describe(tiny_server.uri)
    assert len(info.tts) == 1 and not info.asr and not info.wake
    program = info.tts[0]
    assert program.installed and program.name == "omnivoice"
    assert program.supports_synthesize_streaming
    assert program.attribution.name and program.attribution.url
    assert len(program.voices) >= 12
    names = [voice.name for voice in program.voices]
    assert len(set(names)) == len(names)
    assert "en-female-young" in names and "zh-sichuan-female" in names and "en-whisper" in names
    for voice in program.voices:
        assert voice.installed
        assert voice.description
        assert voice.attribution.name and voice.attribution.url
        assert voice.languages
        for code in voice.languages:  # usable ISO codes, e.g. "en", "zh", "zh-HK"
            assert 2 <= len(code.split("-")[0]) <= 3 and code.split("-")[0].islower()
    # Stable order: a second describe gives the same list.
    again = await describe(tiny_server.uri)
    assert [voice.name for voice in again.tts[0].voices] == names


async def test_one_shot_multi_sentence_is_one_audio_cycle(tiny_server: ServerProcess) -> None:
    text = "Hello **there**. This is the second sentence! Is this the third one? Yes."
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await synthesize_once(client, text)
    assert types_of(events)[0] == "audio-start"
    assert types_of(events).count("audio-start") == 1
    assert types_of(events).count("audio-stop") == 1
    cycles = audio_cycles(events)
    assert len(cycles) == 1
    check_format(cycles[0])
    # Four sentences of speech: several tenths of a second at least.
    assert len(pcm_bytes(events)) > RATE * 2 * 0.5


async def test_home_assistant_streaming_sequence(tiny_server: ServerProcess) -> None:
    chunks = ["Hello there. ", "How are you today? ", "I am fine, thanks."]
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await stream_once(client, chunks, compat=True)
    assert events[-1].type == "synthesize-stopped"
    assert types_of(events).count("synthesize-stopped") == 1
    cycles = audio_cycles(events)
    # The first sentence alone, the others in one cycle each or, when they arrived while
    # the first decoded, merged by the pacing into one; the compatibility synthesize added
    # nothing.
    assert 2 <= len(cycles) <= 3
    for cycle in cycles:
        check_format(cycle)
    assert {e.type for e in events} <= {"audio-start", "audio-chunk", "audio-stop",
                                        "synthesize-stopped"}


async def test_fragments_split_mid_word(tiny_server: ServerProcess) -> None:
    chunks = ["Hel", "lo wor", "ld. Th", "is is sen", "tence t", "wo! And th", "ree", "."]
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await stream_once(client, chunks, compat=True)
    cycles = audio_cycles(events)
    assert 2 <= len(cycles) <= 3  # later sentences may be merged by the pacing
    for cycle in cycles:
        check_format(cycle)


async def test_streaming_audio_starts_before_text_ends(tiny_server: ServerProcess) -> None:
    """A completed sentence is spoken before synthesize-stop arrives."""
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk(text="The first sentence is done. ").event())
        await client.write_event(SynthesizeChunk(text="The second one is still").event())
        first = await read_until(client, {"audio-stop"})
        assert types_of(first)[0] == "audio-start"
        await client.write_event(SynthesizeChunk(text=" being written.").event())
        await client.write_event(SynthesizeStop().event())
        rest = await read_until(client, {"synthesize-stopped"})
    assert len(audio_cycles(first + rest)) == 2


async def test_one_shot_after_stream_on_same_connection(tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        streamed = await stream_once(client, ["One sentence. ", "Two sentences."])
        assert len(audio_cycles(streamed)) == 2
        events = await synthesize_once(client, "Now a one-shot request. With two sentences.")
        assert len(audio_cycles(events)) == 1
        # And streaming again after that.
        streamed = await stream_once(client, ["Again."], compat=False)
        assert len(audio_cycles(streamed)) == 1


async def test_unknown_and_empty_events_are_ignored(tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Event(type="no-such-event", data={"x": 1}))
        await client.write_event(Event(type="ping"))
        await client.write_event(Event(type="select-program", data={"name": "omnivoice"}))
        await client.write_event(Event(type="audio-chunk", data={}, payload=b"\x00\x00"))
        await client.write_event(Describe().event())
        events = await read_until(client, {"info"})
        assert types_of(events) == ["info"]
        # A malformed event gets an error; answers keep the order of the requests.
        await client.write_event(Event(type="synthesize-chunk"))  # no text
        await client.write_event(Describe().event())
        events = await read_until(client, {"info"})
        assert types_of(events) == ["error", "info"]
        # A stream started with an empty synthesize-start (no voice) still works.
        await client.write_event(Event(type="synthesize-start"))
        await client.write_event(SynthesizeChunk(text="Still working.").event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
    assert len(audio_cycles(events)) == 1


async def wait_for_log(server: ServerProcess, needle: str) -> None:
    for _ in range(100):
        if needle in server.log:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{needle!r} not in the log:\n{server.log[-3000:]}")


async def test_unknown_voice_is_spoken_with_the_best_voice_for_its_language(
    tiny_server: ServerProcess,
) -> None:
    """A voice saved in a client and later removed (or a typo) still speaks: the best voice
    for the request's language, with a warning in the log; never an error."""
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        events = await synthesize_once(client, "Hello.", voice="no-such-voice")
        assert "error" not in types_of(events)
        assert len(audio_cycles(events)) == 1 and pcm_bytes(events)
        await wait_for_log(tiny_server, "Unknown voice 'no-such-voice': speaking with "
                                        "'en-female-young'")
        # With a language, the default voice is not good enough: a voice that speaks it.
        # (SynthesizeVoice drops the language when a name is set: a raw event sends both.)
        await client.write_event(Event("synthesize", {
            "text": "你好。", "voice": {"name": "gone-voice", "language": "zh"}}))
        events = await read_until(client, {"audio-stop"})
        assert "error" not in types_of(events) and len(audio_cycles(events)) == 1
        await wait_for_log(tiny_server, "Unknown voice 'gone-voice': speaking with "
                                        "'zh-female'")
        # Streaming with an unknown voice: spoken, and the stream ends properly.
        events = await stream_once(client, ["Hi there."], voice="nobody")
        assert types_of(events)[-1] == "synthesize-stopped"
        assert "error" not in types_of(events) and len(audio_cycles(events)) == 1
        # Same connection, valid voice.
        events = await synthesize_once(client, "Hello again.", voice="en-male-british")
        assert len(audio_cycles(events)) == 1


async def test_describe_never_lands_inside_an_audio_cycle(tiny_server: ServerProcess) -> None:
    """Describes sent while a multi-sentence one-shot is being written are answered after
    its audio-stop, in order: the info never splits the audio cycle."""
    text = ("Short first sentence. Then a much longer second part that takes the worker "
            "a while to decode, with plenty of words to keep it busy for some time.")
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Synthesize(text=text).event())
        events = [await read_event(client)]
        describes = 0
        while events[-1].type != "audio-stop":
            if events[-1].type in ("audio-start", "audio-chunk") and describes < 20:
                await client.write_event(Describe().event())  # while the cycle is open
                describes += 1
            events.append(await read_event(client))
        for _ in range(describes - types_of(events).count("info")):
            events.append(await read_event(client))
    kinds = types_of(events)
    assert describes >= 2
    stop = kinds.index("audio-stop")
    assert set(kinds[stop + 1:]) == {"info"} and "info" not in kinds[:stop]
    assert len(audio_cycles(events)) == 1


async def test_empty_and_whitespace_text(tiny_server: ServerProcess) -> None:
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        for text in ("", "   \n\t ", "** 🙂 **"):
            events = await synthesize_once(client, text)
            assert types_of(events) == ["audio-start", "audio-chunk", "audio-stop"], text
            assert set(AudioChunk.from_event(events[1]).audio) == {0}, text  # silence
        # A stream with nothing to say still has its (silent) audio cycle: Home Assistant
        # builds the WAV it returns from audio-start, and an mp3 needs a frame.
        events = await stream_once(client, ["  ", "\n"], compat=True)
        assert types_of(events) == ["audio-start", "audio-chunk", "audio-stop",
                                    "synthesize-stopped"]


async def test_describe_answers_while_another_connection_synthesizes(
    tiny_server: ServerProcess,
) -> None:
    long_text = " ".join(f"This is sentence number {i} of a long reply." for i in range(12))
    async with AsyncClient.from_uri(tiny_server.uri) as busy:
        await busy.write_event(Synthesize(text=long_text).event())
        first = await read_event(busy)
        assert first.type == "audio-start"  # synthesis is now under way
        info = await asyncio.wait_for(_describe_on(tiny_server.uri), timeout=30)
        assert info.tts and info.tts[0].installed
        # The long synthesis was still running when the info arrived.
        rest = await read_until(busy, {"audio-stop"})
    assert len(audio_cycles([first, *rest])) == 1


async def _describe_on(uri: str) -> Info:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        return Info.from_event(await read_event(client))


async def test_concurrent_clients_are_all_served(tiny_server: ServerProcess) -> None:
    texts = [f"Client number {i} says hello. And goodbye." for i in range(4)]
    voices = ["en-female-young", "en-male-young", "zh-female", None]

    async def one(text: str, voice: str | None, streaming: bool) -> list:
        async with AsyncClient.from_uri(tiny_server.uri) as client:
            if streaming:
                return await stream_once(client, [text[:10], text[10:]], voice)
            return await synthesize_once(client, text, voice)

    results = await asyncio.gather(
        *(one(t, v, streaming=i % 2 == 1) for i, (t, v) in enumerate(zip(texts, voices,
                                                                         strict=True)))
    )
    for index, events in enumerate(results):
        cycles = audio_cycles(events)
        assert cycles, f"client {index} got no audio"
        for cycle in cycles:
            check_format(cycle)
        if index % 2 == 1:
            assert events[-1].type == "synthesize-stopped"
            assert len(cycles) == 2
        else:
            assert len(cycles) == 1


async def test_client_disconnecting_mid_stream_does_not_affect_others(
    tiny_server: ServerProcess,
) -> None:
    # Far more sentences than one batch holds, and more audio than the socket buffers: the
    # server cannot have finished them all by the time it notices the disconnect.
    sentences = [f"Sentence {i} of a reply nobody will hear. " for i in range(60)]
    client = AsyncClient.from_uri(tiny_server.uri)
    await client.connect()
    await client.write_event(SynthesizeStart().event())
    for sentence in sentences:
        await client.write_event(SynthesizeChunk(text=sentence).event())
    first = await read_event(client)
    assert first.type == "audio-start"
    await client.disconnect()  # gone mid-stream, without synthesize-stop

    async with AsyncClient.from_uri(tiny_server.uri) as other:
        events = await synthesize_once(other, "Another client is fine.")
        assert len(audio_cycles(events)) == 1
    # The server noticed the disconnect and dropped the sentences not yet started.
    for _ in range(100):
        if "cancelled" in tiny_server.log:
            break
        await asyncio.sleep(0.1)
    assert "Client disconnected: cancelled" in tiny_server.log
    assert tiny_server.alive


async def test_voice_given_only_by_language(tiny_server: ServerProcess) -> None:
    """A client may name a language instead of a voice: a voice speaking it is used."""
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        await client.write_event(Synthesize(
            text="你好，世界。", voice=SynthesizeVoice(language="zh")).event())
        events = await read_until(client, {"audio-stop"})
    assert len(audio_cycles(events)) == 1
    for _ in range(100):
        if "One-shot with voice zh-female" in tiny_server.log:
            break
        await asyncio.sleep(0.1)
    assert "One-shot with voice zh-female" in tiny_server.log


async def test_an_idle_open_stream_does_not_hold_back_a_lone_request(
    tiny_server: ServerProcess,
) -> None:
    """The batch window waits only for requests with text queued or decoding: a stream
    that is open but has nothing to say yet is not one of them."""
    async with AsyncClient.from_uri(tiny_server.uri) as idle, \
            AsyncClient.from_uri(tiny_server.uri) as client:
        await idle.write_event(SynthesizeStart().event())  # open, then silent
        await client.write_event(Describe().event())
        await read_until(client, {"info"})  # both connections are being served
        start = len(tiny_server.log)
        events = await synthesize_once(client, "A lone request.")
        assert len(audio_cycles(events)) == 1
        assert "Batch window" not in tiny_server.log[start:]
        await idle.write_event(SynthesizeStop().event())
        assert types_of(await read_until(idle, {"synthesize-stopped"})) == \
            ["audio-start", "audio-chunk", "audio-stop", "synthesize-stopped"]
