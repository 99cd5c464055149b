"""Never starve the player: pieces of a reply sized so each decodes while the last plays.

On a CPU that is about as fast as real time, the gap before a reply's next piece is the
time the worker needs to decode it less the audio still queued at the client. So the
server learns its own decode speed on this host (:class:`DecodeSpeed`, from its recent
decodes) and, each time a piece of a reply goes to the worker, decides how much of the
text that has not been decoded yet it takes (:func:`plan_piece`):

- the first piece of a reply is its first sentence (or that sentence's first clause when
  it is long, :mod:`.text.clauses`): first audio as soon as possible;
- a later piece takes as many whole sentences as are predicted to decode before the
  client runs out of audio (``budget``), up to :data:`MAX_PIECE_CHARS`;
- where not even the next sentence fits, it takes that sentence's clauses that fit, and
  at least one clause: a host slower than real time then makes many short gaps instead
  of one long one (the gap guard, :mod:`.wyoming_protocol.gap_guard`, fills each with silence).

The same plan serves one-shot and streamed text: a stream's sentences are taken as they
arrive. Nothing waits for the budget: a piece is planned when the worker takes the piece
before it, and so a long batch never queues behind a short first piece.

The decode time of a piece is modelled as ``overhead + per_frame * frames``, where
``frames`` is the piece's target canvas (the engine's duration estimate at the voice's
rate, at least the minimum canvas): the overhead holds the voice's prompt (text and
anchor), the per-frame cost the target. Both come from a least-squares fit over the
recent decodes; until there are two different lengths, the overhead is taken as
:data:`PRIOR_OVERHEAD_SHARE` of a decode.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from wyoming_omnivoice.engine import MIN_CANVAS_FRAMES, estimate_num_frames

#: Recent decodes the speed is learned from.
WINDOW = 12
#: A piece takes at most this much text (characters), however fast the host: fewer, longer
#: decodes on a fast host, but never one huge decode the client waits for at the end.
MAX_PIECE_CHARS = 200
#: Share of the budget a piece's predicted decode may use (the prediction is noisy).
SAFETY = 0.8
#: Before two different lengths were decoded: the share of a decode taken as overhead.
PRIOR_OVERHEAD_SHARE = 0.35
#: Before any decode: seconds per frame of target (about 2x slower than real time).
PRIOR_SECONDS_PER_FRAME = 0.08
FRAME_RATE = 25


@dataclass
class PlayClock:
    """When the client of one request runs out of audio (monotonic seconds), taking it to
    play every piece of audio in real time from the moment it arrives."""

    #: When the request arrived: a wait before the first audio counts from here.
    started: float = field(default_factory=time.monotonic)
    #: When the client has played everything sent so far (None: nothing sent yet).
    runs_out: float | None = None
    #: Seconds of real audio and of silence sent.
    audio_s: float = 0.0
    silence_s: float = 0.0

    def sent(self, seconds: float, *, silence: bool = False,
             now: float | None = None) -> None:
        """``seconds`` of audio (or silence) reached the client now."""
        now = time.monotonic() if now is None else now
        self.runs_out = max(self.runs_out or now, now) + seconds
        if silence:
            self.silence_s += seconds
        else:
            self.audio_s += seconds

    def idle_since(self) -> float:
        """Since when the client has had nothing to play (or has waited for the first)."""
        return self.started if self.runs_out is None else self.runs_out


@dataclass
class PlannedPiece:
    """What the pacing predicted for the piece the worker took last."""

    started: float
    decode_s: float
    audio_s: float

    def budget(self, now: float, runs_out: float | None) -> float:
        """Seconds the next piece's decode may take before the client runs out of audio
        (``runs_out``: when it runs out of what was sent so far)."""
        ready = self.started + self.decode_s
        if now >= ready:  # decoded already: its audio is (about to be) sent
            return max(0.0, (runs_out or now) - now)
        return max(runs_out or ready, ready) + self.audio_s - ready


class DecodeSpeed:
    """This host's decode time of one piece, learned from its recent decodes (thread-safe:
    the worker thread records, the event loop predicts)."""

    def __init__(self, window: int = WINDOW) -> None:
        self._samples: deque[tuple[int, float]] = deque(maxlen=window)
        self._lock = threading.Lock()

    def record(self, frames: Sequence[int], seconds: float) -> None:
        """A decode of pieces of ``frames`` target frames (one batch) took ``seconds``.

        A batch of several pieces is counted as one piece of their total frames plus the
        overhead it paid once, which is close enough for planning."""
        total = int(sum(frames))
        if total <= 0 or seconds <= 0:
            return
        with self._lock:
            self._samples.append((total, float(seconds)))

    @property
    def samples(self) -> int:
        with self._lock:
            return len(self._samples)

    def model(self) -> tuple[float, float]:
        """``(overhead_s, seconds_per_frame)`` from the recent decodes."""
        with self._lock:
            samples = list(self._samples)
        if not samples:
            return (PRIOR_OVERHEAD_SHARE * 40 * PRIOR_SECONDS_PER_FRAME,
                    PRIOR_SECONDS_PER_FRAME)
        frames = [float(f) for f, _ in samples]
        seconds = [s for _, s in samples]
        mean_f = sum(frames) / len(frames)
        mean_s = sum(seconds) / len(seconds)
        spread = sum((f - mean_f) ** 2 for f in frames)
        if spread > 0:
            slope = sum((f - mean_f) * (s - mean_s)
                        for f, s in zip(frames, seconds, strict=True)) / spread
            overhead = mean_s - slope * mean_f
            if slope > 0 and overhead >= 0:
                return overhead, slope
        # One length only (or a fit that makes no sense): the prior split of a decode.
        per_frame = (1 - PRIOR_OVERHEAD_SHARE) * mean_s / mean_f
        return PRIOR_OVERHEAD_SHARE * mean_s, per_frame

    def predict(self, frames: int) -> float:
        """Seconds to decode a piece of ``frames`` target frames."""
        overhead, per_frame = self.model()
        return overhead + per_frame * frames


@dataclass(frozen=True)
class Unit:
    """The smallest piece of text the plan moves: a clause, or a whole sentence."""

    text: str
    #: The unit ends its sentence (a piece ending here keeps whole-sentence prosody).
    ends_sentence: bool
    #: Target frames of the unit alone (the engine's estimate at the voice's rate).
    frames: int


def piece_frames(text: str) -> int:
    """The target canvas of ``text`` as the plan counts it (the engine's estimate at the
    default rate, at least the minimum canvas): decodes are recorded in the same units."""
    return max(MIN_CANVAS_FRAMES, estimate_num_frames(text))


def audio_seconds(text: str) -> float:
    """Predicted seconds of speech of ``text`` (the canvas less what is trimmed)."""
    return estimate_num_frames(text) / FRAME_RATE


def joined_frames(units: Sequence[Unit]) -> int:
    """The canvas of a run of units spoken as one piece."""
    return piece_frames(" ".join(unit.text for unit in units))


def units_of(text: str, ends_sentence: bool = True, *, frames: Callable[[str], int] = piece_frames
             ) -> list[Unit]:
    """One sentence (or the first clause the first-clause cut made) as clause units."""
    from wyoming_omnivoice.text.clauses import split_clauses

    clauses = split_clauses(text)
    return [Unit(clause, ends_sentence and index == len(clauses) - 1, frames(clause))
            for index, clause in enumerate(clauses)]


def plan_piece(units: Sequence[Unit], budget_s: float | None, speed: DecodeSpeed,
               frames_of: Callable[[Sequence[Unit]], int] | None = joined_frames) -> int:
    """How many of ``units`` (in order, at least one) the next piece takes.

    ``budget_s``: seconds until the client runs out of audio once the worker can start this
    piece (None: the first piece of a reply: its first sentence). ``frames_of`` gives the
    frames of joined text (default: the sum of the units' own frames).
    """
    if not units:
        return 0
    if budget_s is None:
        return _first_sentence(units)
    limit = budget_s * SAFETY

    def fits(count: int) -> bool:
        taken = units[:count]
        chars = sum(len(unit.text) + 1 for unit in taken) - 1
        if count > 1 and chars > MAX_PIECE_CHARS:
            return False
        frames = frames_of(taken) if frames_of is not None else \
            sum(unit.frames for unit in taken)
        return speed.predict(frames) <= limit

    sentence_ends = [i + 1 for i, unit in enumerate(units) if unit.ends_sentence]
    whole = [end for end in sentence_ends if fits(end)]
    if whole:
        # Whole sentences that fit; stop at the first that does not (fits is monotone
        # except for the character cap, which only grows).
        best = whole[0]
        for end in sentence_ends:
            if not fits(end):
                break
            best = end
        return best
    # Not even the next sentence fits: its clauses that do, at least one.
    first_end = sentence_ends[0] if sentence_ends else len(units)
    count = 1
    while count < first_end and fits(count + 1):
        count += 1
    return count


def _first_sentence(units: Sequence[Unit]) -> int:
    for index, unit in enumerate(units):
        if unit.ends_sentence:
            return index + 1
    return len(units)
