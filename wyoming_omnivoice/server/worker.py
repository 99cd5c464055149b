"""The inference worker: one thread owns the engine; asyncio code submits jobs to it.

- A job is one synthesis request (usually one sentence). ``submit`` is called from the event
  loop and returns at once; the result arrives on the job's asyncio future.
- When the worker becomes free it takes every pending job (up to ``max_batch``) and decodes
  them together with ``Engine.synthesize_batch``. A lone job starts immediately. Only when
  more requests are known to be in flight (``in_flight()`` says so) does the worker wait a
  short window (at most 10 ms) for their jobs, so concurrent clients share one decode.
- A cancelled job (its client went away) is dropped before it starts; a running decode cannot
  be interrupted, its result is discarded.
- The number of queued + running jobs is bounded: beyond it ``submit`` raises
  :class:`BusyError` instead of letting work pile up.
- An exception from the engine fails only the jobs concerned: a failed batch is retried item
  by item so one bad request cannot fail its neighbours. The worker thread survives.
- If the thread dies all the same (a ``BaseException``), every queued and running job gets
  :class:`WorkerStoppedError`, ``alive`` turns false (``info`` then reports the program as
  not installed, so health checks fail) and ``on_death`` is called (the server exits 1).

Fault injection for tests (off unless the environment says so): with
``WYOMING_OMNIVOICE_FAULT_INJECTION=1`` a request whose text contains ``faultengine``
raises an onnxruntime-style ``RuntimeError``, ``faultmemory`` raises ``MemoryError`` and
``faultdeath`` kills the worker thread. Nothing else changes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_LOGGER = logging.getLogger(__name__)

MAX_WINDOW_S = 0.010
FAULT_INJECTION_ENV = "WYOMING_OMNIVOICE_FAULT_INJECTION"
_FAULTS_ENABLED = os.environ.get(FAULT_INJECTION_ENV) == "1"


class InjectedWorkerDeath(BaseException):
    """Raised by fault injection (tests only) to kill the worker thread."""


def _inject_faults(requests: list[Any]) -> None:
    for request in requests:
        text = str(getattr(request, "text", "")).lower()
        if "faultengine" in text:
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : injected fault "
                               f"({FAULT_INJECTION_ENV})")
        if "faultmemory" in text:
            raise MemoryError(f"injected out-of-memory ({FAULT_INJECTION_ENV})")
        if "faultdeath" in text:
            raise InjectedWorkerDeath(f"injected worker death ({FAULT_INJECTION_ENV})")


class BusyError(RuntimeError):
    """The worker's queue is full."""


class WorkerStoppedError(RuntimeError):
    """The worker is stopped (shutting down, or it died)."""


@dataclass(eq=False)
class Job:
    """One request handed to the worker, with the futures the event loop waits on."""

    request: Any
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future = field(repr=False)
    started: asyncio.Future = field(repr=False)
    cancelled: bool = False
    submitted_at: float = field(default_factory=time.monotonic)

    def cancel(self) -> None:
        """Drop the job if it has not started; discard its result otherwise (loop thread)."""
        self.cancelled = True
        if not self.future.done():
            self.future.cancel()
        if not self.started.done():
            self.started.cancel()


