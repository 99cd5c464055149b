"""Post-processing, compared with upstream's pydub-based functions on synthetic signals.

The goldens hold, per signal recipe (tests/rule_signals.py), the length and SHA-256 of
upstream's float32 output, so every sample must match exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from rule_goldens import audio_digest, rules
from rule_signals import SIGNALS, build_signal

from wyoming_omnivoice.engine.audio.postprocess import (
    cross_fade_chunks,
    detect_leading_silence,
    detect_nonsilent,
    fade_and_pad,
    post_process,
    remove_silence,
    to_int16,
    trim_long_audio,
)

GOLDEN = rules()["postprocess"]


@pytest.fixture(scope="module")
def signals() -> dict[str, np.ndarray]:
    return {name: build_signal(name) for name in SIGNALS}


def test_remove_silence_matches_pydub(signals: dict[str, np.ndarray]) -> None:
    cases = GOLDEN["remove_silence"]
    assert len(cases) == 4 * len(SIGNALS)
    changed_length = 0
    mismatches = []
    for name, mid, lead, trail, want in cases:
        got = remove_silence(signals[name], 24000, mid, lead, trail)
        if audio_digest(got) != want:
            mismatches.append((name, mid, lead, trail, got.size, want["n"]))
        changed_length += want["n"] != signals[name].size
    assert mismatches == []
    assert changed_length > len(cases) // 2  # the signals do exercise silence removal


def test_post_process_matches_upstream(signals: dict[str, np.ndarray]) -> None:
    mismatches = []
    upstream_errors = 0
    for name, ref_rms, postprocess_output, want in GOLDEN["post_process"]:
        got = post_process(signals[name], ref_rms, postprocess_output)
        assert got.dtype == np.float32 and got.ndim == 1
        if "error" in want:
            # upstream fails on audio that is empty after silence removal (peak of an empty
            # array); we return empty audio instead
            upstream_errors += 1
            assert got.size == 0, name
        elif audio_digest(got) != want:
            mismatches.append((name, ref_rms, postprocess_output))
    assert mismatches == []
    assert upstream_errors > 0


def test_fade_and_pad_matches_upstream(signals: dict[str, np.ndarray]) -> None:
    for name, want in GOLDEN["fade_and_pad"]:
        assert audio_digest(fade_and_pad(signals[name])) == want, name


def test_cross_fade_chunks_matches_upstream(signals: dict[str, np.ndarray]) -> None:
    for names, want in GOLDEN["cross_fade"]:
        assert audio_digest(cross_fade_chunks([signals[n] for n in names])) == want, names


def test_trim_long_audio_matches_upstream(signals: dict[str, np.ndarray]) -> None:
    cases = GOLDEN["trim_long_audio"]
    assert len(cases) >= 2
    for name, want in cases:
        assert audio_digest(trim_long_audio(signals[name], 24000)) == want, name


def test_remove_silence_quantises_to_16_bits(signals: dict[str, np.ndarray]) -> None:
    out = remove_silence(signals["speech_3s"], 24000, 500, 100, 100)
    scaled = out.astype(np.float64) * 32768
    assert np.array_equal(scaled, np.round(scaled))
    assert np.array_equal(to_int16(np.array([0.99999, -1.5, 2.0, -0.00004], np.float32)),
                          np.array([32767, -32768, 32767, -1], np.int16))


def test_long_internal_silence_shrinks_to_about_one_second() -> None:
    rng = np.random.default_rng(0)
    loud = (rng.standard_normal(24000) * 0.2).astype(np.float32)
    audio = np.concatenate([loud, np.zeros(3 * 24000, np.float32), loud])
    out = remove_silence(audio, 24000, 500, 100, 100)
    assert 2 * 24000 + 23000 <= out.size <= 2 * 24000 + 25000
    assert detect_nonsilent(to_int16(audio), 24000, 500, -50, 10) == [[0, 1000], [4000, 5000]]


def test_leading_silence_and_edges() -> None:
    audio = np.concatenate([np.zeros(12000, np.float32), np.full(2400, 0.5, np.float32)])
    assert detect_leading_silence(to_int16(audio), 24000) == 500
    out = remove_silence(audio, 24000, 0, 100, 100)
    assert out.size == 2400 + 2400  # 100 ms of the leading silence is kept


def test_loudness_rules() -> None:
    audio = np.full(24000, 0.25, np.float32)
    peak_normalised = post_process(audio, None, postprocess_output=False)
    assert np.isclose(np.abs(peak_normalised).max(), 0.5)
    quiet_ref = post_process(audio, 0.05, postprocess_output=False)
    assert np.isclose(np.abs(quiet_ref).max(), 0.125)
    loud_ref = post_process(audio, 0.2, postprocess_output=False)
    assert np.isclose(np.abs(loud_ref).max(), 0.25)
    assert loud_ref.size == 24000 + 2 * 2400
    assert loud_ref[:2400].any() == False  # noqa: E712 - padding is exact zeros
    assert post_process(np.zeros(0, np.float32), None).size == 0


def test_cross_fade_layout() -> None:
    a = np.ones(5000, np.float32)
    b = np.ones(3000, np.float32)
    merged = cross_fade_chunks([a, b])
    assert merged.size == 5000 + 2400 + 3000
    assert merged[5000:7400].max() == 0.0
    assert merged[4999] == 0.0 and merged[7400] == 0.0
    assert merged[0] == 1.0 and merged[-1] == 1.0
    single = np.ones(10, np.float32)
    assert cross_fade_chunks([single]) is single
    with pytest.raises(ValueError):
        cross_fade_chunks([])


def test_low_sample_rates_are_refused() -> None:
    with pytest.raises(ValueError):
        remove_silence(np.zeros(8000, np.float32), 8000, 500, 100, 100)


def test_rule_modules_need_numpy_only() -> None:
    """The rule modules import neither torch, pydub, audioop nor upstream omnivoice."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import wyoming_omnivoice.engine.audio.postprocess\n"
        "import wyoming_omnivoice.engine.decoding.schedule\n"
        "import wyoming_omnivoice.engine.prompt.text_rules\n"
        "import wyoming_omnivoice.engine.prompt.duration\n"
        "import wyoming_omnivoice.engine.prompt.languages\n"
        "import wyoming_omnivoice.engine.prompt.instruct\n"
        "bad = {'torch', 'pydub', 'audioop', 'omnivoice'} & set(sys.modules)\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
