"""Stopping a background decode's forward in the middle when a request arrives.

A background decode (a voice anchor made after ready) yields to requests at every step
boundary (:func:`.stepping.between_steps`). On a CPU one fp32 forward of the real-size
backbone takes seconds, so a request that arrives just after a background forward started
would still wait for all of it. A :class:`ForwardInterrupt` passed to ``between_steps``
removes that wait: while a background step's forward runs on the worker thread, the
onnxruntime runs it makes carry ``RunOptions`` that :meth:`ForwardInterrupt.request` (any
thread: the event loop when a request is queued) sets to terminate. onnxruntime stops at
the next node; the step raises :class:`Interrupted`, changes nothing (a step is a pure
function of the decode states), the worker serves the request at the step boundary, and the
background step is run again from its start afterwards: the same codes, one partial forward
of background work lost.

Only the plain runs of the host step loop are interrupted (the CPU case; a CUDA forward is
milliseconds, and its captured CUDA graphs keep their own run options). Runs outside a
background step (the vocoder, a request's own decode served inside the step hook) never are.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Interrupted(Exception):
    """A background step's forward stopped by :meth:`ForwardInterrupt.request`; the decode
    states are unchanged and the step runs again after the step boundary."""


class ForwardInterrupt:
    """The switch that stops the background forward running now, from another thread.

    :meth:`request` may be called at any time from any thread: it stops the run in progress,
    or the next one before it starts. The worker clears it at each step boundary, before it
    serves the requests waiting (:func:`.stepping.step_boundary`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requested = False
        self._running: Any = None  # the RunOptions of the run in progress
        #: Forwards stopped so far (logs and tests).
        self.interrupted = 0

    @property
    def requested(self) -> bool:
        with self._lock:
            return self._requested

    def request(self) -> None:
        """Stop the background forward in progress (or the next one) at its next node."""
        with self._lock:
            self._requested = True
            if self._running is not None:
                self._running.terminate = True

    def clear(self) -> None:
        """The requests are about to be served: the next background forward may run."""
        with self._lock:
            self._requested = False

    @contextmanager
    def running(self, options: Any) -> Iterator[Any]:
        """Around one onnxruntime run with ``options``: raises :class:`Interrupted` at once
        when a request is already waiting, or when the run failed because it was stopped."""
        with self._lock:
            if self._requested:
                self.interrupted += 1
                raise Interrupted("a request is waiting")
            options.terminate = False
            self._running = options
        try:
            yield options
        except Exception as err:
            with self._lock:
                stopped = self._requested
                if stopped:
                    self.interrupted += 1
            if stopped:
                raise Interrupted("stopped for a request") from err
            raise
        finally:
            with self._lock:
                self._running = None
                options.terminate = False


_local = threading.local()


def armed() -> ForwardInterrupt | None:
    """The interrupt that this thread's runs answer to now (inside :func:`arm`), or None."""
    return getattr(_local, "interrupt", None)


@contextmanager
def arm(interrupt: ForwardInterrupt | None) -> Iterator[None]:
    """Runs on this thread inside the ``with`` answer to ``interrupt`` (None: to nothing)."""
    previous = armed()
    _local.interrupt = interrupt
    try:
        yield
    finally:
        _local.interrupt = previous
