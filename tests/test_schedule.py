"""Timestep schedule and unmask counts, compared with upstream's ``_get_time_steps``."""

from __future__ import annotations

import hashlib

import pytest
from rule_goldens import rules

from wyoming_omnivoice.engine.schedule import timesteps, timesteps_f32, unmask_counts

GOLDEN = rules()["schedule"]


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


def test_counts_for_32_steps_and_every_length_up_to_1000() -> None:
    recorded = GOLDEN["counts_32_shift_0.1"]
    assert len(recorded) == 1000
    mismatches = []
    for frames, want in recorded.items():
        got = unmask_counts(8 * int(frames), 32, 0.1)
        if ",".join(map(str, got)) != want:
            mismatches.append(frames)
    assert mismatches == []


def test_count_digests_for_other_step_counts() -> None:
    for num_step, t_shift, want in GOLDEN["counts_digests"]:
        joined = ";".join(
            ",".join(map(str, unmask_counts(8 * frames, num_step, t_shift)))
            for frames in range(1, 1001)
        )
        assert hashlib.sha256(joined.encode()).hexdigest() == want, (num_step, t_shift)


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
