"""The scoring graphs (:mod:`.scoring`) kept on disk once built, so a restart loads them.

Building a scoring graph needs the ``onnx`` package, whose import alone costs about 0.6 s
on a small CPU (its ``ml_dtypes`` dependency), plus parsing the 33 MB heads graph and
composing it: about 0.8 s of a 3 s restart at the real size on 2 cores. A built variant is
written to ``<prepared root>/scoring/`` (beside the prepared backbones: the same folder
rules, model folder or cache dir) under a name keyed by everything it is built from: the
heads file (size, modification time, its first and last MiB), the hidden size, the
variant, the builder's own source (:mod:`.scoring`) and the onnx version. A changed heads
file, a new builder or a new onnx gives a new name; files of other keys are removed when a
variant is written. A file that onnxruntime cannot load is removed and built again.
"""

from __future__ import annotations

import hashlib
import logging
from importlib import metadata
from pathlib import Path

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine.store.model_files import ModelError

_LOGGER = logging.getLogger(__name__)

SCORING_DIR = "scoring"
_SAMPLE_BYTES = 1 << 20


def variant_name(sampling: bool, guided: bool) -> str:
    """``greedy-guided``, ``topk-unguided``, ..."""
    return f"{'topk' if sampling else 'greedy'}-{'guided' if guided else 'unguided'}"


def scoring_key(heads: Path, hidden_size: int, sampling: bool, guided: bool) -> str:
    """Id of one scoring graph built from ``heads`` (see the module)."""
    from wyoming_omnivoice.engine.graphs import scoring
    digest = hashlib.sha256(Path(scoring.__file__).read_bytes())
    try:
        onnx_version = metadata.version("onnx")
    except metadata.PackageNotFoundError:  # pragma: no cover - a dependency
        onnx_version = "?"
    stat = heads.stat()
    digest.update(f"{onnx_version}:{hidden_size}:{variant_name(sampling, guided)}:"
                  f"{stat.st_size}:{stat.st_mtime_ns}".encode())
    with heads.open("rb") as handle:
        digest.update(handle.read(_SAMPLE_BYTES))
        handle.seek(max(0, stat.st_size - _SAMPLE_BYTES))
        digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()[:16]


def cached_scoring_file(folder: Path, heads: Path, hidden_size: int, *, sampling: bool,
                        guided: bool) -> Path:
    """Where this variant's graph is (or will be) kept under ``folder``."""
    key = scoring_key(heads, hidden_size, sampling, guided)
    return folder / SCORING_DIR / f"{variant_name(sampling, guided)}-{key}.onnx"


def build_scoring_bytes(heads: Path, hidden_size: int, *, sampling: bool,
                        guided: bool) -> bytes:
    """The scoring graph built now (imports onnx)."""
    import onnx

    from wyoming_omnivoice.engine.graphs.scoring import build_scoring_model

    try:
        model = onnx.load(str(heads))
    except Exception as err:
        raise ModelError(f"Could not read {heads}: {err}. Download it again.") from err
    return build_scoring_model(model, hidden_size, sampling=sampling, guided=guided)


def keep(path: Path, model: bytes) -> None:
    """Write a built graph to ``path`` and remove the same variant's files of other keys;
    a disk that refuses costs one debug line (the next start builds it again)."""
    variant = path.name.rsplit("-", 1)[0]
    try:
        with atomic_write(path) as handle:
            handle.write(model)
        for old in path.parent.glob(f"{variant}-*.onnx"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as err:
        _LOGGER.debug("Scoring graph not kept in %s: %s", path.parent, err)
