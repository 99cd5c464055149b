"""The inference worker: one thread owns the engine; every other thread hands it work.

The engine is blocking and not thread-safe (docs/design.md), so once the server runs, every
engine call happens on this one thread:

- A *job* is one synthesis request (usually one sentence). ``submit`` is called from the
  event loop and returns at once; the result arrives on the job's asyncio future.
- A *call* is any other engine work, e.g. encoding the reference of a voice folder added
  while the server runs (:mod:`.voice_watch`). ``call`` may be used from any thread and
  returns a ``concurrent.futures.Future``. Calls run when no job waits or decodes (or
  once they have waited :data:`CALL_MAX_WAIT_S`, so a busy server still gets to them).
  ``call(run, background=True)`` (voice anchors made in the background) yields to every
  request at each diffusion step boundary of its decodes and resumes afterwards.
- The worker schedules diffusion steps (:mod:`.step_scheduler`): jobs are decoded in an
  engine ``SynthesisSession``, up to ``max_batch`` at once, and leave when their last step
  is done; a cancelled job leaves at the next step boundary; background calls yield to
  jobs at every step boundary. ``scheduling="step"``: a job joins the running decode at
  the next step (continuous batching). ``"gated"``: a job joins only when no request
  decodes, then with every job queued (where a forward's cost grows in proportion to its
  rows, joining only delays the requests decoding: measured on the CPU in
  docs/capacity.md). ``"auto"`` (the default): ``step`` on CUDA, ``gated`` on the CPU.
  ``"batch"`` (the former way, kept to compare): every pending job (up to ``max_batch``)
  decoded together with ``Engine.synthesize_batch`` to the end, calls between batches.
- A lone job starts immediately. Only when more requests are known to be on their way
  (``in_flight()``: requests with a piece of text queued or decoding, idle open streams not
  counted) and nothing decodes does the worker wait a short window (at most 10 ms) for
  their jobs, so concurrent clients share one decode.
- The number of queued + running jobs is bounded: beyond it ``submit`` raises
  :class:`BusyError` instead of letting work pile up.
- An exception from the engine fails only the jobs concerned: a failed batch is retried item
  by item so one bad request cannot fail its neighbours. The worker thread survives.
- If the thread dies all the same (a ``BaseException``), every queued and running job and
  call gets :class:`WorkerStoppedError`, ``alive`` turns false (``info`` then reports the
  program as not installed, so health checks fail) and ``on_death`` is called (the server
  exits 1).

Before ``start`` nothing runs on the thread, so start-up code (anchors, clone prompts,
warm-up) uses the engine directly from the main thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from wyoming_omnivoice.speech.batch_scheduler import run_batch
from wyoming_omnivoice.speech.jobs import (
    Audio,
    BusyError,
    Call,
    Job,
    WorkerStoppedError,
    resolve,
)
from wyoming_omnivoice.speech.join_check import resolve_scheduling
from wyoming_omnivoice.speech.pacing import DecodeSpeed
from wyoming_omnivoice.speech.step_scheduler import StepScheduler

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

_LOGGER = logging.getLogger(__name__)

MAX_WINDOW_S = 0.010
#: The worker's scheduling (see the module docstring).
SCHEDULING = ("auto", "step", "gated", "batch")
#: A call waits at most this long for a quiet moment before it runs between two batches.
CALL_MAX_WAIT_S = 2.0

T = TypeVar("T")
_Call = Call
_resolve = resolve
__all__ = ["Audio", "BusyError", "InferenceWorker", "Job", "WorkerStoppedError"]


class InferenceWorker:
    """A thread that owns an engine and decodes submitted requests in batches."""

    def __init__(
        self,
        engine: Engine,
        *,
        options: DecodeOptions | None = None,
        max_queued: int = 16,
        max_batch: int = 8,
        batch_window_s: float = 0.005,
        in_flight: Callable[[], int] | None = None,
        on_death: Callable[[BaseException], None] | None = None,
        on_batch: Callable[[int, float, list[int]], None] | None = None,
        scheduling: str = "auto",
    ) -> None:
        if max_queued < 1 or max_batch < 1:
            raise ValueError("max_queued and max_batch must be at least 1")
        if scheduling not in SCHEDULING:
            raise ValueError(f"scheduling must be one of {SCHEDULING}, not {scheduling!r}")
        # auto: step on CUDA once joining passed its check, else gated (:mod:`.join_check`)
        scheduling = resolve_scheduling(scheduling, engine, options)
        #: ``step``, ``gated`` or ``batch`` (``auto`` resolved by the engine's device).
        self.scheduling = scheduling
        self.call_max_wait_s = CALL_MAX_WAIT_S
        self.engine = engine
        self.options = options
        self.max_queued = max_queued
        self.max_batch = max_batch
        self.batch_window_s = min(max(batch_window_s, 0.0), MAX_WINDOW_S)
        self._in_flight = in_flight or (lambda: 0)
        self.on_death = on_death
        #: Called after each decoded batch: (size, seconds, samples per item) (metrics).
        self.on_batch = on_batch
        #: This host's decode speed, learned from the batches decoded (the pacing).
        self.speed = DecodeSpeed()
        self._pending: deque[Job] = deque()
        self._calls: deque[_Call] = deque()
        #: Background calls (step scheduling): only when no request waits or decodes.
        self._background: deque[_Call] = deque()
        self._scheduler: StepScheduler | None = None
        self._running = 0
        self._cond = threading.Condition()
        self._stopping = False
        self._dead: BaseException | None = None
        self._current: list[Job] = []
        self._thread: threading.Thread | None = None
        self.batches = 0
        self.jobs_done = 0
        self.largest_batch = 0
        self.calls_done = 0

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("worker already started")
        self._thread = threading.Thread(target=self._main, name="omnivoice-worker", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking work, fail what is pending and wait for the running decode."""
        with self._cond:
            self._stopping = True
            dropped = list(self._pending)
            calls = list(self._calls) + list(self._background)
            self._pending.clear()
            self._calls.clear()
            self._background.clear()
            self._cond.notify_all()
        self._interrupt_background()  # a background forward ends now, not at its end
        for job in dropped:
            self._deliver(job, error=WorkerStoppedError("the server is shutting down"))
        for call in calls:
            _resolve(call.future, error=WorkerStoppedError("the server is shutting down"))
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        """``stop`` was called."""
        return self._stopping

    @property
    def thread_running(self) -> bool:
        """The worker thread has not finished (e.g. still inside a decode after stop)."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._dead is None

    @property
    def queued(self) -> int:
        """Jobs waiting for the worker (not yet decoding)."""
        with self._cond:
            return len(self._pending)

    @property
    def load(self) -> int:
        """Jobs queued or running."""
        with self._cond:
            return len(self._pending) + self._running

    # ---- other threads ---------------------------------------------------------------

    def submit(self, request: SynthesisRequest) -> Job:
        """Queue a request (call from the event loop thread)."""
        loop = asyncio.get_running_loop()
        job = Job(request=request, loop=loop, future=loop.create_future(),
                  started=loop.create_future())
        with self._cond:
            self._check_running()
            if len(self._pending) + self._running >= self.max_queued:
                raise BusyError(
                    f"the server is busy ({self.max_queued} synthesis jobs queued or running)"
                )
            self._pending.append(job)
            self._cond.notify()
        self._interrupt_background()
        return job

    def call(self, run: Callable[[Engine], T], *, background: bool = False
             ) -> concurrent.futures.Future[T]:
        """Run ``run(engine)`` on the worker thread (from any thread); its future.

        ``background``: work nobody waits for (voice anchors made in the background): with
        step scheduling it runs only while no request waits or decodes, and its decodes
        yield to requests at every step boundary."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        step = self.scheduling != "batch"
        with self._cond:
            self._check_running()
            queue = self._background if background and step else self._calls
            queue.append(_Call(run=run, future=future, background=background and step))
            self._cond.notify()
        if not background:
            self._interrupt_background()
        return future

    def _interrupt_background(self) -> None:
        """Work for a request is queued: stop a background forward in progress."""
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.interrupt_background()

    def _check_running(self) -> None:
        if self._dead is not None or self._stopping or self._thread is None:
            raise WorkerStoppedError("the synthesis worker is not running")

    # ---- worker thread ---------------------------------------------------------------

    def _started(self, job: Job) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed
            job.loop.call_soon_threadsafe(_resolve, job.started, None, None)

    def _deliver(self, job: Job, result: Audio | None = None,
                 error: BaseException | None = None) -> None:
        try:
            job.loop.call_soon_threadsafe(_resolve, job.started, None, None)
            job.loop.call_soon_threadsafe(_resolve, job.future, result, error)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    def _next_work(self) -> list[Job] | _Call | None:
        """Wait for work; the next batch or call (None when stopping)."""
        with self._cond:
            while not self._stopping:
                self._drop_cancelled()
                if self._pending or self._calls:
                    break
                self._cond.wait()
            if self._stopping:
                return None
            if self._calls and (not self._pending or time.monotonic()
                                - self._calls[0].submitted_at > CALL_MAX_WAIT_S):
                return self._calls.popleft()
            if (self.batch_window_s > 0 and len(self._pending) < self.max_batch
                    and len(self._pending) < self._in_flight()):
                _LOGGER.debug("Batch window: %d job(s) queued, waiting up to %.1f ms for "
                              "the other requests in flight", len(self._pending),
                              self.batch_window_s * 1000)
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
        call: _Call | None = None
        try:
            if self.scheduling != "batch":
                self._scheduler = StepScheduler(self, join_running=self.scheduling == "step")
                self._scheduler.run()
                return
            while True:
                work = self._next_work()
                if work is None:
                    return
                if isinstance(work, _Call):
                    call = work
                    self._run_call(call)
                    call = None
                elif work:
                    self._run_batch(work)  # on death the except below fails this batch too
                    with self._cond:
                        self._running = 0
                        self._current = []
        except BaseException as err:  # keep the server honest: a dead worker is reported
            _LOGGER.critical("The synthesis worker died: %s", err, exc_info=True)
            with self._cond:
                self._dead = err
                dropped = self._current + list(self._pending)
                if self._scheduler is not None:
                    dropped += self._scheduler.fail_all(err)
                calls = list(self._calls) + list(self._background) + (
                    [call] if call is not None else [])
                self._pending.clear()
                self._calls.clear()
                self._background.clear()
                self._current = []
                self._running = 0
            # The death is reported before the waiters learn of it: whoever a failed job
            # wakes finds the worker dead and reported.
            if self.on_death is not None:
                self.on_death(err)
            for job in dropped:
                self._deliver(job, error=WorkerStoppedError("the synthesis worker died"))
            for pending_call in calls:
                _resolve(pending_call.future,
                        error=WorkerStoppedError("the synthesis worker died"))

    def _run_call(self, call: _Call) -> None:
        if not call.future.set_running_or_notify_cancel():
            return
        try:
            result = call.run(self.engine)
        except Exception as err:
            _resolve(call.future, error=err)
        else:
            _resolve(call.future, result=result)
        self.calls_done += 1

    def _run_batch(self, batch: list[Job]) -> None:
        run_batch(self, batch)

    def _report_failure(self, job: Job, err: Exception) -> None:
        if isinstance(err, ValueError):
            _LOGGER.info("Request rejected by the engine: %s", err)
        else:
            _LOGGER.error("Synthesis failed: %s", err, exc_info=True)
        self._deliver(job, error=err)
