"""Every command's flags as one typed, frozen value made at its parser (the synthesize CLI,
``convert --prepare``, ``convert --anchors``); the values' own parsers raise ValueError and
the flag layer turns it into argparse's error; the CLI's WAV holds the server's PCM."""

from __future__ import annotations

import argparse
import dataclasses
import re
import wave
from pathlib import Path

import numpy as np
import pytest

from wyoming_omnivoice.anchors.lazy import preload_languages
from wyoming_omnivoice.app.flags import build_parser, build_synthesize_parser, flag_type
from wyoming_omnivoice.convert_anchors import AnchorsConfig, add_anchor_arguments
from wyoming_omnivoice.convert_prepare import PrepareConfig, add_prepare_arguments
from wyoming_omnivoice.speech import audio_to_pcm
from wyoming_omnivoice.synthesize import SynthesizeConfig, parse_synthesize_config, write_wav
from wyoming_omnivoice.wyoming_protocol.gap_guard import parse_lead_in_ms, parse_max_gap


def test_every_synthesize_flag_is_a_config_field_with_the_same_default() -> None:
    fields = {field.name for field in dataclasses.fields(SynthesizeConfig)}
    dests = {action.dest: action.default for action in build_synthesize_parser()._actions
             if action.dest != "help"}
    assert set(dests) == fields
    assert SynthesizeConfig() == parse_synthesize_config([])
    for name, default in dests.items():
        assert getattr(SynthesizeConfig(), name) == default, name
    config = parse_synthesize_config(["--text", "Hi.", "-o", "x.wav", "--seed", "3"])
    assert config.output == Path("x.wav") and config.seed == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.seed = 4  # type: ignore[misc]


def convert_flags(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", default="cpu")
    add_prepare_arguments(parser)
    add_anchor_arguments(parser)
    return parser.parse_args(["model", *argv])


def test_convert_prepare_and_anchors_are_typed_at_the_parser(tmp_path: Path) -> None:
    prepare = PrepareConfig.from_flags(convert_flags("--prepare", "fp32, int8"))
    assert prepare == PrepareConfig(model_dir=Path("model"), variants=("fp32", "int8"))
    with pytest.raises(SystemExit, match="--prepare fp64: use one or more of"):
        PrepareConfig.from_flags(convert_flags("--prepare", "fp64"))
    anchors = AnchorsConfig.from_flags(convert_flags("--anchors", "de", "--data-dir",
                                                     str(tmp_path), "--batch-size", "2"))
    assert anchors == AnchorsConfig(model_dir=Path("model"), wanted="de", data_dir=tmp_path,
                                    batch_size=2)
    with pytest.raises(SystemExit, match="--anchors needs --data-dir DIR"):
        AnchorsConfig.from_flags(convert_flags("--anchors", "de"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        anchors.batch_size = 3  # type: ignore[misc]


@pytest.mark.parametrize(("parse", "bad", "message"), [
    (parse_max_gap, "soon", "'soon' is not a number of seconds"),
    (parse_max_gap, "61", "61: use 0 (off) or 0.5 to 60 seconds"),
    (parse_lead_in_ms, "0.3", "'0.3' is not a whole number of milliseconds"),
    (preload_languages, "en,klingon", "klingon"),
])
def test_value_parsers_raise_value_error_and_the_flag_layer_argparse_error(
        parse, bad: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        parse(bad)
    assert not isinstance(raised.value, argparse.ArgumentTypeError)
    with pytest.raises(argparse.ArgumentTypeError, match=re.escape(message)):
        flag_type(parse, "value")(bad)


def test_the_server_parser_reports_a_value_parser_s_message(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--max-gap", "61"])
    assert "argument --max-gap: 61: use 0 (off) or 0.5 to 60 seconds" in capsys.readouterr().err


def test_the_cli_wav_holds_the_servers_pcm(tmp_path: Path) -> None:
    """Rounded as the server rounds (truncation would move these samples by one step)."""
    steps = np.array([0.4, 0.6, -0.4, -0.6, 1.5, -1.5, 32766.7], dtype=np.float64) / 32767.0
    rng = np.random.default_rng(5)
    audio = np.concatenate([steps, rng.uniform(-1.2, 1.2, 2000)]).astype(np.float32)
    path = tmp_path / "out.wav"
    write_wav(path, audio, 24000)
    with wave.open(str(path), "rb") as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 24000)
        frames = wav.readframes(wav.getnframes())
    assert frames == audio_to_pcm(audio)
    truncated = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
    assert frames != truncated
