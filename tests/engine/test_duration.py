"""Rule duration estimator, compared with upstream's ``RuleDurationEstimator``."""

from __future__ import annotations

import math

import pytest
from rule_goldens import rules

from wyoming_omnivoice.engine.prompt.duration import (
    char_weight,
    estimate_duration_frames,
    estimate_num_frames,
    frames_for_duration,
    text_weight,
)

GOLDEN = rules()["duration"]


def test_weight_of_every_code_point_matches_upstream() -> None:
    runs = GOLDEN["weight_runs"]
    weight = char_weight.__wrapped__  # the uncached function: 1.1 M distinct inputs
    mismatches = []
    bounds = [start for start, _ in runs[1:]] + [0x110000]
    for (start, expected), end in zip(runs, bounds, strict=True):
        for code in range(start, end):
            if weight(chr(code)) != expected:
                mismatches.append((hex(code), expected, weight(chr(code))))
                break
    assert mismatches == []


def test_estimates_match_upstream() -> None:
    texts = GOLDEN["texts"]
    refs = GOLDEN["refs"]
    cases = GOLDEN["cases"]
    assert len(cases) > 2000
    mismatches = []
    for text_index, ref_index, speed, expected in cases:
        ref_text, ref_frames = refs[ref_index]
        got = estimate_num_frames(texts[text_index], ref_text, ref_frames, speed)
        if got != expected:
            mismatches.append((texts[text_index], ref_text, ref_frames, speed, expected, got))
    assert mismatches == []


@pytest.mark.parametrize(
    ("text", "speed", "expected"),
    [
        ("hello world", 1.0, 35),
        ("hello world", 1.5, 23),
        ("你好，世界！这是一个测试。", 1.0, 55),
        ("This is a slightly longer sentence to estimate duration for.", 1.0, 92),
        ("", 1.0, 1),
        ("hello world", None, 35),
    ],
)
def test_spec_goldens(text: str, speed: float | None, expected: int) -> None:
    assert estimate_num_frames(text, speed=speed) == expected


def test_reference_weight_and_boost() -> None:
    assert math.isclose(text_weight("Nice to meet you."), 14.1)
    raw = text_weight("hello world") / (14.1 / 25)
    assert raw < 50
    assert math.isclose(estimate_duration_frames("hello world", "Nice to meet you.", 25),
                        50 * (raw / 50) ** (1 / 3))
    assert estimate_duration_frames("x", "", 25) == 0.0
    assert estimate_duration_frames("x", "\u0301", 25) == 0.0


def test_frames_for_duration() -> None:
    assert frames_for_duration(1.0) == 25
    assert frames_for_duration(2.5) == 62
    assert frames_for_duration(0.001) == 1
    with pytest.raises(ValueError):
        frames_for_duration(float("nan"))
