"""A connection's answers, written in the order of its requests.

Everything a connection sends goes through one :class:`OrderedOutput`: the audio of each
piece of text (written when the worker has made it, while later pieces are decoded) and
replies (an error, ``info``, ``synthesize-stopped``, an empty audio cycle). One sender task
writes them in order, so an ``info`` never lands inside an open audio cycle and answers keep
the order of the requests.

The queue is bounded: a client that sends requests without reading the answers (each
``describe`` adds an ``info``) can have at most :data:`MAX_QUEUED_REPLIES` replies waiting.
One more closes that connection (:class:`OutputOverflow`); nobody else notices. Pieces of
text are bounded already, by ``--max-text-length`` and ``--max-concurrent``.

A reply's first audio cycle opens with the lead-in (``--lead-in-ms``: silence for
satellites whose speaker wakes late, :mod:`.gap_guard`). While a piece is still decoding,
the gap guard (:mod:`.gap_guard`, ``--max-gap``) sends short silences inside its audio
cycle, so the client never waits longer than that with nothing to play. A piece the speech
service's pacing let an earlier piece speak (``source.absorbed``) writes nothing; the
earlier piece ends its audio cycle where the last piece it spoke would have
(``source.run``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event

from wyoming_omnivoice.speech import CHANNELS, SAMPLE_WIDTH, Audio, audio_to_pcm
from wyoming_omnivoice.wyoming_protocol.connection import Connection
from wyoming_omnivoice.wyoming_protocol.errors import (
    INTERNAL_ERROR,
    RequestError,
    error_event,
    request_error_for,
)
from wyoming_omnivoice.wyoming_protocol.gap_guard import GapGuard
from wyoming_omnivoice.wyoming_protocol.requests import CycleState, Piece, Reply, Request

_LOGGER = logging.getLogger(__name__)

#: Replies (events other than audio) a connection may have waiting to be written.
MAX_QUEUED_REPLIES = 64


class OutputOverflow(Exception):
    """The client has more unanswered requests than the queue holds."""


def audio_start_event(rate: int) -> Event:
    return AudioStart(rate=rate, width=SAMPLE_WIDTH, channels=CHANNELS).event()


def empty_cycle(rate: int) -> list[Event]:
    """An audio cycle without audio: the ending of a request that is declined."""
    return [audio_start_event(rate), AudioStop().event()]


#: Length of the silence that answers a request with nothing to say (blank text).
NOTHING_TO_SAY_SECONDS = 0.02


def silent_cycle(rate: int) -> list[Event]:
    """The answer to a request with nothing to say: an audio cycle with a few ms of silence.

    Not an empty cycle: Home Assistant converts the audio it receives (to mp3 by default)
    and tags the file it caches; an mp3 made of no samples has no MPEG frame, so tagging
    it logs an error in Home Assistant. 20 ms of silence gives a valid file of each format.
    """
    samples = max(1, int(rate * NOTHING_TO_SAY_SECONDS))
    chunk = AudioChunk(rate=rate, width=SAMPLE_WIDTH, channels=CHANNELS,
                       audio=bytes(samples * SAMPLE_WIDTH * CHANNELS))
    return [audio_start_event(rate), chunk.event(), AudioStop().event()]


class OrderedOutput:
    """The ordered, bounded output of one connection."""

    def __init__(self, connection: Connection, sample_rate: int, *,
                 finish: Callable[[Request], None], abort: Callable[[], None],
                 guard: GapGuard | None = None,
                 write_silence: Callable[[Event, float], Awaitable[None]] | None = None,
                 lead_in_s: float = 0.0) -> None:
        self._connection = connection
        self._rate = sample_rate
        self._guard = guard if guard is not None and guard.enabled else None
        #: Silence before each reply's first audio (``--lead-in-ms``), seconds.
        self._lead_in_s = lead_in_s
        #: Writes a chunk of silence (the metrics count it apart from real audio).
        self._write_silence = write_silence
        self._finish = finish
        self._abort = abort
        self._items: deque[Piece | Reply] = deque()
        self._replies = 0
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._writing = False
        #: Why pieces are cancelled, when it is not the client's doing (the shutdown).
        self.cancel_reason: RequestError | None = None

    @property
    def busy(self) -> bool:
        """Something is queued or being written."""
        return self._writing or bool(self._items)

    def put(self, item: Piece | Reply) -> None:
        """Queue an item (loop thread); :class:`OutputOverflow` when too many replies wait."""
        if isinstance(item, Reply):
            if self._replies >= MAX_QUEUED_REPLIES:
                raise OutputOverflow(
                    f"{MAX_QUEUED_REPLIES} answers are waiting for the client to read them")
            self._replies += 1
        self._items.append(item)
        self._wakeup.set()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._send_loop())

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def flushed(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until everything queued is written."""
        async def written() -> None:
            while self.busy and self._task is not None and not self._task.done():
                await asyncio.sleep(0.02)

        try:
            await asyncio.wait_for(written(), timeout)
        except TimeoutError:
            return False
        return not self.busy

    # ---- the sender task -------------------------------------------------------------

    async def _send_loop(self) -> None:
        try:
            while True:
                while not self._items:
                    self._wakeup.clear()
                    await self._wakeup.wait()
                item = self._items.popleft()
                self._writing = True
                if isinstance(item, Reply):
                    self._replies -= 1
                    for event in item.events:
                        await self._write(event)
                    if item.ends is not None:
                        self._finish(item.ends)
                else:
                    await self._send_piece(item)
                self._writing = False
        except ConnectionError as err:
            _LOGGER.debug("Client gone while sending: %s", err)
            self._abort()
        except Exception:
            _LOGGER.exception("Unexpected error while sending; closing the connection")
            self._abort()

    async def _write(self, event: Event) -> None:
        await self._connection.write_event(event)

    async def _send_piece(self, piece: Piece) -> None:
        request = piece.request
        audio = None
        if piece.task is None or not request.active:
            if piece.task is not None:
                piece.task.cancel()
        else:
            try:
                audio = await self._wait_for_audio(piece)
            except asyncio.CancelledError:
                if self._connection.closed:
                    raise
                if request.active:  # else: dropped because its request failed meanwhile
                    await self._fail(request, self.cancel_reason or RequestError(
                        "Synthesis was cancelled", INTERNAL_ERROR))
            except Exception as err:  # engine or queue failure: fail this request only
                await self._fail(request, request_error_for(err))
        pcm = request.pcm
        source = piece.source
        absorbed = source is not None and source.absorbed
        closes = piece.closes if source is None or source.run <= 1 else \
            self._closes_after(piece, source.run - 1)
        if audio is not None and request.active and not absorbed:
            if piece.opens and pcm.cycle is not CycleState.OPEN:  # (silence may have opened it)
                await self._open_cycle(request)
            for chunk in pcm.push(audio_to_pcm(audio)):
                await self._write_chunk(request, chunk)
        if pcm.cycle is CycleState.OPEN and ((closes and not absorbed) or not request.active):
            rest = pcm.close()
            if rest:
                await self._write_chunk(request, rest)
            await self._write(AudioStop().event())
        if piece.ends_request:
            if pcm.cycle is CycleState.NOT_STARTED:  # failed before any audio
                for event in empty_cycle(self._rate):
                    await self._write(event)
            self._finish(request)

    async def _fail(self, request: Request, err: RequestError) -> None:
        request.fail()
        await self._write(error_event(err))

    def _closes_after(self, piece: Piece, later: int) -> bool:
        """Whether the ``later``-th queued piece of ``piece``'s request after it closes its
        cycle (the last piece ``piece`` speaks for)."""
        seen = 0
        for item in self._items:
            if isinstance(item, Piece) and item.request is piece.request:
                seen += 1
                if seen == later:
                    return item.closes
        return piece.closes

    async def _write_chunk(self, request: Request, pcm: bytes) -> None:
        await self._write(self._chunk_event(pcm))
        request.clock.sent(len(pcm) / (SAMPLE_WIDTH * CHANNELS * self._rate))

    def _chunk_event(self, pcm: bytes) -> Event:
        return AudioChunk(rate=self._rate, width=SAMPLE_WIDTH, channels=CHANNELS,
                          audio=pcm).event()

    # ---- the lead-in and the gap guard ----------------------------------------------

    async def _open_cycle(self, request: Request) -> None:
        """``audio-start``; in the reply's first cycle, then its lead-in (``--lead-in-ms``),
        whether its first speech or the gap guard's first silence opens it."""
        await self._write(audio_start_event(self._rate))
        request.pcm.open()
        if self._lead_in_s <= 0 or request.lead_in_sent:
            return
        request.lead_in_sent = True
        # Whole chunks (like the guard's), so every chunk but a cycle's last is whole.
        chunk = bytes(request.pcm.chunk_bytes)
        chunk_s = len(chunk) / (SAMPLE_WIDTH * CHANNELS * self._rate)
        for _ in range(max(1, round(self._lead_in_s / chunk_s))):
            await self._write_silent_chunk(request, chunk)
        _LOGGER.debug("Lead-in: %.0f ms of silence before the reply's first audio",
                      self._lead_in_s * 1000)

    async def _write_silent_chunk(self, request: Request, pcm: bytes) -> None:
        """A chunk of silence: audio for the client's play clock, silence for the metrics."""
        seconds = len(pcm) / (SAMPLE_WIDTH * CHANNELS * self._rate)
        event = self._chunk_event(pcm)
        if self._write_silence is not None:
            await self._write_silence(event, seconds)
        else:
            await self._write(event)
        request.clock.sent(seconds, silence=True)

    async def _wait_for_audio(self, piece: Piece) -> Audio:
        """The piece's audio; while it decodes, silence whenever the client would wait too
        long with nothing to play (only where this piece may open or continue a cycle)."""
        task = piece.task
        assert task is not None
        guard = self._guard
        request = piece.request
        if piece.source is not None and piece.source.absorbed:
            guard = None  # another piece speaks its text
        while guard is not None and not task.done() and request.active:
            if not (piece.opens or request.pcm.cycle is CycleState.OPEN):
                break
            due = guard.due_in(request.clock)
            if due is not None and due > 0:
                await asyncio.wait([task], timeout=due)
                continue
            await self._send_silence(request, guard.step_s)
        return await task

    async def _send_silence(self, request: Request, seconds: float) -> None:
        pcm = request.pcm
        if pcm.cycle is not CycleState.OPEN:
            await self._open_cycle(request)
        rest = pcm.flush()  # the real audio still held back goes first, on its own
        if rest:
            await self._write_chunk(request, rest)
        # Whole chunks of silence, so what the client gets is audio, then silence, exactly.
        chunk = bytes(pcm.chunk_bytes)
        chunk_s = len(chunk) / (SAMPLE_WIDTH * CHANNELS * self._rate)
        for _ in range(max(1, round(seconds / chunk_s))):
            await self._write_silent_chunk(request, chunk)
        _LOGGER.debug("Gap guard: %.2f s of silence while a piece decodes", seconds)
