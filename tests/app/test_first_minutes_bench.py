"""benchmarks/first_minutes.py: its parsing and report pieces, and one first start at the
tiny size against the real server (the log lines it relies on, the speech it detects).

No timed assertions: the figures are only checked for being there and consistent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TINY_MODEL

from benchmarks import first_minutes as fm

LOG = """\
812 wyoming_omnivoice.voices.lazy_anchors Voice anchors: building 3 in the background, 1 at a time
900 wyoming_omnivoice Ready: listening on tcp://127.0.0.1:1 with 372 voice(s)
5100 wyoming_omnivoice.voices.lazy_anchors Voice anchors: 1 of 3 built (4 s elapsed)
"""


def test_anchors_done_reads_the_servers_log() -> None:
    assert fm.anchors_done(LOG) == (False, None, 0)
    done = LOG + ("9000 wyoming_omnivoice.voices.lazy_anchors Voice anchors: 3 of 3 built "
                  "(8 s elapsed, about 0 s left)\n")
    assert fm.anchors_done(done) == (True, 9.0, 3)
    # No background build (a restart, or code that builds them before ready): done at once.
    assert fm.anchors_done("900 wyoming_omnivoice Ready: listening\n") == (True, None, 0)


def test_keep_alive_silence_is_not_speech() -> None:
    assert fm.is_silence(bytes(2048))
    assert not fm.is_silence(bytes(2047) + b"\x01")


def _session(label: str, speech: list[tuple[float, bool]], anon: list[int]) -> fm.Session:
    session = fm.Session(label, ready_s=3.0, anchors_done_s=60.0, anchors=14)
    session.replies = [fm.Reply(sent_s=15.0 * i, first_speech_s=s, during_anchors=d,
                                anon_mb=100.0 + i)
                       for i, (s, d) in enumerate(speech)]
    session.memory = [(float(i), a, 50 * fm.MB) for i, a in enumerate(anon)]
    return session


def test_summary_compares_the_first_start_with_the_restart() -> None:
    first = _session("first", [(2.0, True), (4.0, True), (1.0, False)],
                     [100 * fm.MB, 300 * fm.MB, 120 * fm.MB])
    restart = _session("restart", [(1.0, False), (1.0, False)], [90 * fm.MB])
    rows = dict(fm.summary(first, restart))
    assert rows["replies during the anchors"] == "2"
    assert rows["first speech during the anchors: median (max), s"] == "3.00 (4.00)"
    assert rows["first speech after a restart (anchors done): median (max), s"] == \
        "1.00 (1.00)"
    assert rows["ratio (target <= 1.3x): median (max)"] == "3.00x (4.00x) NOT met"
    assert rows["anchors done after ready, s"] == "57 (14 anchors)"
    assert rows["peak anon / file, MiB (first start)"] == "300 / 50"
    # A restart still making anchors (its first start was cut short): only its replies
    # once they are done are the baseline.
    busy = _session("restart", [(9.0, True), (2.0, False)], [90 * fm.MB])
    assert dict(fm.summary(first, busy))[
        "first speech after a restart (anchors done): median (max), s"] == "2.00 (2.00)"
    fast = _session("first", [(1.2, True), (1.1, False)], [100 * fm.MB])
    assert dict(fm.summary(fast, restart))["ratio (target <= 1.3x): median (max)"] == \
        "1.20x (1.20x) met"


def test_memory_table_has_a_row_per_period_and_the_peak() -> None:
    session = _session("s", [], [10 * fm.MB] * 5 + [40 * fm.MB] * 5)
    rows = fm.memory_table(session, every_s=4.0)
    assert [row.split()[0] for row in rows] == ["0", "4", "8", "9", "peak"]
    assert rows[-1].split()[1:] == ["40", "50", "90"]


@pytest.mark.slow
def test_a_first_start_at_the_tiny_size(tmp_path: Path) -> None:
    """The real server: replies while its background anchors are made, then once done."""
    model = fm.private_model(TINY_MODEL, tmp_path)
    session = fm.run_session("tiny", fm.REPO, model, tmp_path / "data", tmp_path / "log",
                             interval_s=0.2, after=2, limit_s=300,
                             extra=["--preload-languages", "en"])
    assert session.ready_s > 0
    assert session.anchors > 0 and session.anchors_done_s is not None, \
        (tmp_path / "log").read_text()
    assert [r.during_anchors for r in session.replies][-2:] == [False, False]
    assert all(not r.error and r.first_speech_s is not None for r in session.replies)
    for reply in session.replies:
        assert reply.first_audio_s is not None and reply.first_speech_s is not None
        assert reply.first_audio_s <= reply.first_speech_s <= reply.total_s
    assert session.memory and max(anon for _, anon, _ in session.memory) > 0
