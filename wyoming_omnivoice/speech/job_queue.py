"""The worker's queues: jobs waiting, engine calls, the jobs taken, under one lock.

:class:`JobQueue` is what the event loop (and other threads) hand the worker, and what the
worker's schedulers (:mod:`.step_scheduler`, :mod:`.batch_scheduler`) take work from:

- any thread: :meth:`~JobQueue.put` a job (bounded: ``BusyError`` beyond ``max_queued``
  jobs queued or taken), :meth:`~JobQueue.put_call` a call (``background`` calls wait in a
  queue of their own), :meth:`~JobQueue.stop`;
- the worker thread, holding :attr:`~JobQueue.changed`: :meth:`~JobQueue.drop_cancelled`,
  :meth:`~JobQueue.wait_for_company` (the batch window), :meth:`~JobQueue.take` jobs,
  :meth:`~JobQueue.next_call`, :meth:`~JobQueue.call_due`;
- the worker thread: :meth:`~JobQueue.started`, :meth:`~JobQueue.deliver` (or
  :func:`report_failure` and the error) and :meth:`~JobQueue.done` for the jobs taken,
  :meth:`~JobQueue.run_call` for a call; :meth:`~JobQueue.close` when the thread dies (every
  job and call left, for their waiters to learn it).

A job that has something to do on the worker's thread before it decodes (``Job.prepare``:
its voice's anchor, built in the request's own job) waits in the queue, not ready, with an
urgent call that prepares it: the call runs by the urgent calls' rules (when no request
decodes, before the jobs queued; :meth:`~JobQueue.call_due`), and the job is taken once it
is ready. A preparation that needs what the background call running now makes
(``AfterBackground``) runs again as soon as that call has ended
(:meth:`~JobQueue.background_ended`).

The worker's counters (batches, jobs done, the largest batch, calls done) live here too
(:class:`WorkerCounts`), so each scheduler keeps them the same way.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from wyoming_omnivoice.speech.jobs import Audio, BusyError, Call, Job, WorkerStoppedError, resolve
from wyoming_omnivoice.voices.engine_thread import AfterBackground

if TYPE_CHECKING:
    from wyoming_omnivoice import Engine

# The worker's own log: the queue is the worker's.
_LOGGER = logging.getLogger("wyoming_omnivoice.speech.worker")

#: A call waits at most this long for a quiet moment before jobs stop starting ahead of it.
CALL_MAX_WAIT_S = 2.0


class Deliver(Protocol):
    """How a scheduler hands a job its outcome (:meth:`JobQueue.deliver`, unless the
    worker says otherwise)."""

    def __call__(self, job: Job, result: Audio | None = None,
                 error: BaseException | None = None) -> None: ...


class Decoded(Protocol):
    """Told after every decode: how many requests, its seconds, each request's target
    frames and audio samples (the worker learns its speed; metrics)."""

    def __call__(self, size: int, seconds: float, frames: list[int],
                 samples: list[int]) -> None: ...


@dataclass
class WorkerCounts:
    """What the worker has done so far (metrics, tests)."""

    batches: int = 0
    jobs_done: int = 0
    largest_batch: int = 0
    calls_done: int = 0


class JobQueue:
    """Jobs waiting and taken, urgent and background calls (see the module docstring)."""

    def __init__(self, *, max_queued: int, max_batch: int, batch_window_s: float,
                 in_flight: Callable[[], int],
                 call_max_wait_s: float = CALL_MAX_WAIT_S) -> None:
        self.max_queued = max_queued
        self.max_batch = max_batch
        self.batch_window_s = batch_window_s
        self.in_flight = in_flight
        self.call_max_wait_s = call_max_wait_s
        #: Held while the queues are read or changed (reentrant); notified when work comes.
        self.changed = threading.Condition()
        self.counts = WorkerCounts()
        self._pending: deque[Job] = deque()
        self._calls: deque[Call] = deque()
        #: Background calls (step scheduling): only when no request waits or decodes.
        self._background: deque[Call] = deque()
        #: Jobs taken by a scheduler and not done yet.
        self._taken: list[Job] = []
        #: Calls running now (a background call's decode runs urgent ones at its steps).
        self._running_calls: list[Call] = []
        #: Preparations that run again once the background call running now has ended.
        self._after_background: list[Call] = []
        self._accepting = False
        self._stopping = False

    # ---- state (any thread) ------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """:meth:`stop` was called."""
        return self._stopping

    @property
    def queued(self) -> int:
        """Jobs waiting (not taken yet)."""
        with self.changed:
            return len(self._pending)

    @property
    def load(self) -> int:
        """Jobs waiting or taken."""
        with self.changed:
            return len(self._pending) + len(self._taken)

    # ---- any thread --------------------------------------------------------------------

    def open(self) -> None:
        """Accept work from now on (the worker thread has started)."""
        with self.changed:
            self._accepting = True

    def put(self, job: Job) -> None:
        """Queue ``job``; ``WorkerStoppedError`` when not accepting, ``BusyError`` when
        full."""
        with self.changed:
            self._check_accepting()
            if len(self._pending) + len(self._taken) >= self.max_queued:
                raise BusyError(
                    f"the server is busy ({self.max_queued} synthesis jobs queued or running)")
            self._pending.append(job)
            if job.prepare is not None:
                self._calls.append(self._preparation(job))
            self.changed.notify()

    def put_call(self, call: Call) -> None:
        """Queue ``call`` (a background one behind the others); ``WorkerStoppedError`` when
        not accepting."""
        with self.changed:
            self._check_accepting()
            (self._background if call.background else self._calls).append(call)
            self.changed.notify()

    def stop(self) -> tuple[list[Job], list[Call]]:
        """Stop accepting; the jobs and calls still waiting (taken jobs finish)."""
        with self.changed:
            self._stopping = True
            self._accepting = False
            jobs = list(self._pending)
            calls = list(self._calls) + list(self._background)
            self._pending.clear()
            self._calls.clear()
            self._background.clear()
            self._after_background.clear()
            self.changed.notify_all()
        return jobs, calls

    def close(self) -> tuple[list[Job], list[Call]]:
        """The worker thread died: every job (waiting or taken) and call left."""
        with self.changed:
            self._accepting = False
            jobs = self._taken + list(self._pending)
            calls = list(self._calls) + list(self._background)
            calls += self._running_calls
            self._taken = []
            self._pending.clear()
            self._calls.clear()
            self._background.clear()
            self._after_background.clear()
            self._running_calls = []
        return jobs, calls

    def _check_accepting(self) -> None:
        if not self._accepting:
            raise WorkerStoppedError("the synthesis worker is not running")

    # ---- the worker thread, holding ``changed`` -----------------------------------------

    @property
    def waiting(self) -> int:
        """Jobs waiting and ready to decode (hold :attr:`changed`)."""
        return len(self._ready())

    def _ready(self) -> list[Job]:
        return [job for job in self._pending if job.prepare is None]

    @property
    def has_calls(self) -> bool:
        """An urgent call waits (hold :attr:`changed`)."""
        return bool(self._calls)

    def drop_cancelled(self) -> None:
        """Waiting jobs cancelled by their requests leave the queue."""
        with self.changed:
            if any(job.cancelled for job in self._pending):
                kept = [job for job in self._pending if not job.cancelled]
                _LOGGER.debug("Dropped %d cancelled job(s)", len(self._pending) - len(kept))
                self._pending = deque(kept)

    def wait_for_company(self) -> None:
        """The batch window: with fewer jobs queued than requests in flight (and than a
        batch holds), wait up to ``batch_window_s`` for theirs, so they share one decode."""
        with self.changed:
            if self.batch_window_s <= 0 or \
                    self.waiting >= min(self.max_batch, self.in_flight()):
                return
            _LOGGER.debug("Batch window: %d job(s) queued, waiting up to %.1f ms for the "
                          "other requests in flight", self.waiting,
                          self.batch_window_s * 1000)
            deadline = time.monotonic() + self.batch_window_s
            while self.waiting < min(self.max_batch, self.in_flight()):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopping:
                    break
                self.changed.wait(remaining)
            self.drop_cancelled()

    def take(self, count: int) -> list[Job]:
        """Up to ``count`` waiting jobs that are ready, oldest first; they are taken until
        :meth:`done`."""
        with self.changed:
            jobs = self._ready()[:count]
            for job in jobs:
                self._pending.remove(job)
            self._taken += jobs
            return jobs

    def next_call(self, *, background: bool = False) -> Call | None:
        """The oldest urgent call; with ``background``, else the oldest background call."""
        with self.changed:
            if self._calls:
                return self._calls.popleft()
            if background and self._background:
                return self._background.popleft()
            return None

    def call_due(self) -> bool:
        """An urgent call has waited :attr:`call_max_wait_s`: no job starts before it."""
        with self.changed:
            return bool(self._calls) and \
                time.monotonic() - self._calls[0].submitted_at > self.call_max_wait_s

    def background_ended(self) -> None:
        """The background call has ended: the preparations that waited for it come first."""
        with self.changed:
            self._calls.extendleft(reversed(self._after_background))
            self._after_background = []
            self.changed.notify_all()

    def _preparation(self, job: Job) -> Call:
        """The urgent call that makes ``job`` ready (see the module docstring)."""
        return Call(run=lambda engine: self._prepare(job, engine),
                    future=concurrent.futures.Future())

    def _prepare(self, job: Job, engine: Engine) -> None:
        prepare = job.prepare
        if prepare is None or job.cancelled:
            return
        try:
            request = prepare(engine, job.request)
        except AfterBackground:
            with self.changed:
                self._after_background.append(self._preparation(job))
            return
        except Exception as err:
            with self.changed:
                if job not in self._pending:
                    return  # dropped meanwhile (stopping)
                self._pending.remove(job)
            report_failure(err)
            self.deliver(job, error=err)
            return
        with self.changed:
            job.request = request
            job.prepare = None
            self.changed.notify_all()

    # ---- the worker thread -------------------------------------------------------------

    def done(self, job: Job) -> None:
        """``job`` has left the worker (delivered, failed or cancelled)."""
        with self.changed:
            if job in self._taken:
                self._taken.remove(job)

    @staticmethod
    def started(job: Job) -> None:
        """Tell ``job``'s waiter that its decode has started."""
        with contextlib.suppress(RuntimeError):  # the loop is closed
            job.loop.call_soon_threadsafe(resolve, job.started, None, None)

    @staticmethod
    def deliver(job: Job, result: Audio | None = None,
                error: BaseException | None = None) -> None:
        """Hand ``job`` its audio or its error (on its event loop)."""
        try:
            job.loop.call_soon_threadsafe(resolve, job.started, None, None)
            job.loop.call_soon_threadsafe(resolve, job.future, result, error)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    def run_call(self, call: Call, engine: Engine) -> None:
        """``call`` run on this (the worker's) thread; its future gets the outcome."""
        if not call.future.set_running_or_notify_cancel():
            return
        with self.changed:
            self._running_calls.append(call)
        try:
            result = call.run(engine)
        except Exception as err:
            resolve(call.future, error=err)
        else:
            resolve(call.future, result=result)
        # (a BaseException leaves it running: :meth:`close` hands it to its waiter)
        with self.changed:
            self._running_calls.remove(call)
        self.counts.calls_done += 1


def report_failure(err: Exception) -> None:
    """The log line of a request the engine failed (a refused request is no error)."""
    if isinstance(err, ValueError):
        _LOGGER.info("Request rejected by the engine: %s", err)
    else:
        _LOGGER.error("Synthesis failed: %s", err, exc_info=True)
