"""A server process seen from outside through ``/proc`` (Linux): resident memory, open file
descriptors, threads, CPU time, and a snapshot taken once the process is at rest."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path

from wyoming_omnivoice.speech.step_scheduler import TRIM_AFTER_IDLE_S

#: The process counts as at rest when it used less CPU than this share of one core over
#: :data:`QUIET_WINDOW_S` (an idle asyncio server with sleeping worker threads uses ~0).
QUIET_SHARE = 0.05
#: Longer than the server's wait before it returns its free heap once idle, so a quiet
#: window ends after that return (what an idle server holds, not its last burst's peak).
QUIET_WINDOW_S = TRIM_AFTER_IDLE_S + 0.5


def _status_field(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {name} in /proc/{pid}/status")


def rss_kib(pid: int) -> int:
    return _status_field(pid, "VmRSS")


def threads(pid: int) -> int:
    return _status_field(pid, "Threads")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the whole process so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()  # after the command name, from field 3
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Snapshot:
    rss_kib: int
    fds: int
    threads: int

    @classmethod
    def of(cls, pid: int) -> Snapshot:
        return cls(rss_kib(pid), open_fds(pid), threads(pid))


async def settled_snapshot(pid: int, baseline: Snapshot | None, timeout: float = 30.0
                           ) -> Snapshot:
    """A snapshot once the process is at rest: closed connections reaped (descriptors and
    threads back to ``baseline``) and no work left (a request whose client vanished may
    still be decoding when the last client is done; memory measured then is that work's,
    not what the server keeps). After ``timeout`` s, the snapshot as it is."""
    deadline = time.monotonic() + timeout
    used = cpu_seconds(pid)
    while True:
        await asyncio.sleep(QUIET_WINDOW_S)
        now_used = cpu_seconds(pid)
        quiet = now_used - used < QUIET_SHARE * QUIET_WINDOW_S
        used = now_used
        snap = Snapshot.of(pid)
        reaped = baseline is None or (snap.fds <= baseline.fds
                                      and snap.threads <= baseline.threads)
        if (quiet and reaped) or time.monotonic() >= deadline:
            return snap
