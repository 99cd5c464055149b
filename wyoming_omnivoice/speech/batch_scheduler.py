"""Whole-batch scheduling (``scheduling="batch"``, the worker's former way, kept to
compare): a batch of jobs is decoded to the end before the worker takes other work."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from wyoming_omnivoice.speech.pacing import piece_frames

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest
    from wyoming_omnivoice.speech.jobs import Audio, Job

_LOGGER = logging.getLogger("wyoming_omnivoice.speech.worker")
#: The :class:`.worker.InferenceWorker` (not imported: it imports this module).
Worker = Any


def run_batch(worker: Worker, batch: list[Job]) -> None:
    """Decode ``batch`` to the end with ``Engine.synthesize_batch``; a failed batch is
    retried item by item."""
    for job in batch:
        worker._started(job)
    started = time.monotonic()
    requests = [job.request for job in batch]
    try:
        audios = _synthesize(worker, requests)
    except Exception as err:
        if len(batch) == 1:
            worker._report_failure(batch[0], err)
            return
        _LOGGER.warning("A batch of %d failed (%s); retrying one by one", len(batch), err)
        for job in batch:
            if job.cancelled:
                continue
            try:
                worker._deliver(job, result=_synthesize(worker, [job.request])[0])
            except Exception as item_err:
                worker._report_failure(job, item_err)
        return
    elapsed = time.monotonic() - started
    worker.batches += 1
    worker.jobs_done += len(batch)
    worker.largest_batch = max(worker.largest_batch, len(batch))
    worker.speed.record([piece_frames(request.text) for request in requests], elapsed)
    if worker.on_batch is not None:
        worker.on_batch(len(batch), elapsed, [len(audio) for audio in audios])
    _LOGGER.debug("Decoded a batch of %d in %.3f s (oldest waited %.3f s)", len(batch),
                  elapsed, started - min(job.submitted_at for job in batch))
    for job, audio in zip(batch, audios, strict=True):
        if not job.cancelled:
            worker._deliver(job, result=audio)


def _synthesize(worker: Worker, requests: list[SynthesisRequest]) -> list[Audio]:
    audios = worker.engine.synthesize_batch(requests, options=worker.options)
    if len(audios) != len(requests):
        raise RuntimeError(
            f"engine returned {len(audios)} results for a batch of {len(requests)}"
        )
    return list(audios)
