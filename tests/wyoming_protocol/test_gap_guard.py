"""The gap guard: silence inside the audio cycle while a late piece decodes (--max-gap).

The server side runs the real server whose engine decodes ``faultslow`` text 3 s late
(``tests/faulty_server.py``), with ``--max-gap 1``: the client then gets audio-start and
silence chunks before the late audio; with ``--max-gap 0`` it gets nothing until the audio.
"""

from __future__ import annotations

import argparse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    REPO_ROOT,
    ServerProcess,
    audio_cycles,
    free_port,
    stream_once,
    synthesize_once,
    tiny_server_args,
)
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.event import Event

from wyoming_omnivoice.app.flags import max_gap_seconds
from wyoming_omnivoice.speech.pacing import PlayClock
from wyoming_omnivoice.wyoming_protocol.gap_guard import GapGuard

FAULTY_ENTRY = [str(REPO_ROOT / "tests" / "faulty_server.py")]
#: Whole zero chunks the audio itself starts with: the post-processing pads 100 ms (2400
#: samples, two chunks of 1024).
PADDING_CHUNKS = 2


def test_play_clock_and_when_silence_is_due() -> None:
    clock = PlayClock(started=100.0)
    guard = GapGuard(2.0, step_s=0.25, margin_s=0.2)
    assert guard.due_in(clock, now=100.0) == pytest.approx(1.8)  # before the first audio
    clock.sent(1.0, now=101.0)                                 # plays until 102
    assert clock.runs_out == 102.0
    assert guard.due_in(clock, now=101.5) == pytest.approx(2.3)
    clock.sent(0.5, now=101.5)                                 # queued behind: until 102.5
    assert clock.runs_out == 102.5
    clock.sent(0.25, silence=True, now=104.0)                  # after a gap: from now on
    assert clock.runs_out == 104.25
    assert (clock.audio_s, clock.silence_s) == (1.5, 0.25)
    assert GapGuard(0).due_in(clock) is None and not GapGuard(0).enabled


def test_max_gap_flag() -> None:
    assert max_gap_seconds("0") == 0 and max_gap_seconds("2") == 2.0
    for bad in ("-1", "0.1", "61", "soon"):
        with pytest.raises(argparse.ArgumentTypeError):
            max_gap_seconds(bad)


def _start(tmp_path: Path, *extra: str) -> ServerProcess:
    tmp_path.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = ServerProcess(tiny_server_args(port, tmp_path / "data", *extra),
                           tmp_path / f"server-{port}.log", port)
    server.entry = FAULTY_ENTRY
    return server.start().wait_ready()


def _pcm(cycle: list[Event]) -> bytes:
    return b"".join(AudioChunk.from_event(e).audio for e in cycle
                    if AudioChunk.is_type(e.type))


@pytest.mark.slow
async def test_silence_while_a_late_piece_decodes_and_none_when_off(tmp_path: Path) -> None:
    """Same (deterministic) audio from a server with the guard and one without: the
    guarded reply is the same audio after silence, in one audio cycle."""
    metrics_port = free_port()
    # The guard alone (the lead-in with it: the next test).
    guarded = _start(tmp_path / "on", "--max-gap", "1", "--deterministic", "--lead-in-ms", "0",
                     "--metrics-uri", f"http://127.0.0.1:{metrics_port}")
    plain = _start(tmp_path / "off", "--max-gap", "0", "--deterministic", "--lead-in-ms", "0")
    try:
        replies: dict[str, list[list[Event]]] = {}
        for name, server in (("on", guarded), ("off", plain)):
            async with AsyncClient.from_uri(server.uri) as client:
                (one_shot,) = audio_cycles(await synthesize_once(client, "Please faultslow."))
                streamed = audio_cycles(await stream_once(
                    client, ["Hello there. ", "Please faultslow."]))
                replies[name] = [one_shot, *streamed]
        assert len(replies["on"]) == len(replies["off"]) == 3
        for index in (0, 2):  # the late pieces: the first of a reply, a later one
            with_guard, without = _pcm(replies["on"][index]), _pcm(replies["off"][index])
            silence = len(with_guard) - len(without)
            assert silence >= 2 * int(0.25 * 24000)  # at least two steps of 0.25 s
            assert with_guard[silence:] == without
            assert not any(with_guard[:silence])
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as answer:
            text = answer.read().decode()
        counted = next(float(line.split()[-1]) for line in text.splitlines()
                       if line.startswith("omnivoice_silence_seconds_total"))
        sent = sum(len(_pcm(c)) - len(_pcm(o)) for c, o in
                   zip(replies["on"], replies["off"], strict=True)) / 2 / 24000
        assert counted == pytest.approx(sent, abs=0.05)
        assert "Gap guard:" in guarded.log and "Gap guard:" not in plain.log
    finally:
        guarded.stop()
        plain.stop()


def _leading_zeros(pcm: bytes) -> int:
    """Samples of silence a cycle's PCM starts with."""
    samples = np.frombuffer(pcm, dtype="<i2")
    nonzero = np.flatnonzero(samples)
    return int(nonzero[0]) if nonzero.size else samples.size


@pytest.mark.slow
async def test_the_lead_in_is_audio_played_for_the_guard(tmp_path: Path) -> None:
    """The first piece decodes 3 s late; --max-gap 1. Without a lead-in the guard fills the
    wait step after step. With a 5 s lead-in the guard's first silence opens the cycle with
    the lead-in before it, and then the guard waits for the lead-in to be played: one step,
    however long the decode. The speech after the silence is the same, and the metrics
    count the lead-in as silence."""
    metrics_port = free_port()
    led = _start(tmp_path / "led", "--max-gap", "1", "--deterministic", "--lead-in-ms", "5000",
                 "--metrics-uri", f"http://127.0.0.1:{metrics_port}")
    guarded = _start(tmp_path / "guarded", "--max-gap", "1", "--deterministic",
                     "--lead-in-ms", "0")
    try:
        replies = {}
        for name, server in (("led", led), ("guarded", guarded)):
            async with AsyncClient.from_uri(server.uri) as client:
                (replies[name],) = audio_cycles(await synthesize_once(client,
                                                                      "Please faultslow."))
        with_lead_in, with_guard = _pcm(replies["led"]), _pcm(replies["guarded"])
        # Samples: 5 s and a 0.25 s step, each in whole chunks of 1024 samples.
        lead_in, step = round(5 * 24000 / 1024) * 1024, 6 * 1024
        guard_only = _leading_zeros(with_guard)
        padding = guard_only % step  # the audio's own leading zeros, after the steps
        assert guard_only - padding >= 2 * step  # the guard acted twice or more
        assert _leading_zeros(with_lead_in) == lead_in + step + padding  # once
        assert with_lead_in[2 * (lead_in + step):] == with_guard[2 * (guard_only - padding):]
        assert led.log.count("Gap guard:") == 1
        assert guarded.log.count("Gap guard:") == (guard_only - padding) // step
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as answer:
            text = answer.read().decode()
        counted = next(float(line.split()[-1]) for line in text.splitlines()
                       if line.startswith("omnivoice_silence_seconds_total"))
        assert counted == pytest.approx((lead_in + step) / 24000, abs=0.001)
    finally:
        led.stop()
        guarded.stop()
