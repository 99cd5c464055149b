"""Cloned voices: folder discovery, validation, path safety and the clone-prompt cache.

Runs the real engine on the tiny model; the reference recordings are generated here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from conftest import FIXTURES, describe, pcm_bytes, synthesize, types_of

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.audio.voice_prompt import VoicePrompt, read_prompt_extras
from wyoming_omnivoice.voices.cloned import (
    ClonedVoiceSpec,
    cache_path,
    discover_cloned_voices,
    load_clone_prompt,
    read_voice_folder,
)
from wyoming_omnivoice.voices.names import check_voice_name
from wyoming_omnivoice.voices.reference import CloneReference

TINY = FIXTURES / "models" / "tiny"


def speechlike(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    """Noise bursts with short pauses, roughly like syllables."""
    rng = np.random.default_rng(seed)
    out = []
    while sum(map(len, out)) < seconds * rate:
        out.append(rng.uniform(-0.3, 0.3, int(rng.uniform(0.15, 0.4) * rate)))
        out.append(np.zeros(int(0.05 * rate)))
    return np.concatenate(out)[: int(seconds * rate)].astype(np.float32)


def make_voice(data_dir: Path, name: str, *, ext: str = "wav", transcript: str | None = "Hello.",
               meta: str | None = None, seconds: float = 2.5, rate: int = 24000,
               seed: int = 0) -> Path:
    folder = data_dir / "voices" / name
    folder.mkdir(parents=True)
    subtype = "VORBIS" if ext == "ogg" else "PCM_16"
    sf.write(folder / f"reference.{ext}", speechlike(seconds, rate, seed), rate, subtype=subtype)
    if transcript is not None:
        (folder / "reference.txt").write_text(transcript, encoding="utf-8")
    if meta is not None:
        (folder / "voice.yaml").write_text(meta, encoding="utf-8")
    return folder


class CountingEngine:
    """The real engine, counting how often it encodes a reference."""

    def __init__(self, engine: Engine, fingerprint: str | None = None) -> None:
        self.engine = engine
        self.fingerprint = fingerprint or engine.fingerprint
        self.encodes = 0

    def encode_reference(self, wav: Any, sample_rate: int, ref_text: str) -> VoicePrompt:
        self.encodes += 1
        return self.engine.encode_reference(wav, sample_rate, ref_text)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY, device="cpu")


# ---------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------


def test_discovers_folder_voices_sorted_with_their_metadata(tmp_path: Path) -> None:
    make_voice(tmp_path, "zoe", ext="flac", transcript="Guten Tag.\n",
               meta="language: de\ndescription: Zoe from Berlin\nnormalize_text: false\n")
    make_voice(tmp_path, "anna", transcript="  Hello   there\nfriend ")
    make_voice(tmp_path, "max", ext="ogg")
    (tmp_path / "voices" / "README.txt").write_text("not a voice")
    (tmp_path / "voices" / ".hidden").mkdir()

    specs = discover_cloned_voices(tmp_path)

    assert [s.name for s in specs] == ["anna", "max", "zoe"]
    anna, max_, zoe = specs
    assert anna.reference.transcript == "Hello there friend"
    assert anna.audio_path == tmp_path / "voices" / "anna" / "reference.wav"
    assert anna.language is None and anna.description is None
    assert max_.audio_path.name == "reference.ogg"
    assert zoe.audio_path.name == "reference.flac"
    assert (zoe.language, zoe.description, zoe.normalize_text) == ("de", "Zoe from Berlin", False)


def test_no_voices_folder_means_no_voices(tmp_path: Path) -> None:
    assert discover_cloned_voices(tmp_path) == []
    assert discover_cloned_voices(tmp_path / "missing") == []


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: make_voice(d, "bob", transcript=None),
         r"reference\.txt for .*reference\.wav does not exist.*speech recognition"),
        (lambda d: make_voice(d, "bob", transcript=" \n "),
         r"reference\.wav has no transcript.*speech recognition"),
        (lambda d: (d / "voices" / "bob").mkdir(parents=True),
         r"has no reference audio: add one of reference\.wav, reference\.flac, reference\.ogg"),
        (lambda d: make_voice(d, "bob", meta="language: klingonese\n"),
         r"voice\.yaml: Unknown language 'klingonese'"),
        (lambda d: make_voice(d, "bob", meta="voice: x\n"),
         r"voice\.yaml: unknown key\(s\) voice"),
        (lambda d: make_voice(d, "bob", meta="language: [en\n"), r"voice\.yaml is not valid YAML"),
        (lambda d: make_voice(d, "bob", meta="normalize_text: maybe\n"),
         r"normalize_text must be true or false"),
        (lambda d: make_voice(d, "bad name"), r"Invalid voice name 'bad name'"),
        (lambda d: make_voice(d, "bob", meta='description: "Bob \\ud800"\n'),
         r"voice\.yaml: description: The text holds a lone surrogate U\+D800"),
    ],
    ids=["no-transcript-file", "blank-transcript", "no-audio", "bad-language", "unknown-key",
         "bad-yaml", "bad-bool", "bad-name", "lone-surrogate"],
)
def test_broken_folders_are_skipped_or_raise(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, setup: Any, message: str
) -> None:
    setup(tmp_path)
    make_voice(tmp_path, "good")
    with caplog.at_level(logging.ERROR):
        assert [s.name for s in discover_cloned_voices(tmp_path)] == ["good"]
    (record,) = caplog.records  # one error line, on one line
    assert record.getMessage().startswith(f"Voice folder {tmp_path / 'voices'}")
    assert "skipped" in record.getMessage() and "\n" not in record.getMessage()
    # Collected instead of logged when the caller reports problems itself (the watcher).
    caplog.clear()
    problems: dict[Path, str] = {}
    assert [s.name for s in discover_cloned_voices(tmp_path, problems=problems)] == ["good"]
    assert not caplog.records and len(problems) == 1
    assert re.search(message, next(iter(problems.values())), re.DOTALL)
    with pytest.raises(ValueError, match=message):
        discover_cloned_voices(tmp_path, on_error="raise")


def test_wrongly_named_audio_gets_a_hint(tmp_path: Path) -> None:
    folder = make_voice(tmp_path, "bob")
    (folder / "reference.wav").rename(folder / "reference.mp3")
    with pytest.raises(ValueError, match=r"found reference\.mp3: rename it"):
        read_voice_folder(folder)


# ---------------------------------------------------------------------------------------
# Path safety
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["..", ".", "../etc", "a/b", "a\\b", "", ".hidden", "x" * 65,
                                  "/abs", "a\0b"])
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="Invalid voice name"):
        check_voice_name(name)


@pytest.mark.parametrize("name", ["bob", "Anna_2", "de-female.1", "Zoë", "声音"])
def test_safe_names_are_accepted(name: str) -> None:
    assert check_voice_name(name) == name


@pytest.mark.parametrize("name", ["../../etc/passwd", "/etc/passwd", "..", "a/../../b", "声音"])
def test_cache_files_stay_in_the_cache_dir(tmp_path: Path, name: str) -> None:
    path = cache_path(tmp_path / "cache", name)
    assert path.parent == tmp_path / "cache"
    assert path.resolve().is_relative_to((tmp_path / "cache").resolve())
    assert cache_path(tmp_path / "cache", name) == path  # stable
    assert cache_path(tmp_path / "cache", name + "x") != path


def test_symlinked_folder_outside_the_voices_dir_is_refused(tmp_path: Path) -> None:
    outside = make_voice(tmp_path / "elsewhere", "evil")
    (tmp_path / "data" / "voices").mkdir(parents=True)
    os.symlink(outside, tmp_path / "data" / "voices" / "evil")
    make_voice(tmp_path / "data", "good")
    assert [s.name for s in discover_cloned_voices(tmp_path / "data")] == ["good"]
    with pytest.raises(ValueError, match="points outside"):
        discover_cloned_voices(tmp_path / "data", on_error="raise")


def test_symlinked_reference_outside_the_folder_is_refused(tmp_path: Path) -> None:
    folder = make_voice(tmp_path, "bob")
    secret = tmp_path / "secret.wav"
    (folder / "reference.wav").rename(secret)
    os.symlink(secret, folder / "reference.wav")
    with pytest.raises(ValueError, match=r"reference\.wav points outside its voice folder"):
        read_voice_folder(folder)


# ---------------------------------------------------------------------------------------
# The prompt cache
# ---------------------------------------------------------------------------------------


def test_prompt_is_encoded_once_and_reused_after_a_restart(tmp_path: Path, engine: Engine) -> None:
    make_voice(tmp_path, "bob", transcript="Good morning")
    (spec,) = discover_cloned_voices(tmp_path)
    cache_dir = tmp_path / "cache"

    first = CountingEngine(engine)
    prompt = load_clone_prompt(first, spec, cache_dir)
    assert first.encodes == 1
    assert prompt.text == "Good morning."
    assert prompt.codes.shape == (8, prompt.num_frames) and prompt.num_frames > 25
    assert 0 < prompt.rms < 0.3

    # "restart": a new engine object, a fresh discovery
    restarted = CountingEngine(Engine.load(TINY, device="cpu"))
    (spec_again,) = discover_cloned_voices(tmp_path)
    assert load_clone_prompt(restarted, spec_again, cache_dir) == prompt
    assert restarted.encodes == 0
    assert [p.suffix for p in cache_dir.iterdir()] == [".npz"]  # one file, no temp files


def test_changed_audio_transcript_or_model_re_encodes(tmp_path: Path, engine: Engine) -> None:
    folder = make_voice(tmp_path, "bob")
    cache_dir = tmp_path / "cache"
    counting = CountingEngine(engine)
    (spec,) = discover_cloned_voices(tmp_path)
    original = load_clone_prompt(counting, spec, cache_dir)

    sf.write(folder / "reference.wav", speechlike(3.0, 24000, seed=7), 24000)
    (spec,) = discover_cloned_voices(tmp_path)
    changed_audio = load_clone_prompt(counting, spec, cache_dir)
    assert counting.encodes == 2
    assert not np.array_equal(changed_audio.codes, original.codes)

    (folder / "reference.txt").write_text("Other words")
    (spec,) = discover_cloned_voices(tmp_path)
    assert load_clone_prompt(counting, spec, cache_dir).text == "Other words."
    assert counting.encodes == 3

    other_model = CountingEngine(engine, fingerprint="another-model")
    load_clone_prompt(other_model, spec, cache_dir)
    assert other_model.encodes == 1
    load_clone_prompt(other_model, spec, cache_dir)
    assert other_model.encodes == 1
    assert len(list(cache_dir.iterdir())) == 1  # the voice's file is replaced, not piled up


@pytest.mark.parametrize("damage", [b"", b"garbage", "truncate"])
def test_corrupt_cache_file_is_rebuilt(tmp_path: Path, engine: Engine, damage: Any) -> None:
    make_voice(tmp_path, "bob")
    (spec,) = discover_cloned_voices(tmp_path)
    counting = CountingEngine(engine)
    good = load_clone_prompt(counting, spec, tmp_path / "cache")
    path = cache_path(tmp_path / "cache", "bob")
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:100])
    else:
        path.write_bytes(damage)

    assert load_clone_prompt(counting, spec, tmp_path / "cache") == good
    assert counting.encodes == 2
    rebuilt, extras = read_prompt_extras(path)
    assert rebuilt == good and extras["name"] == "bob"


def test_inline_transcript_spec_as_from_a_voices_file(tmp_path: Path, engine: Engine) -> None:
    audio = tmp_path / "me.flac"
    sf.write(audio, speechlike(2.0, 44100), 44100, subtype="PCM_24")
    spec = ClonedVoiceSpec(name="me", reference=CloneReference(audio, "This is me"),
                           language="en")
    prompt = load_clone_prompt(engine, spec, tmp_path / "cache")
    assert prompt.text == "This is me."

    with pytest.raises(ValueError, match=r"me\.flac has no transcript.*speech recognition"):
        load_clone_prompt(engine, ClonedVoiceSpec(name="me", reference=CloneReference(audio)),
                          tmp_path / "cache")


@pytest.mark.parametrize(
    ("audio", "message"),
    [
        (np.zeros(72000, np.float32), r"voices/bob/reference\.wav contains only silence"),
        (speechlike(0.6, 24000), r"voices/bob/reference\.wav is too short"),
    ],
)
def test_bad_reference_errors_name_the_file(tmp_path: Path, engine: Engine, audio: np.ndarray,
                                            message: str) -> None:
    folder = make_voice(tmp_path, "bob")
    sf.write(folder / "reference.wav", audio, 24000)
    (spec,) = discover_cloned_voices(tmp_path)
    with pytest.raises(ValueError, match=message):
        load_clone_prompt(engine, spec, tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())


def test_unreadable_reference_names_the_file(tmp_path: Path, engine: Engine) -> None:
    folder = make_voice(tmp_path, "bob")
    (folder / "reference.wav").write_bytes(b"\x00" * 400)
    (spec,) = discover_cloned_voices(tmp_path)
    with pytest.raises(ValueError, match=r"reference\.wav is unreadable or in an unsupported"):
        load_clone_prompt(engine, spec, tmp_path / "cache")


def test_cloned_prompt_drives_synthesis_with_reference_loudness(
    tmp_path: Path, engine: Engine
) -> None:
    quiet = make_voice(tmp_path, "quiet")
    sf.write(quiet / "reference.wav", speechlike(2.5, 24000) * 0.1, 24000)  # RMS ~0.015
    (spec,) = discover_cloned_voices(tmp_path)
    prompt = load_clone_prompt(engine, spec, tmp_path / "cache")
    assert prompt.rms < 0.1
    audio = engine.synthesize("Good morning", ref_codes=prompt.codes, ref_text=prompt.text,
                              ref_rms=prompt.rms, seed=3)
    assert audio.dtype == np.float32 and audio.size > 0
    unchanged = engine.synthesize("Good morning", ref_codes=prompt.codes, ref_text=prompt.text,
                                  ref_rms=0.1, seed=3)
    # upstream B.5.2: a reference quieter than RMS 0.1 scales the output by ref_rms / 0.1
    assert np.max(np.abs(unchanged)) > 0
    np.testing.assert_allclose(audio, unchanged * np.float32(prompt.rms / 0.1), atol=1e-6)


# ---------------------------------------------------------------------------------------
# Through the running server
# ---------------------------------------------------------------------------------------


@pytest.mark.slow
async def test_folder_voice_end_to_end_through_the_server(
    tmp_path: Path, server_factory: Any
) -> None:
    data_dir = tmp_path / "data"
    make_voice(data_dir, "bob", transcript="Hallo, ich bin Bob",
               meta="language: de\ndescription: Bob from a recording\n", seconds=3.0,
               rate=44100)
    make_voice(data_dir, "broken", transcript=None)  # skipped, the server still starts

    server = server_factory(data_dir=data_dir)
    info = await describe(server.uri)
    voices = {v.name: v for program in info.tts for v in program.voices}
    assert "bob" in voices and "broken" not in voices
    assert voices["bob"].description == "Bob from a recording"
    assert any(lang.startswith("de") for lang in voices["bob"].languages)
    assert "broken" in server.log and "speech recognition" in server.log

    events = await synthesize(server.uri, "Guten Morgen, es sind 21,5 °C.", voice="bob")
    assert types_of(events)[0] == "audio-start" and types_of(events)[-1] == "audio-stop"
    assert len(pcm_bytes(events)) > 0
    cache_files = list((data_dir / "cache").rglob("*.npz"))
    assert len(cache_files) == 1
    assert server.log.count("Encoded cloned voice 'bob'") == 1
    server.stop()

    # restart: the prompt comes from the cache, nothing is encoded again
    restarted = server_factory(data_dir=data_dir)
    assert "Encoded cloned voice" not in restarted.log
    events = await synthesize(restarted.uri, "Noch einmal.", voice="bob")
    assert types_of(events)[-1] == "audio-stop" and len(pcm_bytes(events)) > 0


@pytest.mark.slow
async def test_voice_folder_added_while_running_is_picked_up_on_describe(
    tmp_path: Path, server_factory: Any
) -> None:
    data_dir = tmp_path / "data"
    make_voice(data_dir, "bob", transcript="Hallo, ich bin Bob",
               meta="language: de\n", seconds=3.0)
    server = server_factory(data_dir=data_dir)
    first = await describe(server.uri)
    assert "carol" not in {v.name for p in first.tts for v in p.voices}

    make_voice(data_dir, "carol", transcript="Hello, I am Carol.", seconds=3.0)
    make_voice(data_dir, "dave", transcript=None)  # broken: skipped, the others unaffected
    names: set[str] = set()
    for _ in range(60):  # scans run in the background, at most one every 5 s
        await asyncio.sleep(0.5)
        info = await describe(server.uri)
        names = {v.name for p in info.tts for v in p.voices}
        if "carol" in names:
            break
    assert "carol" in names and "bob" in names and "dave" not in names
    assert "New cloned voice 'carol' picked up" in server.log
    events = await synthesize(server.uri, "Good morning.", voice="carol")
    assert types_of(events)[-1] == "audio-stop" and len(pcm_bytes(events)) > 0


# ---------------------------------------------------------------------------------------
# A bad voice folder costs only itself
# ---------------------------------------------------------------------------------------


def error_lines(log: str, needle: str) -> list[str]:
    return [line for line in log.splitlines() if line.startswith("ERROR") and needle in line]


def make_silent_voice(data_dir: Path, name: str, seconds: float = 3.0) -> Path:
    folder = make_voice(data_dir, name, transcript="Nothing to hear.", seconds=seconds)
    sf.write(folder / "reference.wav", np.zeros(int(seconds * 24000), np.float32), 24000)
    return folder


@pytest.mark.slow
async def test_bad_voice_folders_are_skipped_at_start_others_served(
    tmp_path: Path, server_factory: Any
) -> None:
    data_dir = tmp_path / "data"
    make_voice(data_dir, "good", transcript="Hello, I am good.", seconds=3.0)
    silent = make_silent_voice(data_dir, "silent")
    short = make_voice(data_dir, "short", transcript="Hi.", seconds=0.4)
    unreadable = make_voice(data_dir, "unreadable", transcript="Hi there.")
    (unreadable / "reference.wav").write_bytes(b"RIFF not really a wav file")

    server = server_factory(data_dir=data_dir)
    names = {v.name for p in (await describe(server.uri)).tts for v in p.voices}
    assert "good" in names and "en-female-young" in names
    assert not names & {"silent", "short", "unreadable"}
    for folder, fix in ((silent, "only silence"), (short, "too short"),
                        (unreadable, "unreadable")):
        lines = error_lines(server.log, str(folder))
        assert len(lines) == 1, server.log  # one line, naming the file and the fix
        assert fix in lines[0] and "reference.wav" in lines[0]
    events = await synthesize(server.uri, "Good morning.", voice="good")
    assert types_of(events)[-1] == "audio-stop" and len(pcm_bytes(events)) > 0
    # Later describes (and the folder scans they start) do not report them again.
    for _ in range(3):
        await describe(server.uri)
        await asyncio.sleep(0.2)
    assert len(error_lines(server.log, str(silent))) == 1


@pytest.mark.slow
def test_a_bad_default_voice_folder_stops_the_start(tmp_path: Path) -> None:
    import subprocess
    import sys

    from conftest import REPO_ROOT, free_port, tiny_server_args

    data_dir = tmp_path / "data"
    make_silent_voice(data_dir, "silent")
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", *tiny_server_args(free_port(), data_dir),
         "--voice", "silent"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 2
    assert "--voice" in result.stderr and "only silence" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
async def test_bad_voice_folder_added_while_running_is_reported_once(
    tmp_path: Path, server_factory: Any
) -> None:
    data_dir = tmp_path / "data"
    make_voice(data_dir, "bob", transcript="Hallo, ich bin Bob", meta="language: de\n",
               seconds=3.0)
    server = server_factory(data_dir=data_dir)
    silent = make_silent_voice(data_dir, "quiet")
    make_voice(data_dir, "carol", transcript="Hello, I am Carol.", seconds=3.0)
    names: set[str] = set()
    for _ in range(60):  # scans run in the background, at most one every 5 s
        await asyncio.sleep(0.5)
        names = {v.name for p in (await describe(server.uri)).tts for v in p.voices}
        if "carol" in names and error_lines(server.log, str(silent)):
            break
    assert "carol" in names and "bob" in names and "quiet" not in names
    # A few more scans: the bad folder is not tried (nor reported) again until it changes.
    scans = server.log.count("New cloned voice")
    for _ in range(12):
        await asyncio.sleep(0.5)
        await describe(server.uri)
    lines = error_lines(server.log, str(silent))
    assert len(lines) == 1 and "only silence" in lines[0]
    assert server.log.count("New cloned voice") == scans
    events = await synthesize(server.uri, "Good morning.", voice="carol")
    assert types_of(events)[-1] == "audio-stop" and len(pcm_bytes(events)) > 0
