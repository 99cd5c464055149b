"""The record of a prepared backbone folder: what was written, checked at every load.

``prepared.json`` holds, per file, its size and a sampled SHA-256 (the whole file up to
3 MiB; else its first, middle and last MiB: a full hash of the weights would cost seconds
at every start). A cut, deleted or replaced file does not match, and the folder is built
again instead of leaving the server on the slower published backbone. Files are fsynced
before the folder is renamed into place, and the folder after, so a power loss never leaves
a 0-byte file under a name that is loaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from contextlib import suppress
from pathlib import Path
from typing import Any

INFO_FILE = "prepared.json"
GRAPH_FILE = "backbone.onnx"
#: Bytes read at each sampled place.
SAMPLE_BYTES = 1 << 20


def sampled_sha256(path: Path, size: int) -> str:
    """SHA-256 of the whole file up to 3 MiB, else of its first, middle and last MiB."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        if size <= 3 * SAMPLE_BYTES:
            digest.update(handle.read())
        else:
            for offset in (0, size // 2, size - SAMPLE_BYTES):
                handle.seek(offset)
                digest.update(handle.read(SAMPLE_BYTES))
    return digest.hexdigest()


def file_records(folder: Path) -> dict[str, dict[str, Any]]:
    """Size and sampled hash of every file of a finished build, each fsynced first."""
    records: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name == INFO_FILE:
            continue
        with path.open("rb") as handle:
            os.fsync(handle.fileno())
        size = path.stat().st_size
        records[path.name] = {"size": size, "sampled_sha256": sampled_sha256(path, size)}
    return records


def check_files(folder: Path, records: Any) -> str | None:
    """What does not match the recorded files, or None when all match."""
    if not isinstance(records, dict) or GRAPH_FILE not in records:
        return f"{INFO_FILE} has no file record (written by an older build)"
    for name, record in sorted(records.items()):
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError:
            return f"{name} is missing"
        written = record.get("size") if isinstance(record, dict) else None
        if written != size:
            return f"{name} has {size} bytes, {written} were written"
        try:
            sampled = sampled_sha256(path, size)
        except OSError as err:
            return f"{name} is unreadable ({err})"
        if sampled != record.get("sampled_sha256"):
            return f"{name} does not hold the bytes that were written"
    return None


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` survive a power loss."""
    with suppress(OSError):  # not every file system lets a folder be opened and synced
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_folder(folder: Path) -> None:
    """Remove a prepared folder: renamed aside first, so a half-removed folder never sits
    under a name that is loaded."""
    if not folder.exists():
        return
    aside = folder.with_name(f".old-{folder.name}-{os.getpid()}")
    try:
        os.replace(folder, aside)
    except OSError:
        aside = folder
    shutil.rmtree(aside, ignore_errors=True)
