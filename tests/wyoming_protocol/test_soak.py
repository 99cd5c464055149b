"""A short soak (60 mixed requests, 8 clients) through benchmarks/soak.py's own driver.

One-shot, streaming, abandoned streams and describe against a real server subprocess: every
valid request completes with correct audio, and the server's file descriptors and threads
do not grow over their warmed-up counts. Resident memory is checked with a looser bound than the
full 1,000-request soak (``python -m benchmarks.soak``, within 10 %), since 60 requests are
too few for the allocators to reach their steady state.
"""

from __future__ import annotations

import sys

import pytest
from conftest import ServerProcess, free_port, tiny_server_args

from benchmarks import soak

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

SHORT_RSS_TOLERANCE = 0.25


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_short_soak(tmp_path, shared_data_dir) -> None:
    port = free_port()
    # No --debug: logging every batch is not what a long-running server does.
    # No background anchors after ready (--preload-languages none): building them during the
    # soak would count as growth of the steady state measured here.
    args = [a for a in tiny_server_args(port, shared_data_dir, "--preload-languages", "none")
            if a != "--debug"]
    server = ServerProcess(args, tmp_path / "server.log", port).start().wait_ready()
    try:
        assert server.process is not None
        report = await soak.soak(server.uri, server.process.pid, requests=60, clients=8)
    finally:
        assert server.stop() == 0
    summary = "\n".join(report.lines())
    assert report.totals.failures == [], summary
    assert sum(report.totals.done.values()) == 60
    assert all(report.totals.done[kind] > 0 for kind in soak.KINDS), summary
    # problems() flags any growth of descriptors or threads over the warmed-up counts (a
    # leak) and resident memory beyond the tolerance. The warm snapshot can still count a
    # connection that is being closed, so ending with fewer descriptors is not a failure.
    assert report.end.fds <= report.warm.fds, summary
    assert report.end.threads <= report.warm.threads, summary
    assert report.problems(SHORT_RSS_TOLERANCE) == [], summary


def _cycle(*payloads: bytes) -> list:
    from wyoming.event import Event

    fmt = {"rate": soak.RATE, "width": soak.WIDTH, "channels": soak.CHANNELS}
    return [Event("audio-start", fmt), *(Event("audio-chunk", fmt, p) for p in payloads),
            Event("audio-stop")]


@pytest.mark.parametrize("silence", [4800, 12000])
def test_check_audio_takes_the_gap_guards_silences(silence: int) -> None:
    """A loaded host's gap-guard silence (zeros of their own length) sits between the audio's
    whole chunks; the audio itself is still checked chunk by chunk."""
    speech = bytes([1, 0]) * (soak.CHUNK_BYTES // 2)
    assert soak.check_audio(_cycle(speech, bytes(silence), speech, speech[:100]), 1) == \
        pytest.approx((2 * soak.CHUNK_BYTES + 100) / soak.WIDTH / soak.RATE)
    with pytest.raises(soak.Failure, match="bad chunk sizes"):
        soak.check_audio(_cycle(speech, speech[:100], speech), 1)
    with pytest.raises(soak.Failure, match="bad chunk sizes"):
        soak.check_audio(_cycle(speech, bytes(silence + 1), speech), 1)
    with pytest.raises(soak.Failure, match="silent audio"):
        soak.check_audio(_cycle(bytes(silence)), 1)
