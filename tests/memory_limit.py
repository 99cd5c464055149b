"""Run a process under a memory limit the kernel enforces: a child memory cgroup.

cgroup v2 (``memory.max`` in a child of our own cgroup, the memory controller enabled for
it) where that can be made, else cgroup v1 (``memory.limit_in_bytes``); both need root.
``MemoryCgroup.create`` returns None when neither can be made here (not root, no writable
hierarchy), and says why in ``MemoryCgroup.unavailable``. Used by the memory-limit test of
the server's first start and by ``benchmarks/smallhost.py``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

V1_ROOT = Path("/sys/fs/cgroup/memory")


def _v2_mount() -> Path | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        if after.split(" ")[0] == "cgroup2":
            return Path(before.split(" ")[4])
    return None


def _own_path(version: int) -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if version == 2 and number == "0" and controllers == "":
            return path
        if version == 1 and "memory" in controllers.split(","):
            return path
    return "/"


class MemoryCgroup:
    """A child cgroup with a memory limit; processes join it through :meth:`preexec`."""

    unavailable = ""

    def __init__(self, path: Path, version: int) -> None:
        self.path = path
        self.version = version

    @classmethod
    def create(cls, name: str, limit_bytes: int) -> MemoryCgroup | None:
        reasons = []
        for version in (2, 1):
            try:
                return cls._make(version, name, limit_bytes)
            except OSError as err:
                reasons.append(f"cgroup v{version}: {err}")
        cls.unavailable = "; ".join(reasons)
        return None

    @classmethod
    def _make(cls, version: int, name: str, limit_bytes: int) -> MemoryCgroup:
        if version == 2:
            mount = _v2_mount()
            if mount is None:
                raise OSError("no cgroup2 mount")
            parent = mount / _own_path(2).lstrip("/")
            if "memory" not in (parent / "cgroup.controllers").read_text().split():
                raise OSError(f"{parent} has no memory controller")
            if "memory" not in (parent / "cgroup.subtree_control").read_text().split():
                (parent / "cgroup.subtree_control").write_text("+memory")
            limit_file = "memory.max"
        else:
            parent = V1_ROOT / _own_path(1).lstrip("/")
            if not parent.is_dir():
                raise OSError(f"{parent} is not a memory cgroup folder")
            limit_file = "memory.limit_in_bytes"
        path = parent / f"{name}-{os.getpid()}"
        path.mkdir(exist_ok=True)
        try:
            (path / limit_file).write_text(str(limit_bytes))
            swap = path / ("memory.swap.max" if version == 2 else "memory.memsw.limit_in_bytes")
            if swap.exists():  # no swapping out of the limit
                swap.write_text("0" if version == 2 else str(limit_bytes))
        except OSError:
            path.rmdir()
            raise
        return cls(path, version)

    def preexec(self) -> Callable[[], None]:
        """For ``subprocess.Popen(preexec_fn=...)``: the child joins before it runs."""
        procs = str(self.path / "cgroup.procs")

        def join() -> None:
            with open(procs, "w") as handle:
                handle.write(str(os.getpid()))

        return join

    def _read(self, name: str) -> str:
        return (self.path / name).read_text()

    def oom_kills(self) -> int:
        if self.version == 2:
            text = self._read("memory.events")
        else:
            text = self._read("memory.oom_control")
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def close(self) -> None:
        for _ in range(50):  # the last process may still be leaving
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)
