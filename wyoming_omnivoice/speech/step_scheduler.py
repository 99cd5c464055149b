"""The worker's step-level scheduling: requests join a running decode at the next step, and
background work yields to them at every step boundary.

The worker thread (``scheduling`` ``step`` or ``gated``) keeps one engine
:class:`~wyoming_omnivoice.engine.SynthesisSession` and loops:

- jobs queued join the session (up to ``max_batch`` decoding at once) at the next step
  boundary (``gated``: only when no request is in it, so a CPU finishes the requests it
  has before it starts the next ones); a lone job starts at once; with more requests in
  flight and nothing decoding, the batch window waits a little for them
  (:meth:`.job_queue.JobQueue.wait_for_company`);
- one step: every request in the session advances by one of its own diffusion steps; the
  requests whose last step is done get their audio (vocoder and post-processing run then)
  on their future; a cancelled job leaves the batch at the next boundary; an engine error
  fails only the requests whose own step fails;
- urgent calls (``call(run)``: a studio take, a voice folder's reference, and the
  preparation of a job whose voice's anchor is still to build, :mod:`.job_queue`) never
  run beside a decode: they run when no request decodes, before the jobs queued; once one
  has waited :data:`.job_queue.CALL_MAX_WAIT_S` no job joins until the requests decoding
  are done and it has run;
- background calls (``call(run, background=True)``: voice anchors made in the background)
  run only when no request waits or decodes. Every decode they make calls the engine's
  step hook (``engine.between_steps``) between its steps; there this loop serves every
  request that has arrived (and anything urgent) until none is left, then returns, and the
  background decode takes its next step where it was. A request (or urgent call) queued
  while a background step's forward runs on the CPU stops that forward at once
  (:class:`~wyoming_omnivoice.engine.ForwardInterrupt`; the step is run again afterwards,
  with the same result), so it waits for background work hardly at all, and at most one
  backbone forward where a forward cannot be stopped (CUDA). Background work progresses only
  while no request waits. ``stop`` lets the requests decoding finish and ends a background
  call at its next step boundary with :class:`.jobs.WorkerStoppedError`;
- when it has had nothing to do for :data:`TRIM_AFTER_IDLE_S` after doing some work, it
  hands the heap's free memory back to the system (:mod:`.heap`) and sleeps.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from wyoming_omnivoice.engine import ForwardInterrupt, between_steps
from wyoming_omnivoice.speech.heap import release_free_heap
from wyoming_omnivoice.speech.job_queue import Decoded, Deliver, JobQueue, report_failure
from wyoming_omnivoice.speech.jobs import Call, WorkerStoppedError
from wyoming_omnivoice.speech.pacing import piece_frames

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine
    from wyoming_omnivoice.engine import SessionItem, SynthesisSession
    from wyoming_omnivoice.speech.jobs import Job

# The worker's own log: this loop is the worker thread's.
_LOGGER = logging.getLogger("wyoming_omnivoice.speech.worker")

STEP = "step"
#: Out of work after doing some: return the free heap before sleeping.
TRIM = "trim"
#: Seconds with nothing to do, after work, before the heap is returned.
TRIM_AFTER_IDLE_S = 1.0


class StepScheduler:
    """The worker thread's loop in step scheduling (see the module docstring)."""

    def __init__(self, engine: Engine, options: DecodeOptions | None, queue: JobQueue, *,
                 deliver: Deliver, decoded: Decoded, join_running: bool = True) -> None:
        self.engine = engine
        self.queue = queue
        self.deliver = deliver
        self.decoded = decoded
        #: Jobs join a running decode (``step``), or only an empty session (``gated``).
        self.join_running = join_running
        self.session: SynthesisSession = engine.open_session(options)
        #: Session items and their jobs (worker thread only).
        self.jobs: dict[SessionItem, tuple[Job, float]] = {}
        self.in_background = False
        #: Stops a background step's forward when work for a request arrives (the worker
        #: calls :meth:`interrupt_background` from other threads).
        self.interrupt = ForwardInterrupt()
        #: Work was done since the heap was last trimmed (worker thread only).
        self.worked = False

    def interrupt_background(self) -> None:
        """Work for a request was queued (any thread): a background decode's forward in
        progress stops now instead of running to its end (see :mod:`.engine.runtime.interrupt`)."""
        if self.in_background:
            self.interrupt.request()

    # -- the loops -----------------------------------------------------------------------
    def run(self) -> None:
        """Until stopped (and nothing decodes)."""
        while True:
            work = self._next(block=True, background=True)
            if work is None:
                return
            if work == TRIM:
                self.worked = False
                release_free_heap()
                continue
            self.worked = True
            if isinstance(work, Call):
                self._run_call(work)
            else:
                self.step()

    def serve_requests(self) -> None:
        """The step hook of a background decode: every request waiting or decoding (and
        every urgent call) is served before the background takes its next step."""
        while True:
            work = self._next(block=False, background=False)
            if work is None:
                break
            if isinstance(work, Call):
                self._run_call(work)
            else:
                self.step()
        if self.queue.stopping:
            raise WorkerStoppedError("the server is shutting down")

    def _next(self, *, block: bool, background: bool) -> str | Call | None:
        """``STEP``, a call to run, ``TRIM``, or None (stopping and idle; or, not blocking,
        idle)."""
        queue = self.queue
        idle_since = 0.0
        with queue.changed:
            while True:
                queue.drop_cancelled()
                joining = self._take_jobs()
                if joining:
                    break
                if self.session.active:
                    return STEP
                if queue.stopping:
                    return None
                # nothing decodes, and no job starts first: an urgent call, else (in the
                # loop, not in a background decode's hook) a background one
                call = queue.next_call(background=background)
                if call is not None:
                    return call
                if not block:
                    return None
                if not self.worked:
                    queue.changed.wait()
                    continue
                # Idle after work: the heap is returned once nothing came for a moment
                # (the event loop is still freeing the last replies' audio as it sends it).
                idle_since = idle_since or time.monotonic()
                remaining = idle_since + TRIM_AFTER_IDLE_S - time.monotonic()
                if remaining <= 0:
                    return TRIM
                queue.changed.wait(remaining)
        self._join(joining)
        return STEP

    def _take_jobs(self) -> list[Job]:
        """Queued jobs that join now (called holding the queue's lock)."""
        queue = self.queue
        room = queue.max_batch - self.session.decoding
        if not queue.waiting or room <= 0 or not self.session.joinable \
                or (self.session.active and not self.join_running) or queue.call_due():
            return []
        if not self.session.active:
            queue.wait_for_company()
        return queue.take(room)

    def _join(self, jobs: list[Job]) -> None:
        counts = self.queue.counts
        if jobs and not self.session.active:
            counts.batches += 1
        for job in jobs:
            self.queue.started(job)
            try:
                item = self.session.add(job.request, tag=job)
            except Exception as err:
                self.queue.done(job)
                self._fail(job, err)
                continue
            self.jobs[item] = (job, time.monotonic())
        counts.largest_batch = max(counts.largest_batch, self.session.decoding)

    # -- work ----------------------------------------------------------------------------
    def step(self) -> None:
        """One step of the session: cancelled jobs leave, finished ones are delivered."""
        queue = self.queue
        for item, (job, _) in list(self.jobs.items()):
            if job.cancelled:
                self.session.cancel(item)
                del self.jobs[item]
                queue.done(job)
        if not self.session.active:
            return
        size = self.session.decoding
        for item in self.session.step():
            job, joined = self.jobs.pop(item)
            queue.done(job)
            if item.error is not None:
                error = item.error
                self._fail(job, error if isinstance(error, Exception)
                           else RuntimeError(str(error)))
                continue
            elapsed = time.monotonic() - joined
            audio = item.result
            assert audio is not None
            queue.counts.jobs_done += 1
            self.decoded(size, elapsed, [piece_frames(job.request.text)], [len(audio)])
            _LOGGER.debug("Decoded a request in %.3f s (%d steps, waited %.3f s)", elapsed,
                          item.steps, joined - job.submitted_at)
            if not job.cancelled:
                self.deliver(job, result=audio)

    def _run_call(self, call: Call) -> None:
        if not call.background or self.in_background:
            self.queue.run_call(call, self.engine)
            return
        self.in_background = True
        try:
            with between_steps(self.serve_requests, self.interrupt):
                self.queue.run_call(call, self.engine)
        finally:
            self.in_background = False
        self.queue.background_ended()

    def _fail(self, job: Job, err: Exception) -> None:
        report_failure(err)
        self.deliver(job, error=err)