def _resolve(future: asyncio.Future, result: Any = None,
             error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class InferenceWorker:
    """A thread that owns an engine and decodes submitted requests in batches."""

    def __init__(
        self,
        engine: Any,
        *,
        options: Any = None,
        max_queued: int = 16,
        max_batch: int = 8,
        batch_window_s: float = 0.005,
        in_flight: Callable[[], int] | None = None,
        on_death: Callable[[BaseException], None] | None = None,
    ) -> None:
        if max_queued < 1 or max_batch < 1:
            raise ValueError("max_queued and max_batch must be at least 1")
        self.engine = engine
        self.options = options
        self.max_queued = max_queued
        self.max_batch = max_batch
        self.batch_window_s = min(max(batch_window_s, 0.0), MAX_WINDOW_S)
        self._in_flight = in_flight or (lambda: 0)
        self.on_death = on_death
        self._pending: deque[Job] = deque()
        self._running = 0
        self._cond = threading.Condition()
        self._stopping = False
        self._dead: BaseException | None = None
        self._current: list[Job] = []
        self._thread: threading.Thread | None = None
        self.batches = 0
        self.jobs_done = 0
        self.largest_batch = 0

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("worker already started")
        self._thread = threading.Thread(target=self._main, name="omnivoice-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking jobs, fail the pending ones and wait for the running decode."""
        with self._cond:
            self._stopping = True
            dropped = list(self._pending)
            self._pending.clear()
            self._cond.notify_all()
        for job in dropped:
            self._deliver(job, error=WorkerStoppedError("the server is shutting down"))
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def thread_running(self) -> bool:
        """The worker thread has not finished (e.g. still inside a decode after stop)."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._dead is None

    @property
    def load(self) -> int:
        """Jobs queued or running."""
        with self._cond:
            return len(self._pending) + self._running

    # ---- event-loop side -------------------------------------------------------------

    def submit(self, request: Any) -> Job:
        """Queue a request (call from the event loop thread)."""
        loop = asyncio.get_running_loop()
        job = Job(request=request, loop=loop, future=loop.create_future(),
                  started=loop.create_future())
        with self._cond:
            if self._dead is not None or self._stopping or self._thread is None:
                raise WorkerStoppedError("the synthesis worker is not running")
            if len(self._pending) + self._running >= self.max_queued:
                raise BusyError(
                    f"the server is busy ({self.max_queued} synthesis jobs queued or running)"
                )
            self._pending.append(job)
            self._cond.notify()
        return job

    # ---- worker thread ---------------------------------------------------------------

    def _deliver(self, job: Job, result: Any = None, error: BaseException | None = None) -> None:
        try:
            job.loop.call_soon_threadsafe(_resolve, job.started, None, None)
            job.loop.call_soon_threadsafe(_resolve, job.future, result, error)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    def _take_batch(self) -> list[Job] | None:
        """Wait for jobs; return the next batch (None when stopping)."""
        with self._cond:
            while not self._stopping:
                self._drop_cancelled()
                if self._pending:
                    break
                self._cond.wait()
            if self._stopping:
                return None
            if self.batch_window_s > 0 and len(self._pending) < self.max_batch:
                deadline = time.monotonic() + self.batch_window_s
                while len(self._pending) < min(self.max_batch, self._in_flight()):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._stopping:
                        break
                    self._cond.wait(remaining)
                self._drop_cancelled()
                if self._stopping or not self._pending:
                    return [] if not self._stopping else None
            batch = [self._pending.popleft()
                     for _ in range(min(self.max_batch, len(self._pending)))]
            self._running = len(batch)
            self._current = batch
            return batch

    def _drop_cancelled(self) -> None:
        if any(job.cancelled for job in self._pending):
            kept = [job for job in self._pending if not job.cancelled]
            _LOGGER.debug("Dropped %d cancelled job(s)", len(self._pending) - len(kept))
            self._pending = deque(kept)

    def _main(self) -> None:
        try:
            while True:
                batch = self._take_batch()
                if batch is None:
                    return
                if batch:
                    self._run_batch(batch)  # on death the except below fails this batch too
                    with self._cond:
                        self._running = 0
                        self._current = []
        except BaseException as err:  # keep the server honest: a dead worker is reported
            _LOGGER.critical("The synthesis worker died: %s", err, exc_info=True)
            with self._cond:
                self._dead = err
                dropped = self._current + list(self._pending)
                self._pending.clear()
                self._current = []
                self._running = 0
            for job in dropped:
                self._deliver(job, error=WorkerStoppedError("the synthesis worker died"))
            if self.on_death is not None:
                self.on_death(err)

    def _run_batch(self, batch: list[Job]) -> None:
        for job in batch:
            job.loop.call_soon_threadsafe(_resolve, job.started, None, None)
        started = time.monotonic()
        requests = [job.request for job in batch]
        try:
            audios = self._synthesize(requests)
        except Exception as err:
            if len(batch) == 1:
                self._report_failure(batch[0], err)
                return
            _LOGGER.warning("A batch of %d failed (%s); retrying one by one", len(batch), err)
            for job in batch:
                if job.cancelled:
                    continue
                try:
                    self._deliver(job, result=self._synthesize([job.request])[0])
                except Exception as item_err:
                    self._report_failure(job, item_err)
            return
        elapsed = time.monotonic() - started
        self.batches += 1
        self.jobs_done += len(batch)
        self.largest_batch = max(self.largest_batch, len(batch))
        _LOGGER.debug("Decoded a batch of %d in %.3f s (oldest waited %.3f s)", len(batch),
                      elapsed, started - min(job.submitted_at for job in batch))
        for job, audio in zip(batch, audios, strict=True):
            if not job.cancelled:
                self._deliver(job, result=audio)

    def _synthesize(self, requests: list[Any]) -> list[np.ndarray]:
        if _FAULTS_ENABLED:
            _inject_faults(requests)
        if len(requests) == 1:
            return [self.engine.synthesize_batch(requests, options=self.options)[0]]
        audios = self.engine.synthesize_batch(requests, options=self.options)
        if len(audios) != len(requests):
            raise RuntimeError(
                f"engine returned {len(audios)} results for a batch of {len(requests)}"
            )
        return list(audios)

    def _report_failure(self, job: Job, err: Exception) -> None:
        if isinstance(err, ValueError):
            _LOGGER.info("Request rejected by the engine: %s", err)
        else:
            _LOGGER.error("Synthesis failed: %s", err, exc_info=True)
        self._deliver(job, error=err)
