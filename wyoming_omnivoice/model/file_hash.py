"""File hashes, read in large blocks: SHA-256 (model files, clone-prompt cache keys) and
the git blob SHA-1 the Hugging Face hub gives as the ETag of files kept in git."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

_BLOCK = 8 * 1024 * 1024


def sha256_file(path: Path, read: Callable[[int], None] | None = None) -> str:
    """Hex SHA-256 of the file's bytes (``read``: told each block's size, for progress)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
            if read is not None:
                read(len(block))
    return digest.hexdigest()


def git_blob_sha1(path: Path) -> str:
    """The git object id of the file as a blob (``git hash-object``): the hub's ETag of a
    file stored in git itself rather than in Git LFS."""
    size = Path(path).stat().st_size
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % size)
    with Path(path).open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()
