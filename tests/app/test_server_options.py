"""Server flags: --no-streaming, --max-concurrent (busy), --voices-file, anchors, startup checks."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    REPO_ROOT,
    TINY_MODEL,
    ServerProcess,
    audio_cycles,
    describe,
    free_port,
    read_event,
    read_until,
    stream_once,
    synthesize_once,
    tiny_server_args,
    types_of,
)
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

USER_VOICES = """
voices:
  - name: narrator
    description: Calm narrator
    instruct: male, elderly, low pitch, british accent
    languages: [English]
    speed: 0.9
  - name: en-female-young
    description: Replaced built-in voice
    instruct: female, teenager
    languages: [en]
    anchor: false
"""


async def test_no_streaming_still_answers_streaming_events(server_factory) -> None:
    server = server_factory("--no-streaming", "--max-text-length", "200")
    info = await describe(server.uri)
    assert info.tts[0].supports_synthesize_streaming is False
    async with AsyncClient.from_uri(server.uri) as client:
        # Home Assistant 2025.8 sends the whole streaming sequence anyway: the compatibility
        # synthesize is spoken as one cycle, then synthesize-stopped ends it.
        events = await stream_once(client, ["Hello there. ", "Second sentence."], compat=True)
        assert events[-1].type == "synthesize-stopped"
        assert len(audio_cycles(events)) == 1
        # Without the compatibility copy the collected text is spoken.
        events = await stream_once(client, ["Only chunks here."], compat=False)
        assert events[-1].type == "synthesize-stopped"
        assert len(audio_cycles(events)) == 1
        # One-shot works as usual.
        events = await synthesize_once(client, "One shot.")
        assert len(audio_cycles(events)) == 1
        # Collected stream text is bounded by --max-text-length too.
        events = await stream_once(client, ["Twenty characters.. "] * 11, compat=False)
        assert types_of(events) == ["error", "synthesize-stopped"]
        assert events[0].data["code"] == "text-too-long"


async def test_max_concurrent_gives_busy_error_not_a_hang(server_factory) -> None:
    server = server_factory("--max-concurrent", "1")
    long_text = " ".join(f"Sentence number {i} keeps the server busy." for i in range(12))
    async with AsyncClient.from_uri(server.uri) as first:
        await first.write_event(Synthesize(text=long_text).event())
        assert (await read_event(first)).type == "audio-start"
        async with AsyncClient.from_uri(server.uri) as second:
            events = await synthesize_once(second, "Me too, please.")
            assert types_of(events) == ["error", "audio-start", "audio-stop"]
            assert events[0].data["code"] == "busy" and events[0].data["text"]
            # A stream is refused the same way and still ends with synthesize-stopped.
            events = await stream_once(second, ["Me too."])
            assert types_of(events) == ["error", "synthesize-stopped"]
        rest = await read_until(first, {"audio-stop"})
        assert types_of(rest)[-1] == "audio-stop"
    # The slot is free again once the first request is done.
    async with AsyncClient.from_uri(server.uri) as third:
        events = await synthesize_once(third, "Now it is my turn.")
        assert len(audio_cycles(events)) == 1


async def test_voices_file_adds_and_overrides(server_factory, tmp_path: Path) -> None:
    voices_file = tmp_path / "voices.yaml"
    voices_file.write_text(USER_VOICES, encoding="utf-8")
    server = server_factory("--voices-file", str(voices_file), "--voice", "narrator")
    info = await describe(server.uri)
    voices = {voice.name: voice for voice in info.tts[0].voices}
    assert voices["narrator"].description == "Calm narrator"
    assert voices["narrator"].languages[:2] == ["en", "en-US"]  # every English tag HA uses
    assert voices["en-female-young"].description == "Replaced built-in voice"
    names = list(voices)
    assert names.index("en-female-young") == 0  # built-in order kept, additions after the
    assert names.index("narrator") < names.index("de-female")  # written-out voices
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "The default voice is now the narrator.")
        assert len(audio_cycles(events)) == 1
        events = await synthesize_once(client, "Hi.", voice="en-female-young")
        assert len(audio_cycles(events)) == 1


async def test_text_too_long_is_refused(server_factory) -> None:
    server = server_factory("--max-text-length", "40")
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "This text is much longer than forty characters.")
        assert types_of(events) == ["error", "audio-start", "audio-stop"]
        assert events[0].data["code"] == "text-too-long"
        await client.write_event(SynthesizeStart().event())
        for _ in range(5):
            await client.write_event(SynthesizeChunk(text="Twelve chars").event())
        await client.write_event(SynthesizeStop().event())
        events = await read_until(client, {"synthesize-stopped"})
        assert types_of(events) == ["error", "synthesize-stopped"]
        events = await synthesize_once(client, "Short is fine.")
        assert len(audio_cycles(events)) == 1


def _anchor_files(data_dir: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (data_dir / "anchors").glob("*.npz")}


def _wait_background_anchors(server: ServerProcess) -> None:
    """Until the anchors built in the background after ready are all built."""
    deadline = time.monotonic() + 300
    while not re.search(r"Voice anchors: (\d+) of \1 built", server.log):
        assert server.alive and time.monotonic() < deadline, server.log
        time.sleep(0.2)


async def test_anchor_cache_is_reused_across_restarts(server_factory, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = server_factory(data_dir=data_dir)
    assert "Generating the anchor for voice 'en-female-young'" in first.log
    _wait_background_anchors(first)
    files = _anchor_files(data_dir)
    info = await describe(first.uri)
    preloaded = sum("en" in voice.languages for voice in info.tts[0].voices)
    assert len(files) == preloaded  # one anchor per English voice (--preload-languages en)
    assert all(name.endswith(".npz") and "en-" not in name for name in files)
    assert first.stop() == 0

    second = server_factory(data_dir=data_dir)
    assert "Generating the anchor" not in second.log
    assert _anchor_files(data_dir) == files  # reused, not rewritten
    events = await _one_shot(second.uri, "Same voice as before.")
    assert len(audio_cycles(events)) == 1
    assert second.stop() == 0

    # A corrupt cache file is rebuilt, the others are kept.
    victim = sorted(files)[0]
    (data_dir / "anchors" / victim).write_bytes(b"not an npz file")
    third = server_factory(data_dir=data_dir)
    if "Voice anchors: building" in third.log:  # the victim is not the default voice
        _wait_background_anchors(third)
    assert third.log.count("Generating the anchor") == 1
    assert "rebuilding" in third.log
    assert set(_anchor_files(data_dir)) == set(files)


async def _one_shot(uri: str, text: str) -> list:
    async with AsyncClient.from_uri(uri) as client:
        return await synthesize_once(client, text)


def _run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", *args], cwd=REPO_ROOT, capture_output=True,
        text=True, timeout=timeout, check=False,
    )


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--num-steps", "0"], "--num-steps 0"),
        (["--prefix-cache", "-2"], "--prefix-cache -2: use 0 (off, exact)"),
        (["--guidance-scale", "-1"], "--guidance-scale -1"),
        (["--samples-per-chunk", "3"], "--samples-per-chunk 3"),
        (["--max-concurrent", "0"], "--max-concurrent 0"),
        (["--uri", "http://localhost:1"], "--uri"),
        (["--uri", "tcp://127.0.0.1"], "needs a host and a port"),
        (["--zeroconf", "--uri", "stdio://"], "--zeroconf needs a tcp:// URI"),
        (["--voice", "nobody"], "'nobody' is not a known voice"),
        (["--voices-file", "/nonexistent/voices.yaml"], "/nonexistent/voices.yaml"),
    ],
)
def test_bad_flags_fail_with_one_clear_message(extra: list[str], needle: str,
                                               tmp_path: Path) -> None:
    args = tiny_server_args(free_port(), tmp_path / "data")
    result = _run_cli(*args, *extra)
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr
    assert "Ready" not in result.stderr


BAD_VOICES = """voices:
  - name: ok
    instruct: male
    languages: [en]
  - name: broken
    instruct: femal, britsh accent
    languages: [en]
  - name: no-words
    reference_audio: me.wav
    languages: [en]
  - name: ok
    instruct: female
    languages: [en]
