"""Model download: the pinned file set of the manifest, fetched with huggingface_hub.

Guarantees:

- the model directory only ever holds verified files: a file is downloaded into a staging
  folder next to it, checked (:mod:`.verification`: the manifest's size and SHA-256, else
  the hub's ETag) and only then moved into place with ``os.replace``;
- files are real files with the basenames the graphs' external-data references expect (no
  cache symlinks);
- a truncated or corrupted file is fetched again; what was verified is recorded
  (``.verified.json``), so later starts check against it without the network;
- a file already in the local Hugging Face cache (``hf download`` without ``--local-dir``)
  is taken from there, checked like a download, hard-linked where the cache shares the file
  system (else copied), never fetched again;
- with ``HF_HUB_OFFLINE=1`` nothing is fetched: missing files give one ``ModelError``
  listing them with their repositories and a copy-paste download command.

:func:`check_model_dir` checks a folder given with ``--model-dir`` without changing it.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from wyoming_omnivoice.atomic import TEMP_PID_MARK, remove_stale_temp_files
from wyoming_omnivoice.engine import (
    CAUSAL_DECODER_HELP,
    CAUSAL_DECODER_NAMES,
    CLONING_FILES,
    REQUIRED_FILES,
    ModelError,
    layout_problems,
)
from wyoming_omnivoice.model.download_help import describe_files, download_commands
from wyoming_omnivoice.model.hub_access import quiet_hub_logs, unreachable_reason
from wyoming_omnivoice.model.manifest import ManifestError, ManifestFile, load_manifest
from wyoming_omnivoice.model.verification import (
    VERIFIED_SIDECAR,
    VerifiedRecord,
    check_download,
    file_is_valid,
)

__all__ = ["VERIFIED_SIDECAR", "ManifestError", "check_model_dir", "ensure_model",
           "load_manifest"]

_LOGGER = logging.getLogger(__name__)

#: Sub-folder of ``--data-dir`` that holds model directories.
MODELS_SUBDIR = "models"
#: Staging folder (under ``<data-dir>/models``) for files being downloaded.
STAGING_DIR = ".download"
#: Temp files of copies from the Hugging Face cache (a crash may leave one).
CACHE_COPY_PREFIX = ".cache-copy."


def ensure_model(
    data_dir: Path,
    *,
    include_cloning: bool = False,
    manifest: Path | None = None,
) -> Path:
    """Make ``<data_dir>/models/<model_dir>`` hold the verified model set; return that dir.

    Files already present and intact are kept; missing, truncated or corrupted ones are
    downloaded (the cloning encoders only when ``include_cloning``). Raises ``ModelError``
    when files are missing and cannot be downloaded (offline mode, network error, bad
    content), listing the files and a command that fetches them.
    """
    spec = load_manifest(manifest)
    models_root = Path(data_dir).expanduser().resolve() / MODELS_SUBDIR
    model_dir = models_root / spec.model_dir
    model_dir.mkdir(parents=True, exist_ok=True)
    record = VerifiedRecord(model_dir)
    for folder in {model_dir} | {(model_dir / e.local_name).parent for e in spec.files}:
        remove_stale_temp_files(folder, f"{CACHE_COPY_PREFIX}*")  # left by a crash

    wanted = spec.select(include_cloning=include_cloning)
    todo = [entry for entry in wanted if not file_is_valid(model_dir, entry, record)]
    # A model fetched before with `hf download` sits in the Hugging Face cache: verified,
    # it is taken from there (linked where it can be) instead of downloaded again.
    todo = [entry for entry in todo if not _take_from_hub_cache(entry, model_dir, record)]
    if todo and _offline():
        raise ModelError(
            f"Model files are missing or damaged in {model_dir} and downloads are disabled "
            f"(HF_HUB_OFFLINE=1):\n{describe_files(todo)}\n"
            "Unset HF_HUB_OFFLINE to let the server download them, or fetch them on a "
            "machine with network access and copy them into that folder:\n"
            + download_commands(todo, model_dir)
        )
    if todo and (reason := unreachable_reason(_hub_url(), todo[0].repo, todo[0].revision,
                                              todo[0].path)):
        raise _download_failed(todo[0], reason, todo, model_dir)  # fast: no back-off retries
    with quiet_hub_logs():
        for index, entry in enumerate(todo):
            try:
                _fetch(entry, model_dir, models_root, record,
                       f"file {index + 1} of {len(todo)}")
            except ModelError:
                raise
            except Exception as err:  # network, HTTP and disk errors from huggingface_hub
                raise _download_failed(entry, str(err), todo[index:], model_dir) from err
    check_model_dir(model_dir, include_cloning=include_cloning)
    if todo:
        _LOGGER.info("Model ready in %s", model_dir)
    return model_dir


def _download_failed(entry: ManifestFile, cause: str, remaining: list[ManifestFile],
                     model_dir: Path) -> ModelError:
    return ModelError(
        f"Could not download {entry.path} from {entry.repo} at revision {entry.revision}: "
        f"{cause}\nStill missing from {model_dir}:\n{describe_files(remaining)}\n"
        "Check the network (or HF_ENDPOINT / proxy settings) and start again, or fetch the "
        "files yourself:\n" + download_commands(remaining, model_dir)
    )


# --------------------------------------------------------------------------- fetching


def _offline() -> bool:
    """HF_HUB_OFFLINE, read now (huggingface_hub itself reads it once, at import)."""
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(name, "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
            return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _endpoint() -> str | None:
    value = os.environ.get("HF_ENDPOINT", "").strip()
    return value.rstrip("/") or None


def _hub_url() -> str:
    from huggingface_hub import constants

    return _endpoint() or str(constants.ENDPOINT)


def _staging_dir(models_root: Path, entry: ManifestFile) -> Path:
    return models_root / STAGING_DIR / entry.repo.replace("/", "--") / entry.revision


def _hub_etag(stage: Path, entry: ManifestFile) -> str | None:
    """The ETag the hub sent for a file downloaded into ``stage``, if recorded."""
    try:
        from huggingface_hub._local_folder import read_download_metadata

        metadata = read_download_metadata(stage, entry.path)
    except Exception as err:  # private helper: never let it break a download
        _LOGGER.debug("No download metadata for %s: %s", entry.label, err)
        return None
    return metadata.etag if metadata is not None else None


def _fetch(entry: ManifestFile, model_dir: Path, models_root: Path,
           record: VerifiedRecord, place: str = "") -> None:
    """Download one file, verify it in the staging folder and move it into the model dir
    (``place``: ``file 2 of 9``, for the progress lines)."""
    from huggingface_hub import hf_hub_download

    # Imported here: it imports huggingface_hub, which a restart (files verified) never does.
    from wyoming_omnivoice.model.download_progress import bar_class

    stage = _staging_dir(models_root, entry)
    stage.mkdir(parents=True, exist_ok=True)
    size_text = f" ({entry.size_text})" if entry.size_text else ""
    where = f", {place}" if place else ""
    _LOGGER.info("Downloading %s%s from %s%s", entry.local_name, size_text, entry.label, where)
    bar = bar_class(f"Downloading {entry.local_name}" + (f" ({place})" if place else ""),
                    entry.size or entry.approx_size)
    problem = ""
    for attempt in (1, 2):
        downloaded = Path(
            hf_hub_download(
                repo_id=entry.repo,
                filename=entry.path,
                revision=entry.revision,
                local_dir=stage,
                endpoint=_endpoint(),
                force_download=attempt > 1,
                tqdm_class=bar,
            )
        )
        checked = check_download(downloaded, entry, _hub_etag(stage, entry))
        if checked.problem is None:
            destination = model_dir / entry.local_name
            destination.parent.mkdir(parents=True, exist_ok=True)
            record.forget(entry.local_name)
            os.replace(downloaded, destination)
            record.put(entry, destination, checked)
            _LOGGER.info("Stored %s (checked against the %s)", destination, checked.against)
            return
        problem = checked.problem
        _LOGGER.warning("Download of %s is bad (%s); attempt %d of 2", entry.label, problem,
                        attempt)
        downloaded.unlink(missing_ok=True)
    raise ModelError(
        f"The download of {entry.path} from {entry.repo} at revision {entry.revision} does not "
        f"match the manifest ({problem}), twice. The repository content changed or the "
        f"manifest {entry.local_name!r} entry is wrong; nothing was written to {model_dir}."
    )


def _take_from_hub_cache(entry: ManifestFile, model_dir: Path, record: VerifiedRecord) -> bool:
    """Take the file from the huggingface_hub cache when it is there and intact.

    The cache names each blob by the hub's ETag, so the file is checked like a download.
    It is hard-linked into the model folder where the two share a file system (no second
    copy of 2 GB; blobs are never changed in place), else copied.
    """
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(entry.repo, entry.path, revision=entry.revision)
    except Exception as err:  # a broken cache must not hide the real error message
        _LOGGER.debug("Hub cache lookup failed for %s: %s", entry.label, err)
        return False
    if not isinstance(cached, str):
        return False
    source = Path(cached)
    destination = model_dir / entry.local_name
    destination.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f"{CACHE_COPY_PREFIX}{TEMP_PID_MARK}{os.getpid()}.",
                                    dir=destination.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    how = "Linked"
    try:
        try:
            tmp.unlink()
            os.link(source.resolve(), tmp)
        except OSError:  # another file system, or links not allowed: a real copy
            how = "Copied"
            shutil.copyfile(source, tmp)  # follows the cache symlink: a real file
        checked = check_download(tmp, entry, source.resolve().name)
        if checked.problem is not None:
            _LOGGER.warning("Cached copy of %s is unusable: %s", entry.label, checked.problem)
            return False
        os.replace(tmp, destination)
        record.put(entry, destination, checked)
        _LOGGER.info("%s %s from the Hugging Face cache (%s)", how, entry.local_name, source)
        return True
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- model dir check


def check_model_dir(model_dir: Path, *, include_cloning: bool = False) -> None:
    """Check that a model directory is complete enough to load, without changing it.

    Every graph the engine loads (and the cloning encoders when ``include_cloning``) must be
    present, and every external-data file a graph references must exist inside the folder
    and be long enough for the tensors stored in it. Raises ``ModelError`` listing every
    problem and how to fix it.
    """
    root = Path(model_dir).expanduser()
    if not root.is_dir():
        raise ModelError(
            f"Model directory {root} does not exist. Pass the folder that holds "
            f"{', '.join(REQUIRED_FILES)}, or drop --model-dir and let the server download "
            "the model into --data-dir."
        )
    names = list(REQUIRED_FILES) + (list(CLONING_FILES) if include_cloning else [])
    problems = layout_problems(root, names)
    if not problems:
        return
    missing = [problem.missing for problem in problems if problem.missing is not None]
    lines = [f"Model directory {root} is not usable:"]
    lines += [f"  - {problem.message}" for problem in problems]
    if "llm_backbone_fp32.onnx" in missing and any(
        (root / name).exists() for name in CAUSAL_DECODER_NAMES
    ):
        lines.append(f"The folder holds llm_decoder.onnx: {CAUSAL_DECODER_HELP}")
    known = _default_manifest_entries()
    fixable = [known[name] for name in missing if name in known]
    lines.append(
        "Drop --model-dir to let the server download and verify the model into --data-dir"
        + (", or fetch the missing files:" if fixable else ".")
    )
    if fixable:
        lines.append(download_commands(fixable, root))
    raise ModelError("\n".join(lines))


def _default_manifest_entries() -> dict[str, ManifestFile]:
    try:
        return load_manifest().by_local_name()
    except ModelError as err:  # a broken packaged manifest must not hide the real problem
        _LOGGER.warning("%s", err)
        return {}
