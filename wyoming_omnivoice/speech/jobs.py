"""The values the worker and its schedulers share: jobs, calls, their errors."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wyoming_omnivoice.speech.pcm import Audio
from wyoming_omnivoice.voices.engine_thread import EngineThreadStopped

if TYPE_CHECKING:
    from wyoming_omnivoice import Engine, SynthesisRequest

__all__ = ["Audio", "BusyError", "Call", "Job", "Prepare", "WorkerStoppedError", "resolve"]


class BusyError(RuntimeError):
    """The worker's queue is full."""


class WorkerStoppedError(EngineThreadStopped):
    """The worker is stopped (shutting down, or it died)."""


#: What a job does on the worker's thread before its request decodes (a voice's anchor
#: built and put in): ``prepare(engine, request)`` -> the request to decode.
Prepare = Callable[["Engine", "SynthesisRequest"], "SynthesisRequest"]


@dataclass(eq=False)
class Job:
    """One request handed to the worker, with the futures the event loop waits on."""

    request: SynthesisRequest
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Audio] = field(repr=False)
    started: asyncio.Future[None] = field(repr=False)
    cancelled: bool = False
    submitted_at: float = field(default_factory=time.monotonic)
    #: Still to do on the worker's thread before the request can decode (None: ready).
    prepare: Prepare | None = field(default=None, repr=False)

    def cancel(self) -> None:
        """Drop the job if it has not started; discard its result otherwise (loop thread)."""
        self.cancelled = True
        if not self.future.done():
            self.future.cancel()
        if not self.started.done():
            self.started.cancel()


@dataclass(eq=False)
class Call:
    """Engine work other than synthesis, run on the worker thread."""

    run: Callable[[Engine], Any]
    future: concurrent.futures.Future[Any]
    submitted_at: float = field(default_factory=time.monotonic)
    #: Yields to requests at every step boundary (step scheduling).
    background: bool = False


def resolve(future: asyncio.Future[Any] | concurrent.futures.Future[Any], result: Any = None,
             error: BaseException | None = None) -> None:
    """Settle a future unless it is done (cancelled by its waiter, say)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
