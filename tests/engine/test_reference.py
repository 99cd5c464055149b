"""Reference audio -> VoicePrompt: loading, resampling, preprocessing, encoder graphs, errors.

All audio is generated here (sine sweeps, tones, noise bursts, silence) and written with
soundfile in the formats users have: WAV 16/24-bit and float, FLAC, OGG, mono and stereo,
8 to 48 kHz. Encoding runs the tiny Higgs encoder graphs of tests/fixtures/models/tiny.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import FIXTURES

from wyoming_omnivoice.engine.audio.reference import (
    HOP_LENGTH,
    PreparedReference,
    ReferenceEncoder,
    load_reference_audio,
    prepare_reference,
    resample,
)
from wyoming_omnivoice.engine.audio.voice_prompt import VoicePrompt, read_prompt_extras
from wyoming_omnivoice.engine.store.model_files import ModelError

TINY = FIXTURES / "models" / "tiny"


def sweep(seconds: float, rate: int, amplitude: float = 0.3, f0: float = 100.0,
          f1: float | None = None) -> np.ndarray:
    """Exponential sine sweep from f0 to f1 (default: 0.4 * rate)."""
    f1 = f1 or 0.4 * rate
    t = np.arange(int(seconds * rate)) / rate
    freq = f0 * (f1 / f0) ** (t / seconds)
    return (amplitude * np.sin(2 * np.pi * np.cumsum(freq) / rate)).astype(np.float32)


def tone(seconds: float, rate: int, freq: float, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def noise_bursts(rate: int, pattern: list[tuple[str, float]], seed: int = 0) -> np.ndarray:
    """Concatenate ("noise"|"silence", seconds) pieces."""
    rng = np.random.default_rng(seed)
    pieces = [
        (rng.uniform(-0.4, 0.4, int(s * rate)) if kind == "noise" else np.zeros(int(s * rate)))
        for kind, s in pattern
    ]
    return np.concatenate(pieces).astype(np.float32)


@pytest.fixture(scope="module")
def encoder() -> ReferenceEncoder:
    return ReferenceEncoder(TINY, "cpu")


# ---------------------------------------------------------------------------------------
# Loading files
# ---------------------------------------------------------------------------------------

FORMATS = [
    ("wav", "PCM_16", 8000, 1),
    ("wav", "PCM_24", 16000, 2),
    ("wav", "FLOAT", 44100, 1),
    ("wav", "PCM_16", 48000, 2),
    ("flac", "PCM_16", 44100, 1),
    ("flac", "PCM_24", 48000, 2),
    ("ogg", "VORBIS", 24000, 1),
    ("ogg", "VORBIS", 48000, 2),
]


@pytest.mark.parametrize(("ext", "subtype", "rate", "channels"), FORMATS)
def test_load_any_format_rate_and_channel_count(
    tmp_path: Path, ext: str, subtype: str, rate: int, channels: int
) -> None:
    left = sweep(2.0, rate)
    data = np.stack([left, 0.5 * left], axis=1) if channels == 2 else left
    path = tmp_path / f"reference.{ext}"
    sf.write(path, data, rate, subtype=subtype)

    wav, got_rate = load_reference_audio(path)

    assert got_rate == rate
    assert wav.dtype == np.float32 and wav.ndim == 1 and len(wav) == len(left)
    expected = 0.75 * left if channels == 2 else left  # stereo is averaged to mono
    if subtype == "VORBIS":  # lossy: the waveform matches closely, not sample for sample
        assert np.corrcoef(wav, expected)[0, 1] > 0.98
    else:
        assert np.max(np.abs(wav - expected)) < 1e-3


def test_unreadable_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "reference.wav"
    path.write_bytes(b"RIFF this is not audio at all" * 10)
    with pytest.raises(ValueError, match=r"reference\.wav is unreadable or in an unsupported"):
        load_reference_audio(path)


def test_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nothing\.wav does not exist"):
        load_reference_audio(tmp_path / "nothing.wav")


def test_empty_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "reference.wav"
    sf.write(path, np.zeros(0, dtype=np.float32), 24000)
    with pytest.raises(ValueError, match=r"reference\.wav holds no samples"):
        load_reference_audio(path)


# ---------------------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------------------


def _peak_frequency(audio: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
    return float(np.fft.rfftfreq(len(audio), 1 / rate)[np.argmax(spectrum)])


@pytest.mark.parametrize("rate", [8000, 16000, 22050, 44100, 48000])
def test_resample_keeps_the_tone_and_the_length(rate: int) -> None:
    audio = tone(1.0, rate, 1000.0)
    out = resample(audio, rate, 24000)
    assert out.dtype == np.float32
    assert abs(len(out) - 24000) <= 1
    assert abs(_peak_frequency(out, 24000) - 1000.0) < 2.0
    assert abs(np.sqrt(np.mean(out[2400:-2400] ** 2)) - 0.3 / np.sqrt(2)) < 0.01


def test_resample_is_band_limited() -> None:
    # An 11 kHz tone is above the 16 kHz branch's Nyquist: a naive resampler would alias
    # it to 5 kHz; a band-limited one removes it.
    audio = tone(1.0, 24000, 11000.0)
    out = resample(audio, 24000, 16000)
    assert np.sqrt(np.mean(out[1600:-1600] ** 2)) < 0.003


# ---------------------------------------------------------------------------------------
# Preprocessing (upstream B.7)
# ---------------------------------------------------------------------------------------


def test_prepare_cuts_to_whole_frames_and_makes_the_16k_branch() -> None:
    prepared = prepare_reference(sweep(3.3, 44100), 44100, "hello world")
    assert isinstance(prepared, PreparedReference)
    assert len(prepared.wav_24k) % HOP_LENGTH == 0
    assert len(prepared.wav_24k) == (len(prepared.wav_24k) // HOP_LENGTH) * HOP_LENGTH
    assert len(prepared.wav_16k) == len(prepared.wav_24k) * 2 // 3
    assert prepared.wav_24k.dtype == np.float32 and prepared.wav_16k.dtype == np.float32
    assert prepared.text == "hello world."


def test_prepare_keeps_the_original_rms_and_boosts_quiet_audio() -> None:
    quiet = tone(3.0, 24000, 300.0, amplitude=0.02)  # RMS 0.0141 < 0.1
    prepared = prepare_reference(quiet, 24000, "quiet")
    assert prepared.rms == pytest.approx(0.02 / np.sqrt(2), rel=1e-3)
    boosted_rms = np.sqrt(np.mean(prepared.wav_24k.astype(np.float64) ** 2))
    assert boosted_rms == pytest.approx(0.1, rel=0.02)

    loud = tone(3.0, 24000, 300.0, amplitude=0.5)  # RMS 0.354 >= 0.1: unchanged
    prepared = prepare_reference(loud, 24000, "loud")
    assert prepared.rms == pytest.approx(0.5 / np.sqrt(2), rel=1e-3)
    assert np.max(np.abs(prepared.wav_24k)) == pytest.approx(0.5, abs=1e-3)


def test_prepare_trims_silence_like_upstream() -> None:
    # 1 s silence, 2 s noise, 1.5 s silence, 1 s noise, 1 s silence
    audio = noise_bursts(24000, [("silence", 1.0), ("noise", 2.0), ("silence", 1.5),
                                 ("noise", 1.0), ("silence", 1.0)])
    prepared = prepare_reference(audio, 24000, "two bursts")
    seconds = len(prepared.wav_24k) / 24000
    # 100 ms lead + 2 s + inner silence shrunk to ~400 ms + 1 s + 200 ms trail, cut to frames
    assert 3.6 <= seconds <= 3.8
    assert np.all(prepared.wav_24k[:2000] == 0)  # lead silence kept: 100 ms
    assert np.any(prepared.wav_24k[2400 + 100:4800] != 0)


def test_prepare_is_16_bit_quantised_like_pydub() -> None:
    prepared = prepare_reference(sweep(2.0, 24000), 24000, "x")
    assert np.array_equal(prepared.wav_24k * 32768, np.round(prepared.wav_24k * 32768))


def test_prepare_adds_chinese_punctuation() -> None:
    assert prepare_reference(sweep(2.0, 24000), 24000, " 你好世界 ").text == "你好世界。"
    assert prepare_reference(sweep(2.0, 24000), 24000, "Done!").text == "Done!"


@pytest.mark.parametrize(
    "shape", ["mono", "channels_first", "channels_last", "int16"],
)
def test_prepare_accepts_array_layouts(shape: str) -> None:
    mono = sweep(2.0, 16000)
    wav: np.ndarray
    if shape == "channels_first":
        wav = np.stack([mono, mono])
    elif shape == "channels_last":
        wav = np.stack([mono, mono], axis=1)
    elif shape == "int16":
        wav = (mono * 32767).astype(np.int16)
    else:
        wav = mono
    prepared = prepare_reference(wav, 16000, "x")
    reference = prepare_reference(mono, 16000, "x")
    assert len(prepared.wav_24k) == len(reference.wav_24k)
    assert np.max(np.abs(prepared.wav_24k - reference.wav_24k)) < 2e-4


def test_long_reference_is_kept_whole_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    audio = noise_bursts(24000, [("noise", 21.0)])
    with caplog.at_level(logging.WARNING):
        prepared = prepare_reference(audio, 24000, "a long text", source="Reference audio X")
    assert len(prepared.wav_24k) / 24000 > 20.9
    assert any("Reference audio X is 21.0 s long" in r.getMessage() for r in caplog.records)



def test_too_long_reference_is_refused_before_decoding(tmp_path: Path) -> None:
    """Minutes of reference are refused from the header: soundfile never decodes them."""
    path = _write(tmp_path, noise_bursts(8000, [("noise", 61.0)]), rate=8000)
    with pytest.raises(ValueError, match=r"reference.wav is 1.0 minutes long; at most 60 s"):
        load_reference_audio(path)
    with pytest.raises(ValueError, match=r"is 61.0 s long .*at most 60 s"):
        prepare_reference(noise_bursts(8000, [("noise", 61.0)]), 8000, "words")


@pytest.mark.slow
def test_reference_needing_more_positions_than_the_backbone_is_refused(
        tmp_path: Path) -> None:
    """A reference whose prompt would not fit the prepared backbone's positions is refused
    when it is encoded, not advertised to fail every request."""
    import shutil

    from wyoming_omnivoice import Engine

    model = shutil.copytree(TINY, tmp_path / "model", ignore=shutil.ignore_patterns("prepared"))
    engine = Engine.load(model, device="cpu", precision="int8")
    assert engine.decoder.max_positions is not None
    audio = noise_bursts(24000, [("noise", 10.0)])
    assert engine.encode_reference(audio, 24000, "Ten seconds of words.").num_frames == 250
    engine.decoder.max_positions = 900  # what a smaller backbone table would allow
    with pytest.raises(ValueError, match=r"needs .* positions, more than the 900"):
        engine.encode_reference(audio, 24000, "Ten seconds of words.")


# ---------------------------------------------------------------------------------------
# Bad references: every error is clear and names the file
# ---------------------------------------------------------------------------------------


def _write(tmp_path: Path, audio: np.ndarray, rate: int = 24000) -> Path:
    path = tmp_path / "reference.wav"
    sf.write(path, audio, rate, subtype="PCM_16")
    return path


@pytest.mark.parametrize(
    ("audio", "text", "message"),
    [
        (np.zeros(48000, dtype=np.float32), "hi", r"reference\.wav contains only silence"),
        (noise_bursts(24000, [("noise", 3.0)]) * 1e-4, "hi",
         r"reference\.wav contains only silence"),
        (tone(0.5, 24000, 440.0), "hi", r"reference\.wav is too short: 0\.\d+ s of sound"),
        (noise_bursts(24000, [("silence", 2.0), ("noise", 0.4), ("silence", 2.0)]), "hi",
         r"reference\.wav is too short"),
        (sweep(2.0, 24000), None, r"reference\.wav has no transcript.*speech recognition"),
        (sweep(2.0, 24000), "   \n", r"reference\.wav has no transcript.*speech recognition"),
    ],
    ids=["digital-silence", "near-silence", "too-short", "short-after-trim", "no-text",
         "blank-text"],
)
def test_bad_references(tmp_path: Path, encoder: ReferenceEncoder, audio: np.ndarray,
                        text: str | None, message: str) -> None:
    path = _write(tmp_path, audio)
    with pytest.raises(ValueError, match=message):
        encoder.encode_file(path, text)


def test_non_finite_samples_are_refused() -> None:
    audio = sweep(2.0, 24000)
    audio[100] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        prepare_reference(audio, 24000, "x", source="Reference audio a.wav")


def test_bad_sample_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="sample rate"):
        prepare_reference(sweep(2.0, 24000), 0, "x")


# ---------------------------------------------------------------------------------------
# The encoder graphs
# ---------------------------------------------------------------------------------------


def test_encode_gives_8_codebooks_one_frame_per_960_samples(encoder: ReferenceEncoder) -> None:
    prepared = prepare_reference(sweep(3.0, 48000), 48000, "hello world")
    prompt = encoder.encode_prepared(prepared)
    assert isinstance(prompt, VoicePrompt)
    assert prompt.codes.dtype == np.int64
    assert prompt.codes.shape == (8, len(prepared.wav_24k) // HOP_LENGTH)
    assert prompt.codes.min() >= 0 and prompt.codes.max() < 1024
    assert len(np.unique(prompt.codes)) > 20  # real encoder output, not a constant
    assert prompt.text == "hello world."
    assert prompt.rms == pytest.approx(prepared.rms)


def test_encode_is_deterministic_and_depends_on_the_audio(encoder: ReferenceEncoder) -> None:
    a = encoder.encode(sweep(2.0, 24000), 24000, "x")
    b = encoder.encode(sweep(2.0, 24000), 24000, "x")
    c = encoder.encode(noise_bursts(24000, [("noise", 2.0)]), 24000, "x")
    assert a == b
    assert not np.array_equal(a.codes, c.codes)


def test_feature_streams_are_trimmed_to_the_shorter(encoder: ReferenceEncoder) -> None:
    prepared = prepare_reference(sweep(2.0, 24000), 24000, "x")
    frames = len(prepared.wav_24k) // HOP_LENGTH
    # Drop the last 16 kHz frame: the semantic stream comes out shorter than the acoustic one
    short = PreparedReference(prepared.wav_24k, prepared.wav_16k[:-640], prepared.text,
                              prepared.rms)
    prompt = encoder.encode_prepared(short)
    assert prompt.num_frames < frames
    full = encoder.encode_prepared(prepared)
    assert full.num_frames == frames


def test_encoder_graphs_load_lazily_and_missing_ones_are_named(tmp_path: Path) -> None:
    lazy = ReferenceEncoder(tmp_path, "cpu")  # no graphs there: nothing happens yet
    with pytest.raises(ModelError, match=r"audio_tokenizer/acoustic_encoder\.onnx.*--data-dir"):
        lazy.encode(sweep(2.0, 24000), 24000, "x")


def test_encoder_fingerprint_changes_with_the_graphs(tmp_path: Path) -> None:
    (tmp_path / "audio_tokenizer").mkdir()
    for name in ("acoustic_encoder", "semantic_encoder", "quantizer_encoder"):
        src = TINY / "audio_tokenizer" / f"{name}.onnx"
        (tmp_path / "audio_tokenizer" / f"{name}.onnx").write_bytes(src.read_bytes())
    before = ReferenceEncoder(tmp_path).fingerprint
    assert before == ReferenceEncoder(TINY).fingerprint
    with (tmp_path / "audio_tokenizer" / "quantizer_encoder.onnx").open("ab") as handle:
        handle.write(b"\0")
    assert ReferenceEncoder(tmp_path).fingerprint != before


# ---------------------------------------------------------------------------------------
# VoicePrompt save/load
# ---------------------------------------------------------------------------------------


def test_prompt_round_trip(tmp_path: Path, encoder: ReferenceEncoder) -> None:
    prompt = encoder.encode(sweep(2.0, 24000), 24000, "round trip")
    path = tmp_path / "sub" / "prompt.npz"
    prompt.save(path, key="abc")
    assert VoicePrompt.load(path) == prompt
    loaded, extras = read_prompt_extras(path)
    assert extras == {"key": "abc"} and loaded.codes.dtype == np.int64
    assert [p.name for p in path.parent.iterdir()] == ["prompt.npz"]  # no temp files left


def test_corrupt_prompt_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "prompt.npz"
    path.write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"prompt\.npz is unreadable or corrupt"):
        VoicePrompt.load(path)


@pytest.mark.parametrize(
    ("codes", "text", "rms"),
    [
        (np.zeros((7, 3), np.int64), "x", 0.1),
        (np.zeros((8, 0), np.int64), "x", 0.1),
        (np.full((8, 3), 1024), "x", 0.1),
        (np.zeros((8, 3), np.float32), "x", 0.1),
        (np.zeros((8, 3), np.int64), " ", 0.1),
        (np.zeros((8, 3), np.int64), "x", float("nan")),
    ],
)
def test_prompt_validates_its_fields(codes: np.ndarray, text: str, rms: float) -> None:
    with pytest.raises(ValueError):
        VoicePrompt(codes, text, rms)


# ---------------------------------------------------------------------------------------
# Parity with upstream's torch codec (goldens recorded by tools/build_fixtures.py)
# ---------------------------------------------------------------------------------------


def _golden_wave(num_samples: int, rate: int) -> np.ndarray:
    t = np.arange(num_samples, dtype=np.float64) / rate
    wave = (0.3 * np.sin(2 * np.pi * 220.0 * t) + 0.15 * np.sin(2 * np.pi * 1330.0 * t + 0.5)
            + 0.05 * np.sin(2 * np.pi * 3100.0 * t))
    return wave.astype(np.float32)


def test_encoder_chain_matches_upstream_torch_codes(encoder: ReferenceEncoder) -> None:
    import json

    golden = json.loads(
        (FIXTURES / "golden" / "upstream_codec.json").read_text()
    )["encoder"]
    prepared = PreparedReference(
        _golden_wave(golden["num_samples_24k"], 24000),
        _golden_wave(golden["num_samples_16k"], 16000),
        "x.",
        0.2,
    )
    prompt = encoder.encode_prepared(prepared)
    expected = np.array(golden["codes"], dtype=np.int64)
    assert prompt.codes.shape == expected.shape
    assert np.array_equal(prompt.codes, expected)
