"""Timestep schedule and unmask counts, compared with upstream.

The timesteps come from upstream's ``_get_time_steps``; the per-step unmask counts were
observed while upstream's ``_generate_iterative`` ran (``tools/record_rule_goldens.py`` for
every length up to 1000 frames, ``tools/build_fixtures.py`` and
``tools/record_long_text_goldens.py`` on the tiny fixture model), not transcribed.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import FIXTURES
from rule_goldens import rules

from wyoming_omnivoice.engine.decoding.schedule import timesteps, timesteps_f32, unmask_counts

GOLDEN = rules()["schedule"]
GOLDEN_DIR = FIXTURES / "golden"


def test_timesteps_match_torch_float32_bit_for_bit() -> None:
    cases = GOLDEN["timesteps"]
    assert {num_step for num_step, _, _ in cases} >= {8, 12, 16, 24, 32, 64}
    mismatches = [
        (num_step, t_shift)
        for num_step, t_shift, want in cases
        if timesteps(num_step, t_shift) != want
    ]
    assert mismatches == []


def test_last_timestep_is_float32_rounded() -> None:
    steps = timesteps(32, 0.1)
    assert steps[0] == 0.0
    assert steps[-1] == 0.9999997615814209
    assert timesteps_f32(32, 0.1).dtype.name == "float32"


def test_observed_counts_cover_the_step_counts_in_use() -> None:
    full = {(entry["num_step"], entry["t_shift"]) for entry in GOLDEN["observed_counts"]}
    assert {(32, 0.1), (16, 0.1), (12, 0.1), (8, 0.1)} <= full
    digests = {(num_step, t_shift) for num_step, t_shift, _ in GOLDEN["observed_count_digests"]}
    assert {(12, 0.3), (8, 0.5)} <= digests  # the configs of the parity goldens
    assert GOLDEN["max_frames"] == 1000
    for entry in GOLDEN["observed_counts"]:
        assert len(entry["counts"]) == GOLDEN["max_frames"]


@pytest.mark.parametrize(
    "entry", GOLDEN["observed_counts"], ids=lambda e: f"{e['num_step']}steps-shift{e['t_shift']}"
)
def test_counts_match_upstream_run_for_every_length(entry: dict) -> None:
    """Counts observed while upstream's decode loop ran, for 1..1000 frames."""
    mismatches = []
    for frames, want in enumerate(entry["counts"], start=1):
        got = unmask_counts(8 * frames, entry["num_step"], entry["t_shift"])
        if ",".join(map(str, got)) != want:
            mismatches.append(frames)
    assert mismatches == []


@pytest.mark.parametrize(
    ("num_step", "t_shift", "want"), GOLDEN["observed_count_digests"],
    ids=lambda v: str(v)[:8],
)
def test_count_digests_match_upstream_run(num_step: int, t_shift: float, want: str) -> None:
    joined = ";".join(
        ",".join(map(str, unmask_counts(8 * frames, num_step, t_shift)))
        for frames in range(1, GOLDEN["max_frames"] + 1)
    )
    assert hashlib.sha256(joined.encode()).hexdigest() == want


def fixture_model_runs() -> list:
    """(frames, options, counts) of every run observed on the tiny fixture model."""
    codes = json.loads((GOLDEN_DIR / "upstream_codes.json").read_text())
    runs = [pytest.param(case["num_frames"], case["options"], case["schedule"],
                         id=f"{case['name']}-config{case['config']}")
            for case in codes["cases"]]
    long_text = json.loads((GOLDEN_DIR / "upstream_long_text.json").read_text())
    options = {"num_step": 32, "t_shift": 0.1}  # generate() defaults
    for case in long_text["cases"]:
        for index, chunk in enumerate(case["chunks"]):
            runs.append(pytest.param(chunk["num_frames"], options, chunk["schedule"],
                                     id=f"{case['name']}-chunk{index}"))
    return runs


@pytest.mark.parametrize(("frames", "options", "want"), fixture_model_runs())
def test_counts_match_runs_on_the_fixture_model(frames: int, options: dict,
                                                want: list[int]) -> None:
    assert unmask_counts(8 * frames, options["num_step"], options["t_shift"]) == want


@pytest.mark.parametrize(
    ("frames", "num_step", "expected"),
    [
        (100, 32, [3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 8, 8, 9, 10, 11, 13, 14, 17,
                   19, 22, 26, 32, 39, 49, 64, 87, 125, 182]),
        (35, 32, [1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 6, 7, 8,
                  10, 11, 14, 18, 23, 31, 44, 52]),
        (100, 16, [6, 6, 7, 8, 9, 11, 13, 15, 19, 24, 30, 41, 58, 88, 151, 314]),
    ],
)
def test_spec_goldens(frames: int, num_step: int, expected: list[int]) -> None:
    counts = unmask_counts(8 * frames, num_step, 0.1)
    assert counts == expected
    assert sum(counts) == 8 * frames


def test_float64_schedule_would_differ() -> None:
    """The float32 pitfall from the spec: T=205 differs when computed in float64."""
    import math

    steps64 = [0.1 * (i / 32) / (1 - 0.9 * (i / 32)) for i in range(33)]
    total = 8 * 205
    remaining, counts64 = total, []
    for step in range(32):
        count = remaining if step == 31 else min(
            math.ceil(total * (steps64[step + 1] - steps64[step])), remaining
        )
        counts64.append(count)
        remaining -= count
    assert unmask_counts(total, 32, 0.1) != counts64


def test_invalid_step_count() -> None:
    with pytest.raises(ValueError):
        timesteps(0, 0.1)
