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
``info``, ``synthesize-stopped``, an empty audio cycle). A stream still open is an
:class:`OpenStream` (its request, and with streaming disabled the text it collects).
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wyoming.event import Event

from wyoming_omnivoice.speech import AudioPiece, PlayClock, Speech
from wyoming_omnivoice.voices import VoicePreset


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


@dataclass(eq=False)
class Request:
    """One one-shot request or one stream on a connection."""

    kind: Kind
    voice: VoicePreset
    pcm: PcmBuffer
    #: The speech service's side of the request (None: refused before it was admitted).
    speech: Speech | None = None
    state: RequestState = RequestState.ACTIVE
    #: When the client runs out of audio: the gap guard's clock, shared with the pacing
    #: of the speech service (``speech.clock``).
    clock: PlayClock = field(default_factory=PlayClock)
    #: The reply's lead-in was written (``--lead-in-ms``: once, before its first audio).
    lead_in_sent: bool = False

    @property
    def active(self) -> bool:
        return self.state is RequestState.ACTIVE

    def fail(self) -> None:
        """An error was sent: what is left of the request is dropped (its ending is not)."""
        if self.state is RequestState.ACTIVE:
            self.state = RequestState.FAILED
            if self.speech is not None:
                self.speech.stop()

    def finish(self) -> None:
        """Its ending was written or its client left: the request's slot is free."""
        self.state = RequestState.FINISHED
        if self.speech is not None:
            self.speech.close()


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
    #: The speech service's piece: the pacing may let it speak the pieces after it
    #: (``source.run``) or have an earlier one speak it (``source.absorbed``).
    source: AudioPiece | None = None


@dataclass(eq=False)
class Reply:
    """Events written in order with the audio (an error, info, an ending)."""

    events: list[Event]
    #: The request this reply ends (its slot is released once the reply is written).
    ends: Request | None = None


@dataclass(eq=False)
class OpenStream:
    """The stream a connection has open (``synthesize-start`` seen, no stop yet)."""

    request: Request
    #: The language tag its ``synthesize-start`` named (reading: ``pt-BR``), if any.
    language: str | None = None
    #: Streaming disabled: the compatibility ``synthesize`` copy, once it came.
    compat_text: str | None = None
    #: Streaming disabled: the text collected, spoken as one at the stop, and its length.
    collected: list[str] = field(default_factory=list)
    length: int = 0
