"""The vocoder in frame buckets (one fixed shape per batch) against the direct per-item
decode, on the tiny fixture's vocoder with the CPU provider; and the phase timers of
``Engine.synthesize_batch``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FIXTURES

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.audio.vocoder import CHECK_MAX_ABS, Vocoder, frame_bucket
from wyoming_omnivoice.engine.synthesis_stats import phase_table

TINY = FIXTURES / "models" / "tiny"
LENGTHS = (40, 47, 53, 61, 25, 130, 300, 23, 1, 48, 49)


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY, device="cpu", buckets=True)


def test_receptive_radius_is_measured_and_local(engine: Engine) -> None:
    vocoder = engine.vocoder_runner
    radius = vocoder.receptive_radius()
    assert 0 < radius < 48
    assert vocoder.active


def test_bucketed_batch_equals_direct_decodes(engine: Engine) -> None:
    vocoder = engine.vocoder_runner
    rng = np.random.default_rng(7)
    items = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in LENGTHS]
    got = vocoder.decode_many(items)
    assert vocoder.last_stats.bucketed
    for codes, wave in zip(items, got, strict=True):
        direct = vocoder.decode(codes)
        assert wave.shape == direct.shape == (960 * codes.shape[1],)
        assert float(np.abs(wave - direct).max()) <= CHECK_MAX_ABS


@pytest.mark.parametrize("lengths", [(40, 44, 47, 51, 53, 58, 61, 63),
                                     (40, 70, 100, 130, 47, 200, 61, 250)],
                         ids=["one-bucket", "four-buckets"])
def test_a_mixed_batch_runs_in_one_fixed_shape(engine: Engine,
                                               lengths: tuple[int, ...]) -> None:
    """Eight replies of eight lengths: every call in the shape of the longest one's frame
    bucket (no call of another shape between two of this one: a CUDA Conv keeps the
    set-up of its last shape only)."""
    vocoder = engine.vocoder_runner
    rng = np.random.default_rng(8)
    vocoder.decode_many([rng.integers(0, 1024, (8, t), dtype=np.int64) for t in lengths])
    calls = vocoder.last_stats.calls
    assert len(set(calls)) == 1 and len(calls) <= len(lengths)
    ((rows, frames),) = set(calls)
    assert rows in (2, 4, 8, 16) and frames == frame_bucket(max(lengths))


def test_a_vocoder_that_is_not_local_runs_per_item(engine: Engine) -> None:
    vocoder = Vocoder(engine.vocoder, bucketed=True)
    vocoder._radius = 200  # as measured on a vocoder with global context
    assert not vocoder.active
    rng = np.random.default_rng(9)
    items = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in (40, 53)]
    got = vocoder.decode_many(items)
    assert vocoder.last_stats.calls == [(1, 40), (1, 53)]
    for codes, wave in zip(items, got, strict=True):
        np.testing.assert_array_equal(wave, vocoder.decode(codes))


def test_cpu_default_is_per_item_and_exact() -> None:
    plain = Engine.load(TINY, device="cpu")
    assert not plain.vocoder_runner.active
    rng = np.random.default_rng(10)
    items = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in (40, 53)]
    got = plain.vocoder_runner.decode_many(items)
    for codes, wave in zip(items, got, strict=True):
        np.testing.assert_array_equal(wave, plain.decode_audio(codes))


def test_synthesize_batch_records_its_phases(engine: Engine) -> None:
    requests = [SynthesisRequest(text=t, seed=i) for i, t in
                enumerate(("Hello there.", "The front door is locked.", "Good night."))]
    options = DecodeOptions(num_step=4)
    audio = engine.synthesize_batch(requests, options=options)
    stats = engine.last_synthesis
    assert stats.steps == 4
    assert stats.vocoder_bucketed and 1 <= len(stats.vocoder_calls) <= 2
    parts = (stats.plan_s, stats.decode_s, stats.vocoder_s, stats.post_s)
    assert all(p > 0 for p in parts)
    assert sum(parts) <= stats.total_s
    assert stats.backbone_s + stats.embed_s + stats.scoring_s <= stats.decode_s
    table = phase_table({"a": stats, "b": stats})
    assert "vocoder calls" in table and "decode" in table
    one_by_one = [engine.synthesize_batch([r], options=options)[0] for r in requests]
    for a, b in zip(audio, one_by_one, strict=True):
        assert a.shape == b.shape
        assert float(np.abs(a - b).max()) <= 1e-3  # vocoder rounding, through post-processing


def test_calls_stay_within_the_frame_budget(engine: Engine) -> None:
    from wyoming_omnivoice.engine.audio.vocoder import FRAME_BUDGET

    vocoder = engine.vocoder_runner
    rng = np.random.default_rng(12)
    items = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in (200, 210, 220, 230, 90)]
    got = vocoder.decode_many(items)
    calls = vocoder.last_stats.calls
    assert all(rows <= 2 or rows * frames <= FRAME_BUDGET for rows, frames in calls)
    assert sum(rows for rows, frames in calls if frames == 256) >= 8  # split, not dropped
    for codes, wave in zip(items, got, strict=True):
        assert float(np.abs(wave - vocoder.decode(codes)).max()) <= CHECK_MAX_ABS


def test_warm_up_runs_the_short_reply_shapes(engine: Engine) -> None:
    vocoder = engine.vocoder_runner
    assert vocoder.warm_up(batch=8) >= 4
    assert Vocoder(engine.vocoder).warm_up(batch=8) == 0  # per item: nothing to warm
