"""Whole-batch scheduling (``scheduling="batch"``): a batch of jobs is decoded to the end
with ``Engine.synthesize_batch`` before the worker takes other work.

It is kept beside the step scheduling (:mod:`.step_scheduler`) to compare the two on a host
(``WYOMING_OMNIVOICE_SCHEDULING=batch``, ``benchmarks/concurrency.py``). The worker thread
loops: it waits for jobs or calls; a call runs when no job waits (or once it has waited
:data:`.job_queue.CALL_MAX_WAIT_S`); else the batch window waits a little for the other
requests in flight, and every job queued (up to ``max_batch``) is decoded together. A failed
batch is retried item by item, so one bad request cannot fail its neighbours.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from wyoming_omnivoice.speech.job_queue import Decoded, Deliver, JobQueue, report_failure
from wyoming_omnivoice.speech.jobs import Call
from wyoming_omnivoice.speech.pacing import piece_frames

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
    from wyoming_omnivoice.speech.jobs import Audio, Job

_LOGGER = logging.getLogger("wyoming_omnivoice.speech.worker")


class BatchScheduler:
    """The worker thread's loop in batch scheduling (see the module docstring)."""

    def __init__(self, engine: Engine, options: DecodeOptions | None, queue: JobQueue, *,
                 deliver: Deliver, decoded: Decoded) -> None:
        self.engine = engine
        self.options = options
        self.queue = queue
        self.deliver = deliver
        self.decoded = decoded

    def interrupt_background(self) -> None:
        """Nothing to interrupt: calls run between batches, never in the background."""

    def run(self) -> None:
        """Until stopped: the next call or batch, run to its end."""
        while True:
            work = self._next()
            if work is None:
                return
            if isinstance(work, Call):
                self.queue.run_call(work, self.engine)
            elif work:
                self.run_batch(work)

    def _next(self) -> list[Job] | Call | None:
        """Wait for work; the next batch or call (None when stopping)."""
        queue = self.queue
        with queue.changed:
            while not queue.stopping:
                queue.drop_cancelled()
                if queue.waiting or queue.has_calls:
                    break
                queue.changed.wait()
            if queue.stopping:
                return None
            if queue.has_calls and (not queue.waiting or queue.call_due()):
                return queue.next_call()
            queue.wait_for_company()
            if queue.stopping:
                return None
            return queue.take(queue.max_batch)

    def run_batch(self, batch: list[Job]) -> None:
        """Decode ``batch`` to the end with ``Engine.synthesize_batch``; a failed batch is
        retried item by item."""
        self._decode(batch)
        for job in batch:  # (not when the thread dies: the queue hands them their error)
            self.queue.done(job)

    def _decode(self, batch: list[Job]) -> None:
        for job in batch:
            self.queue.started(job)
        started = time.monotonic()
        requests = [job.request for job in batch]
        try:
            audios = self._synthesize(requests)
        except Exception as err:
            if len(batch) == 1:
                self._fail(batch[0], err)
                return
            _LOGGER.warning("A batch of %d failed (%s); retrying one by one", len(batch), err)
            for job in batch:
                if job.cancelled:
                    continue
                try:
                    self.deliver(job, result=self._synthesize([job.request])[0])
                except Exception as item_err:
                    self._fail(job, item_err)
            return
        elapsed = time.monotonic() - started
        counts = self.queue.counts
        counts.batches += 1
        counts.jobs_done += len(batch)
        counts.largest_batch = max(counts.largest_batch, len(batch))
        self.decoded(len(batch), elapsed, [piece_frames(request.text) for request in requests],
                     [len(audio) for audio in audios])
        _LOGGER.debug("Decoded a batch of %d in %.3f s (oldest waited %.3f s)", len(batch),
                      elapsed, started - min(job.submitted_at for job in batch))
        for job, audio in zip(batch, audios, strict=True):
            if not job.cancelled:
                self.deliver(job, result=audio)

    def _fail(self, job: Job, err: Exception) -> None:
        report_failure(err)
        self.deliver(job, error=err)

    def _synthesize(self, requests: list[SynthesisRequest]) -> list[Audio]:
        audios = self.engine.synthesize_batch(requests, options=self.options)
        if len(audios) != len(requests):
            raise RuntimeError(
                f"engine returned {len(audios)} results for a batch of {len(requests)}"
            )
        return list(audios)
