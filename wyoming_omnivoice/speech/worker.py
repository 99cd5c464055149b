"""The inference worker: one thread owns the engine; every other thread hands it work.

The engine is blocking and not thread-safe (docs/design.md), so once the server runs, every
engine call happens on this one thread:

- A *job* is one synthesis request (usually one sentence). ``submit`` is called from the
  event loop and returns at once; the result arrives on the job's asyncio future.
- A *call* is any other engine work, e.g. encoding the reference of a voice folder added
  while the server runs (:mod:`wyoming_omnivoice.voices.watch`). ``call`` may be used from
  any thread and returns a ``concurrent.futures.Future``. Calls run when no job waits or decodes (or
  once they have waited :data:`CALL_MAX_WAIT_S`, so a busy server still gets to them).
  ``call(run, background=True)`` (voice anchors made in the background) yields to every
  request at each diffusion step boundary of its decodes and resumes afterwards.
- The queues are a :class:`.job_queue.JobQueue`, which both schedulers take work from.
- The worker schedules diffusion steps (:mod:`.step_scheduler`): jobs are decoded in an
  engine ``SynthesisSession``, up to ``max_batch`` at once, and leave when their last step
  is done; a cancelled job leaves at the next step boundary; background calls yield to
  jobs at every step boundary. ``scheduling="step"``: a job joins the running decode at
  the next step (continuous batching). ``"gated"``: a job joins only when no request
  decodes, then with every job queued (where a forward's cost grows in proportion to its
  rows, joining only delays the requests decoding: measured on the CPU in
  docs/capacity.md). ``"auto"`` (the default): ``step`` on CUDA, ``gated`` on the CPU.
  ``"batch"`` (:mod:`.batch_scheduler`, to compare the two): every pending job (up to
  ``max_batch``) decoded together with ``Engine.synthesize_batch`` to the end, calls
  between batches.
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
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

from wyoming_omnivoice.speech.batch_scheduler import BatchScheduler
from wyoming_omnivoice.speech.job_queue import CALL_MAX_WAIT_S, JobQueue
from wyoming_omnivoice.speech.jobs import (
    Audio,
    BusyError,
    Call,
    Job,
    Prepare,
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

T = TypeVar("T")
__all__ = ["CALL_MAX_WAIT_S", "Audio", "BusyError", "InferenceWorker", "Job",
           "WorkerStoppedError"]


class Scheduler(Protocol):
    """The worker thread's loop (:class:`.step_scheduler.StepScheduler`,
    :class:`.batch_scheduler.BatchScheduler`)."""

    def run(self) -> None: ...

    def interrupt_background(self) -> None: ...


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
        self.engine = engine
        self.options = options
        self.max_queued = max_queued
        self.max_batch = max_batch
        self.batch_window_s = min(max(batch_window_s, 0.0), MAX_WINDOW_S)
        self.on_death = on_death
        #: Called after each decoded batch: (size, seconds, samples per item) (metrics).
        self.on_batch = on_batch
        #: This host's decode speed, learned from the batches decoded (the pacing).
        self.speed = DecodeSpeed()
        #: The jobs and calls handed to the worker (its schedulers take them from here).
        self.queue = JobQueue(max_queued=max_queued, max_batch=max_batch,
                              batch_window_s=self.batch_window_s,
                              in_flight=in_flight or (lambda: 0))
        self._scheduler: Scheduler | None = None
        self._dead: BaseException | None = None
        self._thread: threading.Thread | None = None

    # ---- counts ------------------------------------------------------------------------

    @property
    def batches(self) -> int:
        """Decodes started with an empty batch (step) or batches decoded (batch)."""
        return self.queue.counts.batches

    @property
    def jobs_done(self) -> int:
        return self.queue.counts.jobs_done

    @property
    def largest_batch(self) -> int:
        return self.queue.counts.largest_batch

    @property
    def calls_done(self) -> int:
        return self.queue.counts.calls_done

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("worker already started")
        self._thread = threading.Thread(target=self._main, name="omnivoice-worker", daemon=True)
        self.queue.open()
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop taking work, fail what is pending and wait for the running decode."""
        dropped, calls = self.queue.stop()
        self._interrupt_background()  # a background forward ends now, not at its end
        for job in dropped:
            self._deliver(job, error=WorkerStoppedError("the server is shutting down"))
        for call in calls:
            resolve(call.future, error=WorkerStoppedError("the server is shutting down"))
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        """``stop`` was called."""
        return self.queue.stopping

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
        return self.queue.queued

    @property
    def load(self) -> int:
        """Jobs queued or running."""
        return self.queue.load

    # ---- other threads ---------------------------------------------------------------

    def submit(self, request: SynthesisRequest, *, prepare: Prepare | None = None) -> Job:
        """Queue a request (call from the event loop thread). ``prepare``: what its job does
        on the worker's thread before it decodes (its voice's anchor built and put in)."""
        loop = asyncio.get_running_loop()
        job = Job(request=request, loop=loop, future=loop.create_future(),
                  started=loop.create_future(), prepare=prepare)
        self.queue.put(job)
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
        self.queue.put_call(Call(run=run, future=future, background=background and step))
        if not background:
            self._interrupt_background()
        return future

    def _interrupt_background(self) -> None:
        """Work for a request is queued: stop a background forward in progress."""
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.interrupt_background()

    # ---- worker thread ---------------------------------------------------------------

    def _deliver(self, job: Job, result: Audio | None = None,
                 error: BaseException | None = None) -> None:
        """A job's outcome, as the schedulers hand it over."""
        self.queue.deliver(job, result, error)

    def _decoded(self, size: int, seconds: float, frames: list[int],
                 samples: list[int]) -> None:
        self.speed.record(frames, seconds)
        if self.on_batch is not None:
            self.on_batch(size, seconds, samples)

    def _main(self) -> None:
        try:
            if self.scheduling == "batch":
                self._scheduler = BatchScheduler(self.engine, self.options, self.queue,
                                                 deliver=self._deliver, decoded=self._decoded)
            else:
                self._scheduler = StepScheduler(
                    self.engine, self.options, self.queue, deliver=self._deliver,
                    decoded=self._decoded, join_running=self.scheduling == "step")
            self._scheduler.run()
        except BaseException as err:  # keep the server honest: a dead worker is reported
            _LOGGER.critical("The synthesis worker died: %s", err, exc_info=True)
            self._dead = err
            dropped, calls = self.queue.close()
            # The death is reported before the waiters learn of it: whoever a failed job
            # wakes finds the worker dead and reported.
            if self.on_death is not None:
                self.on_death(err)
            for job in dropped:
                self._deliver(job, error=WorkerStoppedError("the synthesis worker died"))
            for call in calls:
                resolve(call.future, error=WorkerStoppedError("the synthesis worker died"))
