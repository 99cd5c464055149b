"""The one-off CLI (``python -m wyoming_omnivoice.synthesize``) and ``--list-voices``.

Real subprocesses with the tiny model: a preset, a voice folder and a recording spoken by
name, the output path checked before the model loads, and the voice listing of both CLIs
without a model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import wave
from pathlib import Path

import pytest
from conftest import REPO_ROOT, TINY_MODEL, ServerProcess, free_port, tiny_server_args

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

STEPS = ["--num-steps", "4"]


def run(module: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", **env)
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, env=full_env, timeout=300)


def synth(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run("wyoming_omnivoice.synthesize", "--model-dir", str(TINY_MODEL), "--device",
               "cpu", "--data-dir", str(data_dir), *args)


def wav_seconds(path: Path) -> float:
    with wave.open(str(path), "rb") as wav:
        assert wav.getnchannels() == 1 and wav.getsampwidth() == 2
        return wav.getnframes() / wav.getframerate()


def only_error(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    output = result.stdout + result.stderr
    assert result.returncode == code, output
    assert "Traceback" not in output, output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, output
    return errors[0][len("error: "):]


@pytest.fixture
def voice_folder(tmp_path: Path) -> Path:
    """A data dir with one voice folder (a recording made by the CLI) and one broken one."""
    data = tmp_path / "data"
    first = synth(data, "--text", "Hello there.", "-o", str(tmp_path / "ref.wav"), *STEPS)
    assert first.returncode == 0, first.stderr
    folder = data / "voices" / "grandma"
    folder.mkdir(parents=True)
    (folder / "reference.wav").write_bytes((tmp_path / "ref.wav").read_bytes())
    (folder / "reference.txt").write_text("Hello there.\n", encoding="utf-8")
    (folder / "voice.yaml").write_text("description: Grandma at the table\nlanguage: de\n",
                                       encoding="utf-8")
    (data / "voices" / "broken").mkdir()
    return data


def test_missing_output_folder_fails_before_the_model_loads(tmp_path: Path) -> None:
    out = tmp_path / "missing" / "dir" / "x.wav"
    result = synth(tmp_path / "data", "--text", "Hello.", "-o", str(out))
    assert only_error(result) == (f"--output {out}: the folder {out.parent} does not exist; "
                                  f"create it (mkdir -p {out.parent}) or write elsewhere")
    assert "engine ready" not in result.stderr  # the model was not loaded


def test_without_a_model_dir_it_downloads_into_the_data_dir(tmp_path: Path) -> None:
    """No --model-dir: the model is fetched into --data-dir like the server does (the CLI
    once passed its flags where the server's Config was expected and died with a
    traceback); with no hub reachable that is one error naming what is missing."""
    data = tmp_path / "data"
    result = run("wyoming_omnivoice.synthesize", "--device", "cpu", "--data-dir", str(data),
                 "--text", "Hello.", "-o", str(tmp_path / "x.wav"),
                 HF_ENDPOINT="http://127.0.0.1:9", HF_HUB_OFFLINE="0")
    assert only_error(result).startswith("Could not download llm_backbone_fp32.onnx from "
                                         "dellusional/OmniVoice-ONNX-bidirectional")
    assert f"Still missing from {data / 'models'}" in result.stderr


def test_output_that_is_a_folder(tmp_path: Path) -> None:
    result = synth(tmp_path / "data", "--text", "Hello.", "-o", str(tmp_path))
    assert only_error(result) == (f"--output {tmp_path} is a folder; give a file name, "
                                  f"e.g. {tmp_path}/out.wav")


def test_a_preset_by_name_uses_the_servers_anchor(tmp_path: Path) -> None:
    data = tmp_path / "data"
    out = tmp_path / "british.wav"
    result = synth(data, "--voice", "en-male-british", "--text", "Hello there.", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert wav_seconds(out) > 0.1
    assert "Generating the anchor for voice 'en-male-british'" in result.stderr
    # A server on the same data dir and settings finds that anchor cached.
    port = free_port()
    server = ServerProcess(tiny_server_args(port, data), tmp_path / "server.log", port).start()
    try:
        server.wait_ready()
    finally:
        server.stop()
    generated = [line for line in server.log.splitlines() if "Generating the anchor" in line]
    assert generated, server.log  # the other presets were made by the server
    assert not any("'en-male-british'" in line for line in generated), server.log


def test_unknown_voice_lists_the_known_ones(tmp_path: Path) -> None:
    line = only_error(synth(tmp_path / "data", "--voice", "nobody", "--text", "Hi.", "-o",
                            str(tmp_path / "x.wav")))
    assert line.startswith("--voice 'nobody': not a known voice; available: en-female-young, ")


def test_voice_folder_by_name_and_its_problem(voice_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "grandma.wav"
    result = synth(voice_folder, "--voice", "grandma", "--text", "Good morning.", "-o",
                   str(out), *STEPS)
    assert result.returncode == 0, result.stderr
    assert wav_seconds(out) > 0.1
    assert "Encoded cloned voice 'grandma'" in result.stderr
    broken = only_error(synth(voice_folder, "--voice", "broken", "--text", "Hi.", "-o",
                              str(out)))
    assert broken.startswith(f"--voice 'broken': voice folder {voice_folder / 'voices'}/broken")
    assert "has no reference audio" in broken


def test_clone_a_recording(voice_folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "clone.wav"
    reference = voice_folder / "voices" / "grandma" / "reference.wav"
    result = synth(voice_folder, "--ref-audio", str(reference), "--ref-text", "Hello there.",
                   "--text", "Good morning.", "-o", str(out), *STEPS)
    assert result.returncode == 0, result.stderr
    assert wav_seconds(out) > 0.1
    missing_text = synth(voice_folder, "--ref-audio", str(reference), "--text", "Hi.", "-o",
                         str(out))
    assert only_error(missing_text) == ("--ref-text: give the words spoken in the reference "
                                        "recording")


@pytest.mark.parametrize("module", ["wyoming_omnivoice", "wyoming_omnivoice.synthesize"])
def test_list_voices_without_a_model(module: str, voice_folder: Path, tmp_path: Path) -> None:
    voices_file = tmp_path / "mine.yaml"
    voices_file.write_text("voices:\n  - name: butler\n    description: A calm butler\n"
                           "    instruct: male, elderly, british accent\n"
                           "    languages: [en, fr]\n", encoding="utf-8")
    # No --model-dir and no model in the data dir, downloads off: loading would fail.
    result = run(module, "--list-voices", "--data-dir", str(voice_folder), "--voices-file",
                 str(voices_file), HF_HUB_OFFLINE="1")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "LANGUAGES", "DESCRIPTION"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert "Female voice, young, American accent" in rows["en-female-young"]
    assert rows["butler"].split("  ")[0] == "butler"
    assert "en, fr" in rows["butler"] and "A calm butler" in rows["butler"]
    assert "Grandma at the table" in rows["grandma"] and " de " in rows["grandma"]
    assert any(line.startswith(f"skipped: voice folder {voice_folder / 'voices'}/broken")
               for line in lines)
    assert not (voice_folder / "models").exists()


def test_the_prefix_cache_flag(tmp_path: Path) -> None:
    bad = synth(tmp_path / "data", "--text", "Hello.", "-o", str(tmp_path / "x.wav"),
                "--prefix-cache", "500")
    assert only_error(bad).startswith("--prefix-cache 500: use 0 (off, exact)")
    out = tmp_path / "cached.wav"
    result = synth(tmp_path / "data", "--text", "Hello there.", "-o", str(out), *STEPS,
                   "--prefix-cache", "2")
    assert result.returncode == 0, result.stderr
    assert wav_seconds(out) > 0 and "Prefix cache:" in result.stderr
