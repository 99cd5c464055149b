"""Progress of long work: a log line every few seconds, and what is running now.

A :class:`Progress` is one piece of long work (a file downloading, a backbone being
prepared, voice anchors being made) counted in its own units (bytes, weights, layers,
anchors). It logs a line at most every :data:`LOG_INTERVAL_S` seconds while it runs, with
what is done, the percentage, the rate and the time left when the total is known:

    Downloading llm_backbone_fp32.onnx.data: 512.0 MB of 1.76 GB (29 %), 35.2 MB/s, about 35 s left

and, while it runs, it is listed by :func:`running` (a snapshot per piece of work), which the
start-up status (``/health``, the studio page) reads. Every layer may use it: it imports
nothing of the project. Updates come from any thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_LOGGER = logging.getLogger("wyoming_omnivoice.progress")

#: At most one progress line per piece of work every this many seconds.
LOG_INTERVAL_S = 5.0

#: The kinds of long work (``Progress.kind``).
DOWNLOAD, VERIFY, PREPARE, ANCHORS = "download", "verify", "prepare", "anchors"

_running: dict[int, Progress] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Snapshot:
    """What a piece of work has done so far (JSON-ready through :meth:`as_dict`)."""

    kind: str
    label: str
    unit: str
    #: One unit, in the rate when it is below one a second (``20 s per anchor``).
    item: str
    done: float
    total: float | None
    elapsed_s: float
    rate: float | None
    left_s: float | None

    @property
    def percent(self) -> float | None:
        if not self.total:
            return None
        return min(100.0, 100.0 * self.done / self.total)

    def as_dict(self) -> dict[str, object]:
        percent = self.percent
        return {"kind": self.kind, "label": self.label, "unit": self.unit, "item": self.item,
                "done": round(self.done, 3), "total": self.total,
                "percent": None if percent is None else round(percent, 1),
                "rate": None if self.rate is None else round(self.rate, 3),
                "seconds_left": None if self.left_s is None else round(self.left_s, 1),
                "text": describe(self)}


def _size(value: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.{2 if unit == 'GB' else 1}f} {unit}"
    return f"{value:.0f} B"


def _count(value: float, unit: str) -> str:
    return _size(value) if unit == "bytes" else f"{value:.0f}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def describe(snapshot: Snapshot) -> str:
    """``label: done of total unit (percent), rate, about N s left``."""
    unit = snapshot.unit
    if not snapshot.total and not snapshot.done:  # no count: how long it has run
        return f"{snapshot.label} ({_duration(snapshot.elapsed_s)} so far)"
    if snapshot.total:
        amount = f"{_count(snapshot.done, unit)} of {_count(snapshot.total, unit)}"
        if unit != "bytes":
            amount += f" {unit}"
        amount += f" ({snapshot.percent:.0f} %)"
    else:
        amount = _count(snapshot.done, unit) + ("" if unit == "bytes" else f" {unit}")
    parts = [f"{snapshot.label}: {amount}"]
    if snapshot.rate and unit == "bytes":
        parts.append(f"{_size(snapshot.rate)}/s")
    elif snapshot.rate:
        parts.append(f"{snapshot.rate:.3g} {unit}/s" if snapshot.rate >= 1
                     else f"{1 / snapshot.rate:.3g} s per {snapshot.item}")
    if snapshot.left_s is not None:
        parts.append(f"about {_duration(snapshot.left_s)} left")
    return ", ".join(parts)


class Progress:
    """One piece of long work; use as a context manager (listed while inside)."""

    def __init__(self, kind: str, label: str, total: float | None = None, *,
                 unit: str = "bytes", item: str | None = None, done: float = 0.0,
                 interval_s: float | None = None, logger: logging.Logger | None = None
                 ) -> None:
        self.kind = kind
        self.label = label
        self.unit = unit
        self.item = item or unit.removesuffix("s")
        self.total = total
        self.interval_s = LOG_INTERVAL_S if interval_s is None else interval_s
        self._logger = logger or _LOGGER
        self._start_done = done
        self._done = done
        self._began = time.monotonic()
        self._logged = self._began
        self._lock = threading.Lock()

    def __enter__(self) -> Progress:
        with _lock:
            _running[id(self)] = self
        return self

    def __exit__(self, *_exc: object) -> None:
        with _lock:
            _running.pop(id(self), None)

    @property
    def done(self) -> float:
        return self._done

    def advance(self, amount: float = 1.0) -> None:
        self.set(self._done + amount)

    def set(self, done: float, total: float | None = None) -> None:
        """Done so far (and the total, when it becomes known); logs when a line is due."""
        now = time.monotonic()
        with self._lock:
            self._done = done
            if total is not None:
                self.total = total
            # The end is the owner's line to write (log()), or what follows says it.
            finished = bool(self.total) and done >= (self.total or 0)
            due = now - self._logged >= self.interval_s and not finished
            if due:
                self._logged = now
        if due:
            self._logger.info("%s", describe(self.snapshot(now)))

    def log(self) -> None:
        """A line now (the last one of a piece of work, whatever the interval)."""
        with self._lock:
            self._logged = time.monotonic()
        self._logger.info("%s", describe(self.snapshot()))

    def snapshot(self, now: float | None = None) -> Snapshot:
        now = time.monotonic() if now is None else now
        elapsed = max(now - self._began, 1e-9)
        moved = self._done - self._start_done
        rate = moved / elapsed if moved > 0 and elapsed >= 0.5 else None
        left = None
        if rate and self.total:
            left = max(0.0, self.total - self._done) / rate
        return Snapshot(self.kind, self.label, self.unit, self.item, self._done, self.total,
                        elapsed, rate, left)


@contextmanager
def progress(kind: str, label: str, total: float | None = None, *, unit: str = "bytes",
             interval_s: float | None = None, logger: logging.Logger | None = None
             ) -> Iterator[Progress]:
    """``with progress("prepare", "Preparing the int8 backbone", 337, unit="weights") as p``."""
    with Progress(kind, label, total, unit=unit, interval_s=interval_s,
                  logger=logger) as work:
        yield work


def running() -> list[Snapshot]:
    """A snapshot of every piece of work running now, oldest first."""
    with _lock:
        works = list(_running.values())
    return [work.snapshot() for work in works]
