"""How voices reach the engine once the server runs: work handed to the engine's thread.

The engine is not thread-safe; while the server runs one thread owns it (the speech
service's worker). Voice work that needs the engine (encoding a folder voice's reference,
building an anchor on first use) is handed over through this small interface instead of
importing the worker, so this package stays below the speech service.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from wyoming_omnivoice.engine import Engine

T = TypeVar("T")


class EngineThreadStopped(RuntimeError):
    """The engine's thread is not running (shutting down, or it died)."""


class AfterBackground(Exception):
    """Raised by work on the engine's thread that needs what the background work running
    now is making (a voice's anchor in the batch being built): it can run once that
    background call has ended, and is run again then (the thread cannot wait for itself)."""


class EngineThread(Protocol):
    """Runs ``run(engine)`` on the engine's thread; its future (any thread may ask).

    ``background``: nobody waits for it (anchors made in the background): it runs while
    no request waits, and its decodes yield to requests at every diffusion step."""

    def call(self, run: Callable[[Engine], T], *, background: bool = False
             ) -> concurrent.futures.Future[T]: ...
