"""Will the start fit in memory? Checked before the heavy work, so a host that is too small
gets one line saying so instead of a kernel kill (exit 137, no message) on every restart.

The room is what this process may still use: the cgroup limit where one is set (cgroup v2
``memory.max``, v1 ``memory.limit_in_bytes``, the tightest of the cgroup and its parents)
less what the cgroup already holds apart from reclaimable file cache, and never more than
the host's ``MemAvailable``. Docker ``--memory``, the Home Assistant Supervisor and systemd
limits are all cgroup limits.

The need is estimated from the model files (calibrated at the real model size, docs/install.md,
"What it needs"): the runtime, the backbone as it is held (int8: its prepared weights,
about a quarter of the fp32 file; fp32: the fp32 weights once, packed; fp16: the
preparation holds the fp32 model several times), the heads and scoring graphs, the vocoder,
and working memory for a batch. Preparing int8 streams one weight at a time and costs
almost nothing on top. ``--precision auto`` on the CPU is int8, the smallest.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from wyoming_omnivoice.errors import StartupError

_LOGGER = logging.getLogger(__name__)

GB = 1e9
#: Python, numpy, onnxruntime, the tokenizer, language id and text normalisers (the tiny
#: model's server holds 0.39 GB after its first reply).
RUNTIME_BYTES = int(0.40 * GB)
#: Working memory of decoding a batch (arenas, attention) per byte of the fp32 backbone
#: file (it grows with the model's width and depth: 0.25 GB at the real size).
WORKING_SHARE = 0.14
#: Held bytes per byte of the fp32 backbone weights file, per precision.
#: The fused variants hold their own weights file (k/v repeated for every query head):
#: about 1.13x (fp32-fused) and 0.57x (fp16-fused) the fp32 file, so these two shares are
#: estimated from the file sizes, not measured like the others.
BACKBONE_SHARE = {"int8": 0.27, "fp32": 1.05, "fp16": 3.2, "published": 1.05,
                  "fp32-fused": 1.2, "fp16-fused": 0.6}
#: The heads graph is held by several scoring sessions (guided/unguided, greedy/top-k).
HEADS_SHARE = 5.0
_UNLIMITED = 1 << 60


@dataclass(frozen=True)
class MemoryRoom:
    """Bytes this process may hold at most (what it holds now and what it may still take),
    and where the figure comes from."""

    available: int
    source: str


def _meminfo_available(meminfo: Path) -> int | None:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value < _UNLIMITED else None


def _own_anonymous(status: Path) -> int:
    """This process's anonymous resident bytes (part of what the cgroup holds)."""
    try:
        for line in status.read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _stat(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _cgroup_folders(proc_cgroup: Path, root: Path) -> list[tuple[int, Path]]:
    """``(version, folder)`` of this process's memory cgroup, innermost first, then its
    parents up to the hierarchy's root (in a container: the namespace's root)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return []
    found: list[tuple[int, Path]] = []
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if number == "0" and controllers == "":
            version, mount = 2, root if (root / "cgroup.controllers").exists() \
                else root / "unified"
        elif "memory" in controllers.split(","):
            version, mount = 1, root / "memory"
        else:
            continue
        folder = mount / path.lstrip("/")
        if not folder.is_dir():
            folder = mount  # a container sees its own cgroup at the mount's root
        while True:
            found.append((version, folder))
            if folder == mount or folder.parent == folder:
                break
            folder = folder.parent
    return found


def memory_room(proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup")
                ) -> MemoryRoom | None:
    """The memory this process may still use; None when nothing can be read (not Linux)."""
    own = _own_anonymous(proc / "self" / "status")
    host = _meminfo_available(proc / "meminfo")
    best = MemoryRoom(host + own, f"{host / GB:.2f} GB available on the host") \
        if host is not None else None
    for version, folder in _cgroup_folders(proc / "self" / "cgroup", cgroup_root):
        if version == 2:
            limit = _read_int(folder / "memory.max")
            used = _read_int(folder / "memory.current")
            cache = _stat(folder / "memory.stat", "inactive_file")
            name = "memory.max"
        else:
            limit = _read_int(folder / "memory.limit_in_bytes")
            used = _read_int(folder / "memory.usage_in_bytes")
            cache = _stat(folder / "memory.stat", "total_inactive_file")
            name = "memory.limit_in_bytes"
        if limit is None:
            continue
        held = max(0, (used or 0) - cache)
        room = max(0, limit - held) + own
        if best is None or room < best.available:
            best = MemoryRoom(room, f"a memory limit of {limit / GB:.2f} GB ({folder / name}),"
                                    f" {held / GB:.2f} GB of it in use")
    return best


def _size(path: Path) -> int:
    total = 0
    for candidate in (path, path.with_name(path.name + ".data")):
        if candidate.is_file():
            total += candidate.stat().st_size
    return total


def start_need(model_dir: Path, precision: str) -> int:
    """Estimated peak bytes of a CPU start (preparation, anchors, warm-up) at ``precision``
    (a concrete one: ``int8``, ``fp32``, ``fp16`` or ``published``)."""
    from wyoming_omnivoice.engine import BACKBONE, HEADS, VOCODER

    fp32 = _size(model_dir / BACKBONE)
    backbone = fp32 * BACKBONE_SHARE.get(precision, 1.05)
    held = _size(model_dir / HEADS) * HEADS_SHARE + _size(model_dir / VOCODER)
    working = fp32 * WORKING_SHARE
    return int(RUNTIME_BYTES + working + backbone + held)


def check_start_memory(model_dir: Path, precision: str, *,
                       room: MemoryRoom | None = None) -> None:
    """Raise StartupError (one line: needed, available, what to change) when a CPU start at
    ``precision`` does not fit the memory this process may use."""
    room = room if room is not None else memory_room()
    if room is None:
        return
    need = start_need(model_dir, precision)
    _LOGGER.debug("Memory: the start needs about %.2f GB; room: %s", need / GB, room.source)
    if need <= room.available:
        return
    advice = "give it more memory (the add-on: stop other add-ons, or more RAM for the " \
             "Home Assistant VM)"
    if precision != "int8":
        int8_need = start_need(model_dir, "int8")
        if int8_need <= room.available:
            advice = (f"use --precision int8 (the add-on's precision option: int8), which "
                      f"needs about {int8_need / GB:.1f} GB, or {advice}")
    raise StartupError(
        f"Not enough memory to start with the {precision} backbone: it needs about "
        f"{need / GB:.1f} GB and this process has {room.available / GB:.2f} GB "
        f"({room.source}); {advice}.")
