"""Progress of long work (``wyoming_omnivoice.progress``) and the start-up status that reads
it (``app/startup_status.py``): the lines a household reads in the log, and ``/health``."""

from __future__ import annotations

import logging

import pytest

from wyoming_omnivoice import progress
from wyoming_omnivoice.app.startup_status import StartupStatus
from wyoming_omnivoice.progress import Progress, Snapshot, describe


@pytest.mark.parametrize(("snapshot", "line"), [
    (Snapshot("download", "Downloading x.data (file 2 of 9)", "bytes", "byte", 512e6, 1.76e9,
              15, 35.2e6, 35.5),
     "Downloading x.data (file 2 of 9): 512.0 MB of 1.76 GB (29 %), 35.2 MB/s, "
     "about 36 s left"),
    (Snapshot("prepare", "Preparing the int8 backbone", "weights", "weight", 120, 196, 15,
              8.1, 9.4), "Preparing the int8 backbone: 120 of 196 weights (61 %), "
                         "8.1 weights/s, about 9 s left"),
    (Snapshot("anchors", "Voice anchors", "built", "anchor", 3, 14, 60, 0.05, 220),
     "Voice anchors: 3 of 14 built (21 %), 20 s per anchor, about 4 min left"),
    (Snapshot("prepare", "Preparing the fp16 backbone", "steps", "step", 0, None, 95, None,
              None), "Preparing the fp16 backbone (2 min so far)"),
    (Snapshot("download", "Downloading y", "bytes", "byte", 2048, None, 1, None, None),
     "Downloading y: 2.0 kB"),
])
def test_a_progress_line_says_done_total_percent_rate_and_time_left(
        snapshot: Snapshot, line: str) -> None:
    assert describe(snapshot) == line


def test_lines_come_at_most_every_interval_and_the_end_is_the_owners(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="wyoming_omnivoice"):
        with Progress("anchors", "Voice anchors", 4, unit="built", item="anchor",
                      interval_s=0.0) as work:
            for done in range(1, 5):
                work.set(done)
            work.log()
        with Progress("anchors", "Quiet", 4, unit="built", interval_s=3600.0) as quiet:
            quiet.set(1)
            quiet.set(2)
    lines = list(caplog.messages)
    # Every set logs at interval 0, except the last (done == total): log() writes that one.
    assert [m.split(" (")[0] for m in lines] == [
        "Voice anchors: 1 of 4 built", "Voice anchors: 2 of 4 built",
        "Voice anchors: 3 of 4 built", "Voice anchors: 4 of 4 built"]


def test_work_is_listed_while_it_runs_only() -> None:
    assert progress.running() == []
    with Progress("download", "Downloading a", 10) as first:
        first.set(5)
        with Progress("prepare", "Preparing b", unit="steps"):
            listed = progress.running()
        after = progress.running()
    assert [(s.kind, s.label, s.done, s.percent) for s in listed] == [
        ("download", "Downloading a", 5, 50.0), ("prepare", "Preparing b", 0, None)]
    assert [s.label for s in after] == ["Downloading a"]
    assert progress.running() == []


def test_health_is_the_phase_and_the_work_running() -> None:
    status = StartupStatus()
    assert status.health()["phase"] == "starting"
    status.enter("model")
    with Progress("download", "Downloading m.data (file 1 of 2)", 100) as work:
        work.set(40)
        during = status.health()
    status.enter("engine")
    with Progress("prepare", "Preparing the int8 backbone", unit="steps"):
        preparing = status.health()
    status.ready()
    with Progress("anchors", "Voice anchors", 14, unit="built", item="anchor"):
        background = status.health()
    done = status.health()
    assert during["ready"] is False and during["status"] == "starting"
    assert during["phase"] == "download" and during["doing"] == "Downloading the model"
    assert during["message"] == "Downloading m.data (file 1 of 2): 40 B of 100 B (40 %)"
    assert during["work"][0]["percent"] == 40.0 and during["work"][0]["total"] == 100
    assert preparing["phase"] == "prepare"
    assert background["ready"] is True and background["phase"] == "ready"
    assert background["message"] == "Ready; in the background: Voice anchors: 0 of 14 built (0 %)"
    assert done["message"] == "Ready" and done["work"] == []
    assert done["ready_after_s"] is not None
    with pytest.raises(ValueError, match="unknown start-up phase"):
        status.enter("dreaming")
