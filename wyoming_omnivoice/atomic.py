"""Atomic file writes: a temp file in the target's folder, fsync, then ``os.replace``.

Readers never see a half-written cache or manifest file, even after a crash or power loss.
A crash leaves the temp file behind; :func:`remove_stale_temp_files` removes those at the
next start (a temp file names the process that writes it, so a concurrent start's files
are kept).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_LOGGER = logging.getLogger(__name__)

#: Marks the writer's process id in a temp file's name.
TEMP_PID_MARK = "pid"
_PID_RE = re.compile(rf"\.{TEMP_PID_MARK}(\d+)\.")
#: A temp file that names no process is stale after this long.
_STALE_AFTER_S = 3600.0


@contextmanager
def atomic_write(path: str | Path, mode: str = "wb", *,
                 encoding: str | None = None) -> Iterator[IO[Any]]:
    """Open a temp file next to ``path``; on success it replaces ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.{TEMP_PID_MARK}{os.getpid()}.",
                                    suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _writer_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


def remove_stale_temp_files(folder: Path, pattern: str) -> int:
    """Remove temp files matching ``pattern`` in ``folder`` that a crash left: their
    writer is no longer running (or, for names without a process id, they are over an
    hour old). Returns how many were removed; one info line when any were."""
    removed = 0
    now = time.time()
    try:
        candidates = list(Path(folder).glob(pattern))
    except OSError:
        return 0
    for path in candidates:
        match = _PID_RE.search(path.name)
        try:
            stale = now - path.lstat().st_mtime > _STALE_AFTER_S
            if match is not None and int(match.group(1)) != os.getpid():
                stale = stale or not _writer_alive(int(match.group(1)))
            if stale and path.is_file():
                path.unlink()
                removed += 1
        except OSError:
            continue
    if removed:
        _LOGGER.info("Removed %d temp file(s) left by an interrupted write in %s", removed,
                     folder)
    return removed
