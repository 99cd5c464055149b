"""How many requests are served at once, and how many have work for the worker right now.

The one admission layer of every protocol (:meth:`.service.SpeechService.one_shot` and
``open_stream`` admit through it):

- :class:`RequestSlots`: requests in service (one-shot or stream), at most
  ``--max-concurrent``; one more is told the server is busy.
- :class:`WaitingLine`: requests of one kind that wait their turn instead (the HTTP side's
  syntheses and its other engine work), a few at a time, in a bounded line; a request in
  the line then takes its slot as any other.
- :class:`Demand`: requests with a piece of text queued or decoding: what the worker's batch
  window waits for (an open stream between sentences has none, so a lone request never
  waits for it).

They are changed on the event loop thread; the worker thread reads ``len(demand)``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from wyoming_omnivoice.speech.errors import BUSY, RequestError


class RequestSlots:
    """Requests in service, at most ``limit``; loop thread only."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: set[object] = set()

    @property
    def active(self) -> int:
        return len(self._held)

    def try_acquire(self, request: object) -> bool:
        if request in self._held:
            return True
        if len(self._held) >= self.limit:
            return False
        self._held.add(request)
        return True

    def release(self, request: object) -> None:
        self._held.discard(request)


class WaitingLine:
    """At most ``limit`` of one kind of work at once, in arrival order; up to
    ``max_waiting`` wait for their turn, one more is told the server is busy (``what``
    names the work and ``limit_name`` the limit in that message). Loop thread only."""

    def __init__(self, limit: int, max_waiting: int, *, what: str, limit_name: str) -> None:
        self.limit = limit
        self.max_waiting = max_waiting
        self.what = what
        self.limit_name = limit_name
        self._turns = asyncio.Semaphore(limit)
        self._waiting = 0

    async def enter(self) -> None:
        """Wait for a turn (RequestError ``busy`` when the line is full)."""
        if self._waiting >= self.max_waiting:
            raise RequestError(f"{self._waiting} {self.what} are waiting ({self.limit_name}); "
                               "try again shortly", BUSY)
        self._waiting += 1
        try:
            await self._turns.acquire()
        finally:
            self._waiting -= 1

    def leave(self) -> None:
        self._turns.release()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """A turn for the work inside (:meth:`enter`, then :meth:`leave`)."""
        await self.enter()
        try:
            yield
        finally:
            self.leave()


class Demand:
    """Requests with a piece of text queued or decoding (see the module docstring)."""

    def __init__(self) -> None:
        self._pieces: dict[object, int] = {}

    def __len__(self) -> int:
        return len(self._pieces)

    def enter(self, request: object) -> None:
        self._pieces[request] = self._pieces.get(request, 0) + 1

    def leave(self, request: object) -> None:
        left = self._pieces.get(request, 0) - 1
        if left > 0:
            self._pieces[request] = left
        else:
            self._pieces.pop(request, None)