"""


def _error_lines(log: str, needle: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("ERROR") and needle in line]


async def test_bad_voices_file_entries_are_skipped_others_served(server_factory,
                                                                 tmp_path: Path) -> None:
    """A bad entry costs only itself: one error line names the file, the entry and the fix;
    it is not advertised; every other voice is served."""
    voices_file = tmp_path / "my-voices.yaml"
    voices_file.write_text(BAD_VOICES, encoding="utf-8")
    (tmp_path / "me.wav").write_bytes(b"RIFF")
    server = server_factory("--voices-file", str(voices_file), data_dir=tmp_path / "data")
    names = [voice.name for voice in (await describe(server.uri)).tts[0].voices]
    assert "ok" in names and "en-female-young" in names
    assert "broken" not in names and "no-words" not in names
    broken = _error_lines(server.log, "'broken'")
    assert len(broken) == 1
    assert str(voices_file) in broken[0] and "#2" in broken[0]
    assert "female" in broken[0] and "british accent" in broken[0]  # the suggested fix
    assert "young adult" in broken[0]  # the allowed vocabulary is listed
    no_words = _error_lines(server.log, "'no-words'")
    assert len(no_words) == 1 and "reference_text" in no_words[0]
    twice = _error_lines(server.log, "used twice")
    assert len(twice) == 1 and "#4" in twice[0]
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "The good voice speaks.", voice="ok")
        assert len(audio_cycles(events)) == 1


def test_a_bad_default_voice_stops_the_start(tmp_path: Path) -> None:
    voices_file = tmp_path / "my-voices.yaml"
    voices_file.write_text(BAD_VOICES, encoding="utf-8")
    result = _run_cli(*tiny_server_args(free_port(), tmp_path / "data"),
                      "--voices-file", str(voices_file), "--voice", "broken")
    assert result.returncode == 2
    message = result.stderr
    assert "--voice 'broken'" in message and str(voices_file) in message
    assert "british accent" in message
    assert "Traceback" not in message


def test_an_unreadable_voices_file_is_skipped_unless_it_holds_the_default(
        tmp_path: Path) -> None:
    voices_file = tmp_path / "my-voices.yaml"
    voices_file.write_text("voices: [unclosed\n", encoding="utf-8")
    result = _run_cli(*tiny_server_args(free_port(), tmp_path / "data"),
                      "--voices-file", str(voices_file), "--voice", "narrator")
    assert result.returncode == 2
    assert "'narrator' is not a known voice" in result.stderr
    assert "not valid YAML" in result.stderr and str(voices_file) in result.stderr


def test_bad_model_dir_fails_with_model_error(tmp_path: Path) -> None:
    empty = tmp_path / "model"
    empty.mkdir()
    result = _run_cli("--uri", f"tcp://127.0.0.1:{free_port()}", "--model-dir", str(empty),
                      "--data-dir", str(tmp_path / "data"), "--device", "cpu")
    assert result.returncode == 2
    assert "llm_backbone_fp32.onnx" in result.stderr
    assert "Traceback" not in result.stderr


def test_version_flag() -> None:
    result = _run_cli("--version")
    assert result.returncode == 0
    from wyoming_omnivoice import __version__

    assert __version__ in result.stdout


async def test_sigterm_stops_cleanly(server_factory) -> None:
    server = server_factory()
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "Goodbye.")
        assert len(audio_cycles(events)) == 1
    assert server.stop() == 0
    assert "Stopping" in server.log


def test_tiny_model_exists() -> None:
    """The server tests need the committed tiny model fixture."""
    assert (TINY_MODEL / "llm_backbone_fp32.onnx").is_file()


async def test_stdio_transport(tmp_path: Path) -> None:
    """``--uri stdio://``: events over the process's stdin/stdout."""
    args = tiny_server_args(0, tmp_path / "data")
    args[args.index("--uri") + 1] = "stdio://"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wyoming_omnivoice", *args, cwd=REPO_ROOT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    from wyoming.event import async_read_event, async_write_event

    assert process.stdin is not None and process.stdout is not None
    try:
        await async_write_event(Synthesize(text="Over standard input.").event(), process.stdin)
        events = []
        while True:
            event = await asyncio.wait_for(async_read_event(process.stdout), 120)
            assert event is not None
            events.append(event)
            if event.type == "audio-stop":
                break
        assert len(audio_cycles(events)) == 1
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)


