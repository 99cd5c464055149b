"""The gap guard: no client waits longer than ``--max-gap`` seconds with nothing to play.

A Voice PE satellite wedges after about 5 s without audio in a streamed reply and needs a
power cycle (esphome/home-assistant-voice-pe#612); non-streamed replies drop at exactly
5 s (#397). On a CPU slower than real time the next piece of a reply can take longer to
decode than the audio already sent lasts. While a piece is still decoding, the output
therefore sends short chunks of silence inside the audio cycle (and opens the cycle with
silence when the first piece is late): the client always has something to play.

Each request has a :class:`.speech.pacing.PlayClock`: the client is taken to play every
chunk in real time from the moment it arrives, so it runs out of audio at ``runs_out``. A silence of
:data:`SILENCE_STEP_S` is due :data:`MARGIN_S` before the client would have waited
``max_gap`` seconds; before the first audio the wait counts from the request. The added
delay to the real audio is at most one step per ``max_gap`` of waiting, many short gaps
instead of one long one. Silence counts as audio for the client, never for a first-audio
figure (the metrics count it on its own: ``omnivoice_silence_seconds_total``).

``--max-gap 0`` turns the guard off.

The lead-in (``--lead-in-ms``) is silence before a reply's first audio, for satellites whose
speaker wakes late and clips the first word: it opens the reply's first audio cycle, right
before its first speech (or before the guard's first silence, when the first piece is
late), so a request that fails before any audio still gets its error first and an empty
cycle. It is audio for the play clock like the guard's silence: the guard's next silence
is due ``max_gap`` after the lead-in and what followed it have played. A *reply* is one
request: a one-shot ``synthesize``, or a stream from ``synthesize-start`` to
``synthesize-stop`` (only its first audio cycle gets it, not each sentence's). A request
with nothing to say (its short silent cycle) gets none.
"""

from __future__ import annotations

import time

from wyoming_omnivoice.speech import PlayClock

#: The default longest wait with nothing to play (seconds); under the satellites' 5 s.
DEFAULT_MAX_GAP_S = 2.0
#: Silence sent each time the guard acts (seconds): short, so real audio is barely delayed.
SILENCE_STEP_S = 0.25
#: The guard acts this long before the wait would reach ``max_gap`` (event loop latency).
MARGIN_S = 0.2
#: The smallest ``--max-gap`` (the guard must be able to act before it).
MIN_MAX_GAP_S = 0.5
#: The default lead-in (ms): with the 0.1 s of zeros and the 0.1 s fade-in our audio starts
#: with, speech begins about 0.5 s in, which covers outputs that resume from suspend in
#: 50-500 ms (USB and Bluetooth DACs, PipeWire/ALSA sinks); see docs/home-assistant.md.
DEFAULT_LEAD_IN_MS = 300
#: The longest ``--lead-in-ms``.
MAX_LEAD_IN_MS = 5000


class GapGuard:
    """When silence is due, for one connection's requests (``max_gap`` 0: never)."""

    def __init__(self, max_gap_s: float = DEFAULT_MAX_GAP_S,
                 step_s: float = SILENCE_STEP_S, margin_s: float = MARGIN_S) -> None:
        self.max_gap_s = max_gap_s
        self.step_s = step_s
        self.margin_s = min(margin_s, max_gap_s / 2)

    @property
    def enabled(self) -> bool:
        return self.max_gap_s > 0

    def due_in(self, clock: PlayClock, now: float | None = None) -> float | None:
        """Seconds until silence is due for ``clock`` (<= 0: now; None: guard off)."""
        if not self.enabled:
            return None
        now = time.monotonic() if now is None else now
        return clock.idle_since() + self.max_gap_s - self.margin_s - now


def parse_max_gap(value: str) -> float:
    """``--max-gap``: 0 (off) or seconds from :data:`MIN_MAX_GAP_S` to 60; ValueError
    saying what to give."""
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a number of seconds") from None
    if seconds != 0 and not MIN_MAX_GAP_S <= seconds <= 60:
        raise ValueError(f"{value}: use 0 (off) or {MIN_MAX_GAP_S} to 60 seconds")
    return seconds


def parse_lead_in_ms(value: str) -> int:
    """``--lead-in-ms``: whole milliseconds from 0 (none) to :data:`MAX_LEAD_IN_MS`;
    ValueError saying what to give."""
    try:
        ms = int(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a whole number of milliseconds") from None
    if not 0 <= ms <= MAX_LEAD_IN_MS:
        raise ValueError(f"{value}: use 0 (none) to {MAX_LEAD_IN_MS} ms")
    return ms
