"""Pinned anchors: a designed voice's anchor kept in a file of its own.

A cached anchor (:mod:`.cache`) is rebuilt by each server from the preset, so its speaker
depends on the precision and steps that server decodes with: an int8 CPU replica and an
fp32 GPU replica of one pool would speak two people under one name. A pinned anchor is made
once (a take picked in the voice studio, or an imported voice) and then only loaded: every
replica that reads the same file, or imports the same exported voice, speaks the same
person. Its identity is its content, never a serving setting.

The file is an ``.npz`` read with ``allow_pickle=False`` (data only): ``format_version``,
``codes`` (int64 ``[8, T]``, values 0..1023) and ``text`` (what the codes say), plus
free-text notes of how it was made (``made_with``), which are shown, never used.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine import NUM_CODEBOOKS

PINNED_FORMAT_VERSION = 1
CODEBOOK_SIZE = 1024
#: Longest anchor accepted (frames at 25 per second): 60 s, far above any real anchor.
MAX_FRAMES = 1500


def check_anchor_codes(codes: Any, where: str) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The codes as int64 ``[8, T]``; ValueError naming ``where`` when they are not."""
    array = np.asarray(codes)
    if array.ndim != 2 or array.shape[0] != NUM_CODEBOOKS or not 1 <= array.shape[1] <= MAX_FRAMES:
        raise ValueError(f"{where}: anchor codes must have shape [{NUM_CODEBOOKS}, 1..{MAX_FRAMES}]"
                         f", got {list(array.shape)}")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{where}: anchor codes must be integers, got {array.dtype}")
    if array.min() < 0 or array.max() >= CODEBOOK_SIZE:
        raise ValueError(f"{where}: anchor codes must lie in 0..{CODEBOOK_SIZE - 1}")
    return array.astype(np.int64)


def check_anchor_text(text: Any, where: str) -> str:
    if not isinstance(text, str) or not text.strip() or len(text) > 1000:
        raise ValueError(f"{where}: the anchor text must be 1 to 1000 characters")
    return text


def save_pinned_anchor(path: Path, anchor: Anchor, made_with: str = "") -> None:
    """Write atomically (temp file, fsync, ``os.replace``)."""
    with atomic_write(path) as handle:
        np.savez(handle, format_version=np.array(PINNED_FORMAT_VERSION, dtype=np.int64),
                 codes=anchor.codes.astype(np.int64), text=np.array(anchor.text),
                 made_with=np.array(made_with))


def load_pinned_anchor(path: Path) -> Anchor:
    """The anchor in ``path``; ValueError naming the file and the fix when it is unusable."""
    where = f"Anchor file {path}"
    try:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["format_version"])
            codes = np.asarray(data["codes"])
            text = str(data["text"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise ValueError(f"{where} is unreadable ({err}); save the voice again in the voice "
                         "studio or import it again") from None
    if version != PINNED_FORMAT_VERSION:
        raise ValueError(f"{where} has format version {version}; this server reads version "
                         f"{PINNED_FORMAT_VERSION}: update the server or re-export the voice")
    return Anchor(codes=check_anchor_codes(codes, where), text=check_anchor_text(text, where))
