"""How many requests are served at once, and how many have work for the worker right now.

- :class:`RequestSlots`: requests in service (one-shot or stream), at most
  ``--max-concurrent``; one more is told the server is busy.
- :class:`Demand`: requests with a piece of text queued or decoding: what the worker's batch
  window waits for (an open stream between sentences has none, so a lone request never
  waits for it).

Both are changed on the event loop thread; the worker thread reads ``len(demand)``.
"""

from __future__ import annotations


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
