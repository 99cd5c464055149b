"""The Start-up line: each phase's seconds, the parts of a phase, in the order marked."""

from __future__ import annotations

import re

import pytest

from wyoming_omnivoice.app.startup_timing import StartupTiming, seconds_since_process_start


def test_the_line_lists_every_phase_in_order(caplog: pytest.LogCaptureFixture) -> None:
    timing = StartupTiming()
    timing.mark("imports")
    timing.mark("engine", {"backbone": 0.5, "scoring": 0.07})
    timing.mark("anchors")
    with caplog.at_level("INFO"):
        timing.report()
    (line,) = [m for m in caplog.messages if m.startswith("Start-up: ready")]
    phases = re.findall(r"([a-z][a-z ]*?) (\d+\.\d+) s", line.split(": ", 2)[2])
    assert [name for name, _ in phases] == ["imports", "engine", "anchors", "listening"]
    assert "engine " in line and "(backbone 0.50, scoring 0.07)" in line
    total = float(line.split()[2])
    assert total == pytest.approx(sum(float(s) for _, s in phases), abs=0.01 * len(phases))


def test_the_first_phase_counts_from_the_process_start() -> None:
    since = seconds_since_process_start()
    assert since is not None and since > 0  # this test process started before now
    timing = StartupTiming()
    timing.mark("imports")
    assert timing.phases[0][1] >= since
