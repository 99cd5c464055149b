"""What each model file was checked against, and the record that lets later starts trust it.

A downloaded file is checked in the staging folder before it is moved into the model
directory; a file that does not match is never moved in:

- size and SHA-256 from the manifest, where the manifest pins them;
- otherwise the hub's own hash of the file, its ETag: for files stored with Git LFS (the
  ONNX graphs and their weights) that is the SHA-256 of the content; for small files kept
  in git itself (such as ``tokenizer.json``) it is the git blob SHA-1 of the content.

The record (``.verified.json`` in the model directory) keeps, per file, where it came from
(repository, revision, path), its size, mtime and SHA-256, and what that SHA-256 was
checked against. Later starts use it instead of the network: a file whose size and mtime
are unchanged is trusted without hashing it again (the weights are 1.7 GB); a changed file
is hashed and must match the manifest's SHA-256 or the recorded one, else it is fetched
again; a file recorded from another revision than the manifest pins is fetched again.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.model.file_hash import git_blob_sha1, sha256_file
from wyoming_omnivoice.model.manifest import SHA256_RE, ManifestFile
from wyoming_omnivoice.model.sizes import human_size
from wyoming_omnivoice.progress import VERIFY, progress

_LOGGER = logging.getLogger(__name__)

#: Sidecar in the model directory recording what was verified, per file.
VERIFIED_SIDECAR = ".verified.json"
RECORD_FORMAT = 2

#: What a file's SHA-256 was checked against (recorded as ``checked_against``).
BY_MANIFEST = "manifest SHA-256"
BY_LFS_ETAG = "hub ETag (Git LFS SHA-256)"
BY_GIT_ETAG = "hub ETag (git blob SHA-1)"
BY_NOTHING = "nothing (no reference hash was available)"


@dataclass(frozen=True)
class Checked:
    """The outcome of checking a file: its SHA-256 and what it was checked against."""

    sha256: str
    against: str
    problem: str | None = None


class VerifiedRecord:
    """The ``.verified.json`` record of a model directory."""

    def __init__(self, model_dir: Path) -> None:
        self._path = model_dir / VERIFIED_SIDECAR
        self._entries: dict[str, dict[str, Any]] = {}
        self._save_failed = False
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            files = data.get("files", {}) if isinstance(data, dict) else {}
            if isinstance(files, dict):
                self._entries = {k: v for k, v in files.items() if isinstance(v, dict)}
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as err:
            _LOGGER.warning("Ignoring unreadable %s (%s); files will be re-hashed", self._path, err)

    def entry(self, name: str) -> dict[str, Any]:
        return dict(self._entries.get(name) or {})

    def unchanged_hash(self, name: str, stat: os.stat_result) -> str | None:
        """The recorded hash when the file still has the size and mtime it had then."""
        entry = self._entries.get(name)
        if (
            entry is not None
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
            and isinstance(entry.get("sha256"), str)
        ):
            return str(entry["sha256"])
        return None

    def put(self, entry: ManifestFile, path: Path, checked: Checked) -> None:
        stat = path.stat()
        self._entries[entry.local_name] = {
            "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": checked.sha256,
            "checked_against": checked.against, "source": entry.label,
        }
        self._save()

    def forget(self, name: str) -> None:
        if self._entries.pop(name, None) is not None:
            self._save()

    def _save(self) -> None:
        """Write the record; a full or read-only disk costs only the record (one warning
        per start): the files were checked, and they are hashed again next time."""
        payload = json.dumps({"format": RECORD_FORMAT, "files": self._entries}, indent=1,
                             sort_keys=True)
        try:
            with atomic_write(self._path, "w", encoding="utf-8") as handle:
                handle.write(payload + "\n")
        except OSError as err:
            if not self._save_failed:
                _LOGGER.warning("Cannot update %s (%s); the model files are checked, so the "
                                "start goes on, and they are hashed again at the next start",
                                self._path, err.strerror or err)
            self._save_failed = True


def file_is_valid(model_dir: Path, entry: ManifestFile, record: VerifiedRecord) -> bool:
    """Whether the local copy of ``entry`` is present and intact (hashing only when needed)."""
    path = model_dir / entry.local_name
    if not path.is_file():
        return False
    recorded = record.entry(entry.local_name)
    source = recorded.get("source")
    if isinstance(source, str) and source != entry.label:
        _LOGGER.warning("%s came from %s, but the manifest pins %s: fetching it again",
                        path, source, entry.label)
        return False
    stat = path.stat()
    expected_size = entry.size if entry.size is not None else recorded.get("size")
    if isinstance(expected_size, int) and stat.st_size != expected_size:
        _LOGGER.warning(
            "%s has %d bytes instead of %d (truncated or corrupted): fetching it again",
            path, stat.st_size, expected_size,
        )
        return False
    recorded_hash = recorded.get("sha256") if isinstance(recorded.get("sha256"), str) else None
    expected_hash = entry.sha256 or recorded_hash
    cached = record.unchanged_hash(entry.local_name, stat)
    if cached is not None and (expected_hash is None or cached == expected_hash):
        return True
    _LOGGER.info("Verifying %s (%s)", entry.local_name, human_size(stat.st_size))
    with progress(VERIFY, f"Verifying {entry.local_name}", stat.st_size,
                  logger=_LOGGER) as work:
        actual = sha256_file(path, work.advance)
    if expected_hash is not None and actual != expected_hash:
        _LOGGER.warning(
            "%s has SHA-256 %s instead of %s (corrupted): fetching it again",
            path, actual, expected_hash,
        )
        return False
    if entry.sha256 is not None:
        against = BY_MANIFEST
    elif recorded_hash is not None:
        against = str(recorded.get("checked_against") or BY_NOTHING)
    else:
        against = BY_NOTHING
        _LOGGER.warning("%s has no record of a check (not downloaded here, or %s was "
                        "lost) and the manifest pins no hash for it; its SHA-256 %s is "
                        "recorded now and checked from the next start on",
                        path, VERIFIED_SIDECAR, actual)
    record.put(entry, path, Checked(actual, against))
    return True


def check_download(path: Path, entry: ManifestFile, etag: str | None) -> Checked:
    """Check a fetched file against the manifest, else the hub's ETag for it.

    ``etag`` is the hub's ETag (quotes stripped) or None when it is not known.
    """
    size = path.stat().st_size
    if entry.size is not None and size != entry.size:
        return Checked("", BY_MANIFEST, f"size {size} bytes, expected {entry.size}")
    _LOGGER.info("Verifying %s (%s)", entry.local_name, human_size(size))
    with progress(VERIFY, f"Verifying {entry.local_name}", size, logger=_LOGGER) as work:
        actual = sha256_file(path, work.advance)
    if entry.sha256 is not None:
        return _compare(actual, actual, entry.sha256, BY_MANIFEST, "SHA-256")
    etag = (etag or "").strip('"').lower()
    if SHA256_RE.match(etag):
        return _compare(actual, actual, etag, BY_LFS_ETAG, "SHA-256")
    if len(etag) == 40 and all(c in "0123456789abcdef" for c in etag):
        return _compare(actual, git_blob_sha1(path), etag, BY_GIT_ETAG, "git blob SHA-1")
    _LOGGER.warning("The hub gave no hash for %s; its SHA-256 %s is recorded as is",
                    entry.label, actual)
    return Checked(actual, BY_NOTHING)


def _compare(sha256: str, actual: str, expected: str, against: str, what: str) -> Checked:
    problem = None if actual == expected else f"{what} {actual}, expected {expected}"
    return Checked(sha256, against, problem)
