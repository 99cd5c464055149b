"""The engine's vocoder against upstream's torch decode of the same codes.

``upstream_codec.json["vocoder"]`` holds the waveform that upstream's
``audio_tokenizer.decode(codes[None])`` gave for a seeded 12-frame code grid on the tiny
fixture codec (recorded by ``tools/build_fixtures.py``). ``Engine.decode_audio`` must give
the same samples: same length (960 per frame), same alignment and the same gain.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from wyoming_omnivoice import Engine

HERE = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((HERE / "fixtures" / "golden" / "upstream_codec.json").read_text())["vocoder"]
TINY = HERE / "fixtures" / "models" / "tiny"
HOP = 960
#: Largest sample difference allowed. onnxruntime vs torch measures 1.1e-5 here (the
#: golden keeps 7 significant digits); 1e-4 is 0.024 % of the 0.42 peak, so a gain off by
#: 0.03 %, a shift of one sample or a changed hop all exceed it many times over.
MAX_ABS_DIFF = 1e-4


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY, device="cpu")


def describe_mismatch(got: np.ndarray, want: np.ndarray) -> str:
    """Gain and lag of ``got`` relative to ``want``, to say what kind of error it is."""
    n = min(len(got), len(want))
    gain = float(np.dot(got[:n], want[:n]) / np.dot(want[:n], want[:n]))
    lags = range(-HOP, HOP + 1)
    best = max(lags, key=lambda lag: float(np.dot(np.roll(got[:n], -lag), want[:n])))
    return f"least-squares gain {gain:.6f}, best-matching lag {best} samples"


def test_golden_is_a_usable_reference() -> None:
    wave = np.asarray(GOLDEN["waveform"], dtype=np.float32)
    codes = np.asarray(GOLDEN["codes"])
    assert codes.shape == (8, 12)
    assert wave.shape == (HOP * codes.shape[1],) == (GOLDEN["num_samples"],)
    # The tolerance is meaningful only against a waveform of real amplitude.
    assert float(np.abs(wave).max()) == pytest.approx(GOLDEN["peak"], rel=1e-6)
    assert GOLDEN["peak"] > 100 * MAX_ABS_DIFF
    assert float(np.sqrt(np.mean(wave.astype(np.float64) ** 2))) == pytest.approx(
        GOLDEN["rms"], rel=1e-5)


def test_decode_audio_matches_upstream_waveform(engine: Engine) -> None:
    want = np.asarray(GOLDEN["waveform"], dtype=np.float32)
    got = engine.decode_audio(np.asarray(GOLDEN["codes"], dtype=np.int64))
    assert got.dtype == np.float32
    assert got.shape == want.shape, (
        f"{got.shape[0]} samples for 12 frames, upstream gives {want.shape[0]} "
        f"({HOP} per frame); {describe_mismatch(got, want)}")
    worst = float(np.abs(got - want).max())
    assert worst <= MAX_ABS_DIFF, (
        f"max |engine - upstream| = {worst:.3g} > {MAX_ABS_DIFF}; {describe_mismatch(got, want)}")