@pytest.mark.parametrize(
    ("host", "announced"),
    [("0.0.0.0", None), ("::", None), ("", None), (None, None),
     ("192.168.1.20", "192.168.1.20"), ("127.0.0.1", "127.0.0.1")],
)
def test_zeroconf_announces_a_real_address(host: str | None, announced: str | None) -> None:
    """A wildcard bind lets wyoming detect the LAN IP instead of announcing 0.0.0.0."""
    from wyoming_omnivoice.app.serve import zeroconf_host

    assert zeroconf_host(host) == announced


async def test_cloned_preset_from_voices_file(server_factory, tmp_path: Path) -> None:
    """A YAML preset with reference_audio + reference_text is a cloned voice."""
    import numpy as np
    import soundfile

    rate = 24000
    t = np.arange(int(3.0 * rate)) / rate
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 3 * t)  # syllable-like bursts
    wav = 0.3 * envelope * np.sin(2 * np.pi * (150 + 50 * np.sin(2 * np.pi * t)) * t)
    soundfile.write(tmp_path / "me.wav", wav.astype(np.float32), rate)
    voices_file = tmp_path / "voices.yaml"
    voices_file.write_text(
        "voices:\n  - name: me\n    description: My own voice\n"
        "    reference_audio: me.wav\n    reference_text: This is my own voice speaking.\n"
        "    languages: [en]\n",
        encoding="utf-8",
    )
    server = server_factory("--voices-file", str(voices_file), data_dir=tmp_path / "data")
    info = await describe(server.uri)
    voices = {voice.name: voice for voice in info.tts[0].voices}
    assert voices["me"].description == "My own voice"
    assert voices["me"].languages[:2] == ["en", "en-US"]
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "Hello from my cloned voice.", voice="me")
    assert len(audio_cycles(events)) == 1
