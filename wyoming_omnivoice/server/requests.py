"""One request on a connection: its state, its audio cycle and the items written for it.

A request is a one-shot ``synthesize`` or a stream (``synthesize-start`` ... ``-stop``).
Its life is explicit (:class:`RequestState`): it is *active* while its text is turned
into audio, *failed* once an error was sent (what is left of it is dropped, but its
ending is still written), *finished* when its ending was written or its client left; only
then its concurrency slot is free. The audio of the open ``audio-start`` ... ``audio-stop``
cycle goes through a :class:`PcmBuffer`, which sends whole chunks and keeps the remainder
for the next piece of the same cycle.

The connection's ordered output is a queue of :class:`Piece` (a piece of text whose audio
is written when it is ready) and :class:`Reply` (events written as they are: an error,
``info``, ``synthesize-stopped``, an empty audio cycle).
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wyoming.event import Event

from wyoming_omnivoice.server.gap_guard import PlayClock
from wyoming_omnivoice.speech.pacing import Unit
from wyoming_omnivoice.voices.catalog import VoicePreset

Audio = np.ndarray[Any, np.dtype[np.float32]]


class RequestState(enum.Enum):
    ACTIVE = "active"
    FAILED = "failed"
    FINISHED = "finished"


class Kind(enum.Enum):
    ONE_SHOT = "one-shot"
    STREAM = "stream"


class CycleState(enum.Enum):
    NOT_STARTED = "not started"
    OPEN = "open"
    ENDED = "ended"


class PcmBuffer:
    """16-bit PCM of one audio cycle: whole chunks out, the remainder kept for later."""

    def __init__(self, samples_per_chunk: int, sample_width: int = 2) -> None:
        self.chunk_bytes = samples_per_chunk * sample_width
        self.cycle = CycleState.NOT_STARTED
        self._rest = b""

    def open(self) -> None:
        self.cycle = CycleState.OPEN
        self._rest = b""

    def push(self, pcm: bytes) -> list[bytes]:
        """Add audio to the open cycle; the whole chunks that are ready to send."""
        data = self._rest + pcm
        full = len(data) - len(data) % self.chunk_bytes
        self._rest = data[full:]
        return [data[offset:offset + self.chunk_bytes]
                for offset in range(0, full, self.chunk_bytes)]

    def flush(self) -> bytes:
        """The remainder, sent now as a short chunk (before silence); the cycle stays open."""
        rest, self._rest = self._rest, b""
        return rest

    def close(self) -> bytes:
        """End the cycle; the remainder still to send (possibly empty)."""
        rest, self._rest = self._rest, b""
        self.cycle = CycleState.ENDED
        return rest


def audio_to_pcm(audio: np.ndarray[Any, np.dtype[Any]]) -> bytes:
    """float32 [-1, 1] -> 16-bit little-endian PCM."""
    samples = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
    return np.round(samples * 32767.0).astype("<i2").tobytes()


@dataclass(eq=False)
class Request:
    """One one-shot request or one stream on a connection."""

    kind: Kind
    voice: VoicePreset
    pcm: PcmBuffer
    ssml: bool = False
    state: RequestState = RequestState.ACTIVE
    #: Characters received so far (streams are bounded by --max-text-length too).
    text_length: int = 0
    #: Resolved once the latest piece was taken by the worker: the next one is submitted
    #: then, so the worker decodes piece N+1 while piece N is written.
    last_started: asyncio.Future[None] | None = None
    #: When the client runs out of audio (the gap guard's clock).
    clock: PlayClock = field(default_factory=PlayClock)
    #: Pieces queued but not yet planned (the next planned piece may take several).
    waiting: list[Piece] = field(default_factory=list)
    #: The last planned piece: when its decode started, its predicted decode and audio s.
    planned: PlannedPiece | None = None

    @property
    def active(self) -> bool:
        return self.state is RequestState.ACTIVE

    def fail(self) -> None:
        if self.state is RequestState.ACTIVE:
            self.state = RequestState.FAILED


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


@dataclass(eq=False)
class Piece:
    """A piece of text whose audio is written as (part of) one audio cycle."""

    request: Request
    text: str
    task: asyncio.Task[np.ndarray[Any, np.dtype[np.float32]]] | None = None
    #: Opens the audio cycle / closes it (a one-shot: first / last piece; a stream: both).
    opens: bool = True
    closes: bool = True
    #: The one-shot's last piece: its ending (``audio-stop``) is written after it whatever
    #: happened before.
    ends_request: bool = False
    #: What the pacing plans with (a clause or sentence); None: spoken as it is.
    unit: Unit | None = None
    #: Spoken by an earlier piece that took its text: it writes nothing itself.
    absorbed: bool = False


@dataclass(eq=False)
class Reply:
    """Events written in order with the audio (an error, info, an ending)."""

    events: list[Event]
    #: The request this reply ends (its slot is released once the reply is written).
    ends: Request | None = None
