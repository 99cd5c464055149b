"""Where a start's time goes: one log line when the server is ready, each phase's seconds.

    Start-up: ready 1.52 s after the process started: imports 0.46 s, voices 0.04 s, ...,
    engine 0.71 s (prepared backbone 0.01, backbone 0.52, ...), ...

Phases are marked in order by :mod:`.cli`; the first one (``imports``) runs from the
process's start (``/proc/self/stat``; from the first mark where that cannot be read).
``benchmarks/smallhost.py`` reads the line.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path

_LOGGER = logging.getLogger("wyoming_omnivoice")

LINE_START = "Start-up: ready"


def seconds_since_process_start() -> float | None:
    """Seconds since this process started (Linux, 10 ms resolution); None elsewhere."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - started)


class StartupTiming:
    """Phase marks of one start; :meth:`report` logs them."""

    def __init__(self) -> None:
        self._last = time.perf_counter()
        self._before = seconds_since_process_start() or 0.0
        self._first = True
        self.phases: list[tuple[str, float, Mapping[str, float]]] = []

    def mark(self, phase: str, parts: Mapping[str, float] | None = None) -> None:
        """``phase`` ended now (``parts``: where its time went, seconds by name)."""
        now = time.perf_counter()
        spent = now - self._last + (self._before if self._first else 0.0)
        self._first = False
        self._last = now
        self.phases.append((phase, spent, dict(parts or {})))

    def report(self) -> None:
        """Log the line (called once the server listens)."""
        self.mark("listening")
        total = sum(spent for _, spent, _ in self.phases)
        pieces = []
        for phase, spent, parts in self.phases:
            detail = ", ".join(f"{name} {value:.2f}" for name, value in parts.items())
            pieces.append(f"{phase} {spent:.2f} s" + (f" ({detail})" if detail else ""))
        _LOGGER.info("%s %.2f s after the process started: %s; after ready: the warm-up "
                     "synthesis, the other voices' normalisers, the language "
                     "identification", LINE_START, total, ", ".join(pieces))
