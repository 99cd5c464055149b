"""The prepared-backbone store, read at every load: where prepared variants lie (beside the
model, else under the cache folder), their fingerprint, the per-variant lock, the record
(``prepared.json``) checked against the files, and a damaged folder removed. Building a
variant is offline work (:mod:`.offline.prepare`); nothing here imports onnx.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyoming_omnivoice.engine.constants import MAX_POSITIONS
from wyoming_omnivoice.engine.store.external_data import is_linked_folder
from wyoming_omnivoice.engine.store.model_files import BACKBONE, ModelError, ModelPaths
from wyoming_omnivoice.engine.store.prepared_record import (
    GRAPH_FILE,
    INFO_FILE,
    check_files,
    remove_folder,
)

_LOGGER = logging.getLogger(__name__)

#: Bump when a preparation changes what it writes: every prepared backbone is rebuilt.
#: 3: int8 weights in 7 bits (``reduce_range``), the same codes on every x86 host.
#: 4: fp16-fused calibrated (products near fp16's limit kept float32).
PREPARE_VERSION = 4
PREPARED_DIR = "prepared"
#: Bytes of the weights file read from its start and its end for the fingerprint.
_SAMPLE_BYTES = 1 << 20


class NotPreparable(ModelError):
    """The backbone is not in the form this version prepares (the published file may
    still load, or its loading says what is wrong with it)."""


@dataclass(frozen=True)
class PreparedBackbone:
    """One prepared backbone graph and where its weights lie."""

    variant: str
    path: Path
    #: Folder of the graph's external weights (the published folder for ``fp32``).
    weights_dir: Path
    fingerprint: str
    #: Longest input (its rotary table); None: no table, no limit.
    max_positions: int | None
    info: dict[str, Any]

    def model_bytes(self) -> bytes:
        return self.path.read_bytes()


def source_fingerprint(source: Path) -> str:
    """Id of a published backbone: its graph bytes, its weights file's size, modification
    time and first/last MiB, and the preparation version."""
    digest = hashlib.sha256(f"prepare-v{PREPARE_VERSION}".encode())
    digest.update(source.read_bytes())
    data = source.with_name(source.name + ".data")
    if data.is_file():
        stat = data.stat()
        digest.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
        with data.open("rb") as handle:
            digest.update(handle.read(_SAMPLE_BYTES))
            handle.seek(max(0, stat.st_size - _SAMPLE_BYTES))
            digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()[:16]


def prepared_root(source: Path, cache_dir: Path | None = None) -> Path:
    """``<model_dir>/prepared`` when writable (and not a folder of links into a Hugging Face
    cache), else ``<cache_dir>/prepared/<folder id>``."""
    beside = source.parent / PREPARED_DIR
    # A folder of links (a Hugging Face cache snapshot) is not ours to write into.
    linked = is_linked_folder(source.parent, [source.name, source.name + ".data"])
    try:
        if not linked or cache_dir is None:
            beside.mkdir(exist_ok=True)
            if os.access(beside, os.W_OK):
                return beside
    except OSError:
        pass
    if cache_dir is None:
        raise ModelError(
            f"The model folder {source.parent} is read-only, so the prepared backbone cannot "
            "be stored beside it. Give the server a writable --data-dir (or make the folder "
            "writable).")
    folder_id = hashlib.sha256(str(source.parent.resolve()).encode()).hexdigest()[:12]
    root = cache_dir / PREPARED_DIR / folder_id
    root.mkdir(parents=True, exist_ok=True)
    return root


@contextmanager
def variant_lock(root: Path, variant: str) -> Iterator[None]:
    """An exclusive lock per variant (an fp16 build never waits on the fp32 lock)."""
    with (root / f".{variant}.lock").open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def find_prepared(paths: ModelPaths | Path, variant: str, *, root: Path | None = None,
                  cache_dir: Path | None = None) -> PreparedBackbone | None:
    """The prepared variant for the current source, or None when it must be built."""
    source = source_of(paths)
    root = root or prepared_root(source, cache_dir)
    return load_prepared(root / f"{variant}-{source_fingerprint(source)}", source)[0]


def discard_prepared(prepared: PreparedBackbone, reason: str) -> None:
    """Remove a prepared folder that does not load (the next :func:`prepare_backbone`
    builds it again); one warning that says so."""
    folder = prepared.path.parent
    _LOGGER.warning("The prepared %s backbone in %s does not load (%s); the server removes "
                    "it and prepares it again", prepared.variant, folder, reason)
    with variant_lock(folder.parent, prepared.variant):
        remove_folder(folder)


def source_of(paths: ModelPaths | Path) -> Path:
    if isinstance(paths, ModelPaths):
        return paths.root / BACKBONE
    path = Path(paths).expanduser().resolve()
    return path / BACKBONE if path.is_dir() else path


def load_prepared(folder: Path, source: Path) -> tuple[PreparedBackbone | None, str | None]:
    """The prepared backbone in ``folder``, checked against its record; else None and what
    is damaged (None when there is no folder at all)."""
    if not folder.exists():
        return None, None
    try:
        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, f"{INFO_FILE} is missing"
    except (OSError, ValueError) as err:
        return None, f"{INFO_FILE} is unreadable: {err}"
    if not isinstance(info, dict) or info.get("version") != PREPARE_VERSION:
        return None, f"{INFO_FILE} is from another version"
    damage = check_files(folder, info.get("files"))
    if damage is not None:
        return None, damage
    weights = source.parent if info.get("weights") == "source" else folder
    try:
        return PreparedBackbone(variant=str(info["variant"]), path=folder / GRAPH_FILE,
                                weights_dir=weights, fingerprint=str(info["fingerprint"]),
                                max_positions=_max_positions(info),
                                info=info), None
    except (KeyError, TypeError, ValueError) as err:
        return None, f"{INFO_FILE} lacks {err}"


def remove_stale(root: Path, variant: str, keep: str) -> None:
    """Builds of ``variant`` for another source, and leftovers of interrupted builds."""
    # ``<variant>-<fingerprint>``, with ``.tmp-``/``.old-`` and a process id for leftovers:
    # matched whole, so ``fp32`` never takes ``fp32-fused-...`` for one of its own.
    own = re.compile(rf"(\.tmp-|\.old-)?{re.escape(variant)}-[0-9a-f]{{16}}(-\d+)?")
    for folder in root.iterdir():
        stale = own.fullmatch(folder.name) is not None
        if folder.is_dir() and stale and folder.name != keep:
            _LOGGER.info("Removing the outdated prepared backbone %s", folder)
            shutil.rmtree(folder, ignore_errors=True)


def _max_positions(info: dict[str, Any]) -> int | None:
    """A record's longest input: 0 when its rotary table could not be made (no limit);
    records from before that was possible have a table of :data:`MAX_POSITIONS`."""
    value = info.get("max_positions")
    if value == 0:
        return None
    return int(value or MAX_POSITIONS)
