"""Model download: the pinned file set of the manifest, fetched with huggingface_hub.

The manifest (``wyoming_omnivoice/data/manifest.json``, or a file given on the command line)
names every file with its repository, pinned revision, path in the repository, local name in
the model directory and, where known, its size and SHA-256.

Guarantees:

- the model directory only ever holds verified files: a file is downloaded into a staging
  folder next to it, checked (size, SHA-256 from the manifest or the hub's LFS ETag) and only
  then moved into place with ``os.replace``;
- files are real files with the basenames the graphs' external-data references expect (no
  cache symlinks);
- a truncated or corrupted file (size or hash mismatch) is fetched again;
- hashes are cached in a small sidecar (``.verified.json``) keyed by size and mtime, so the
  1.7 GB backbone weights are not re-hashed at every start;
- with ``HF_HUB_OFFLINE=1`` nothing is fetched: missing files give one ``ModelError`` listing
  them with their repositories and a copy-paste download command.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine.model_files import (
    CAUSAL_DECODER_HELP,
    CAUSAL_DECODER_NAMES,
    CLONING_FILES,
    REQUIRED_FILES,
    ModelError,
)

_LOGGER = logging.getLogger(__name__)

#: Sub-folder of ``--data-dir`` that holds model directories.
MODELS_SUBDIR = "models"
#: Staging folder (under ``<data-dir>/models``) for files being downloaded.
STAGING_DIR = ".download"
#: Sidecar in the model directory recording the verified size, mtime and hash of each file.
VERIFIED_SIDECAR = ".verified.json"

GROUP_CORE = "core"
GROUP_CLONING = "cloning"
_GROUPS = (GROUP_CORE, GROUP_CLONING)

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
#: ONNX graphs larger than this hold their weights inline; their external data is not checked.
_MAX_GRAPH_PARSE_BYTES = 64 * 1024 * 1024
_HASH_CHUNK = 8 * 1024 * 1024


# --------------------------------------------------------------------------- manifest


class ManifestError(ModelError):
    """The model manifest is unreadable or does not follow the expected format."""


@dataclass(frozen=True)
class ManifestFile:
    """One file of the model set."""

    repo: str
    revision: str
    path: str
    local_name: str
    group: str = GROUP_CORE
    size: int | None = None
    sha256: str | None = None
    role: str = ""

    @property
    def label(self) -> str:
        return f"{self.repo}@{self.revision[:12]}:{self.path}"


@dataclass(frozen=True)
class Manifest:
    """The validated content of a manifest file."""

    source: str
    model_dir: str
    files: tuple[ManifestFile, ...]

    def select(self, *, include_cloning: bool = False) -> list[ManifestFile]:
        groups = {GROUP_CORE, GROUP_CLONING} if include_cloning else {GROUP_CORE}
        return [entry for entry in self.files if entry.group in groups]

    def by_local_name(self) -> dict[str, ManifestFile]:
        return {entry.local_name: entry for entry in self.files}


def default_manifest_path() -> Path:
    """The manifest shipped inside the package."""
    return Path(str(resources.files("wyoming_omnivoice.data") / "manifest.json"))


def load_manifest(path: str | Path | None = None) -> Manifest:
    """Read and validate a manifest (the packaged one when ``path`` is None).

    Raises ``ManifestError`` (a ``ModelError``) naming the file and the faulty entry.
    """
    source = Path(path).expanduser() if path is not None else default_manifest_path()
    try:
        raw = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise ManifestError(f"Model manifest {source} does not exist.") from err
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ManifestError(f"Model manifest {source} is not readable JSON: {err}") from err
    return parse_manifest(raw, source=str(source))


def parse_manifest(raw: Any, *, source: str = "<manifest>") -> Manifest:
    """Validate the decoded JSON of a manifest."""

    def fail(message: str) -> ManifestError:
        return ManifestError(f"Model manifest {source}: {message}")

    if not isinstance(raw, dict):
        raise fail("the top level must be a JSON object")
    if raw.get("format", 1) != 1:
        raise fail(f"unsupported format {raw.get('format')!r} (expected 1)")
    model_dir = raw.get("model_dir", "omnivoice")
    if not isinstance(model_dir, str) or not _is_safe_relative(model_dir) or "/" in model_dir:
        raise fail(f"'model_dir' must be a plain folder name, got {model_dir!r}")
    items = raw.get("files")
    if not isinstance(items, list) or not items:
        raise fail("'files' must be a non-empty list")

    files: list[ManifestFile] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"files[{index}]"
        if not isinstance(item, dict):
            raise fail(f"{where} must be an object")
        unknown = set(item) - {
            "repo", "revision", "path", "local_name", "group", "size", "sha256", "role",
        }
        if unknown:
            raise fail(f"{where} has unknown keys {sorted(unknown)}")
        repo = item.get("repo")
        if not isinstance(repo, str) or not _REPO_RE.match(repo):
            raise fail(f"{where}.repo must look like 'owner/name', got {repo!r}")
        revision = item.get("revision")
        if not isinstance(revision, str) or not revision.strip():
            raise fail(f"{where}.revision must be a non-empty string (a commit hash)")
        if not _COMMIT_RE.match(revision):
            _LOGGER.warning(
                "Manifest %s: %s pins %s to %r, which is not a commit hash; the files may "
                "change under you", source, where, repo, revision,
            )
        file_path = item.get("path")
        if not isinstance(file_path, str) or not _is_safe_relative(file_path):
            raise fail(f"{where}.path must be a relative path inside the repository")
        local_name = item.get("local_name", file_path)
        if not isinstance(local_name, str) or not _is_safe_relative(local_name):
            raise fail(f"{where}.local_name must be a relative path inside the model directory")
        if local_name in seen:
            raise fail(f"{where}.local_name {local_name!r} appears twice")
        seen.add(local_name)
        group = item.get("group", GROUP_CORE)
        if group not in _GROUPS:
            raise fail(f"{where}.group must be one of {list(_GROUPS)}, got {group!r}")
        size = item.get("size")
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise fail(f"{where}.size must be a non-negative integer or null")
        sha256 = item.get("sha256")
        if sha256 is not None:
            if not isinstance(sha256, str) or not _SHA256_RE.match(sha256.lower()):
                raise fail(f"{where}.sha256 must be 64 hex digits or null")
            sha256 = sha256.lower()
        role = item.get("role", "")
        if not isinstance(role, str):
            raise fail(f"{where}.role must be a string")
        files.append(
            ManifestFile(
                repo=repo, revision=revision, path=file_path, local_name=local_name,
                group=group, size=size, sha256=sha256, role=role,
            )
        )
    return Manifest(source=source, model_dir=model_dir, files=tuple(files))


def _is_safe_relative(name: str) -> bool:
    if not name or "\\" in name or name.startswith("/"):
        return False
    parts = PurePosixPath(name).parts
    return all(part not in ("", ".", "..") for part in parts)


# --------------------------------------------------------------------------- verification


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in large chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class _VerifiedRecord:
    """The sidecar of verified hashes in a model directory, keyed by size and mtime."""

    def __init__(self, model_dir: Path) -> None:
        self._path = model_dir / VERIFIED_SIDECAR
        self._entries: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            files = data.get("files", {}) if isinstance(data, dict) else {}
            if isinstance(files, dict):
                self._entries = {k: v for k, v in files.items() if isinstance(v, dict)}
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as err:
            _LOGGER.warning("Ignoring unreadable %s (%s); files will be re-hashed", self._path, err)

    def lookup(self, name: str, stat: os.stat_result) -> str | None:
        """The recorded hash when the file still has the size and mtime it had then."""
        entry = self._entries.get(name)
        if (
            entry is not None
            and entry.get("size") == stat.st_size
            and entry.get("mtime_ns") == stat.st_mtime_ns
            and isinstance(entry.get("sha256"), str)
        ):
            return entry["sha256"]
        return None

    def recorded_hash(self, name: str) -> str | None:
        entry = self._entries.get(name)
        value = entry.get("sha256") if entry else None
        return value if isinstance(value, str) else None

    def recorded_size(self, name: str) -> int | None:
        entry = self._entries.get(name)
        value = entry.get("size") if entry else None
        return value if isinstance(value, int) else None

    def put(self, name: str, path: Path, sha256: str) -> None:
        stat = path.stat()
        self._entries[name] = {
            "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": sha256,
        }
        self._save()

    def forget(self, name: str) -> None:
        if self._entries.pop(name, None) is not None:
            self._save()

    def _save(self) -> None:
        payload = json.dumps({"format": 1, "files": self._entries}, indent=1, sort_keys=True)
        _atomic_write_text(self._path, payload + "\n")


def _atomic_write_text(path: Path, text: str) -> None:
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _file_is_valid(model_dir: Path, entry: ManifestFile, record: _VerifiedRecord) -> bool:
    """Whether the local copy of ``entry`` is present and intact (hashing only when needed)."""
    path = model_dir / entry.local_name
    if not path.is_file():
        return False
    stat = path.stat()
    expected_size = entry.size if entry.size is not None else record.recorded_size(entry.local_name)
    if expected_size is not None and stat.st_size != expected_size:
        _LOGGER.warning(
            "%s has %d bytes instead of %d (truncated or corrupted): fetching it again",
            path, stat.st_size, expected_size,
        )
        return False
    cached = record.lookup(entry.local_name, stat)
    expected_hash = entry.sha256 or record.recorded_hash(entry.local_name)
    if cached is not None and (expected_hash is None or cached == expected_hash):
        return True
    _LOGGER.info("Verifying %s (%s)", entry.local_name, _human_size(stat.st_size))
    actual = sha256_file(path)
    if expected_hash is not None and actual != expected_hash:
        _LOGGER.warning(
            "%s has SHA-256 %s instead of %s (corrupted): fetching it again",
            path, actual, expected_hash,
        )
        return False
    record.put(entry.local_name, path, actual)
    return True


# --------------------------------------------------------------------------- download


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


def _staging_dir(models_root: Path, entry: ManifestFile) -> Path:
    return models_root / STAGING_DIR / entry.repo.replace("/", "--") / entry.revision


def _hub_etag_sha256(stage: Path, entry: ManifestFile) -> str | None:
    """The SHA-256 the hub announced for an LFS file (its ETag), if recorded."""
    try:
        from huggingface_hub._local_folder import read_download_metadata

        metadata = read_download_metadata(stage, entry.path)
    except Exception as err:  # private helper: never let it break a download
        _LOGGER.debug("No download metadata for %s: %s", entry.label, err)
        return None
    etag = (metadata.etag if metadata else "").strip('"').lower()
    return etag if _SHA256_RE.match(etag) else None


def _check_download(
    path: Path, entry: ManifestFile, stage: Path | None
) -> tuple[str | None, str]:
    """Return (problem, sha256) for a fetched file; problem is None when it is good.

    The reference hash is the manifest's, else the hub's LFS ETag recorded in ``stage``.
    """
    size = path.stat().st_size
    if entry.size is not None and size != entry.size:
        return f"size {size} bytes, expected {entry.size}", ""
    _LOGGER.info("Verifying %s (%s)", entry.local_name, _human_size(size))
    actual = sha256_file(path)
    expected = entry.sha256 or (_hub_etag_sha256(stage, entry) if stage else None)
    if expected is not None and actual != expected:
        return f"SHA-256 {actual}, expected {expected}", actual
    return None, actual


def _fetch(
    entry: ManifestFile, model_dir: Path, models_root: Path, record: _VerifiedRecord
) -> None:
    """Download one file, verify it in the staging folder and move it into the model dir."""
    from huggingface_hub import hf_hub_download

    stage = _staging_dir(models_root, entry)
    stage.mkdir(parents=True, exist_ok=True)
    size_text = f" ({_human_size(entry.size)})" if entry.size else ""
    _LOGGER.info("Downloading %s%s from %s", entry.local_name, size_text, entry.label)
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
            )
        )
        bad, digest = _check_download(downloaded, entry, stage)
        if bad is None:
            destination = model_dir / entry.local_name
            destination.parent.mkdir(parents=True, exist_ok=True)
            record.forget(entry.local_name)
            os.replace(downloaded, destination)
            record.put(entry.local_name, destination, digest)
            _LOGGER.info("Stored %s", destination)
            return
        problem = bad
        _LOGGER.warning("Download of %s is bad (%s); attempt %d of 2", entry.label, bad, attempt)
        downloaded.unlink(missing_ok=True)
    raise ModelError(
        f"The download of {entry.path} from {entry.repo} at revision {entry.revision} does not "
        f"match the manifest ({problem}), twice. The repository content changed or the "
        f"manifest {entry.local_name!r} entry is wrong; nothing was written to {model_dir}."
    )


def _copy_from_hub_cache(entry: ManifestFile, model_dir: Path, record: _VerifiedRecord) -> bool:
    """Offline: take the file from the huggingface_hub cache when it is there and intact."""
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
    fd, tmp_name = tempfile.mkstemp(prefix=".cache-copy.", dir=destination.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        shutil.copyfile(source, tmp)  # follows the cache symlink: a real file
        problem, digest = _check_download(tmp, entry, None)
        if problem is not None:
            _LOGGER.warning("Cached copy of %s is unusable: %s", entry.label, problem)
            return False
        os.replace(tmp, destination)
        record.put(entry.local_name, destination, digest)
        _LOGGER.info("Copied %s from the Hugging Face cache", entry.local_name)
        return True
    finally:
        tmp.unlink(missing_ok=True)


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
    record = _VerifiedRecord(model_dir)

    wanted = spec.select(include_cloning=include_cloning)
    todo = [entry for entry in wanted if not _file_is_valid(model_dir, entry, record)]
    if todo and _offline():
        todo = [entry for entry in todo if not _copy_from_hub_cache(entry, model_dir, record)]
        if todo:
            raise ModelError(
                f"Model files are missing or damaged in {model_dir} and downloads are disabled "
                f"(HF_HUB_OFFLINE=1):\n{_describe_files(todo)}\n"
                "Unset HF_HUB_OFFLINE to let the server download them, or fetch them on a "
                "machine with network access and copy them into that folder:\n"
                + download_commands(todo, model_dir)
            )
    for index, entry in enumerate(todo):
        try:
            _fetch(entry, model_dir, models_root, record)
        except ModelError:
            raise
        except Exception as err:  # network, HTTP and disk errors from huggingface_hub
            remaining = todo[index:]
            raise ModelError(
                f"Could not download {entry.path} from {entry.repo} at revision "
                f"{entry.revision}: {err}\nStill missing from {model_dir}:\n"
                f"{_describe_files(remaining)}\nCheck the network (or HF_ENDPOINT / proxy "
                "settings) and start again, or fetch the files yourself:\n"
                + download_commands(remaining, model_dir)
            ) from err
    check_model_dir(model_dir, include_cloning=include_cloning)
    if todo:
        _LOGGER.info("Model ready in %s", model_dir)
    return model_dir


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
    missing = [name for name in names if not (root / name).is_file()]
    issues: list[_Issue] = [_Issue(f"missing {name}", missing_name=name) for name in missing]
    for name in names:
        if name in missing or not name.endswith(".onnx"):
            continue
        for issue in _external_data_problems(root, root / name):
            issues.append(issue)
            if issue.missing_name is not None and issue.missing_name not in missing:
                missing.append(issue.missing_name)
    if not issues:
        return

    lines = [f"Model directory {root} is not usable:"]
    lines += [f"  - {issue.message}" for issue in issues]
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


@dataclass(frozen=True)
class _Issue:
    message: str
    missing_name: str | None = None


def _external_data_problems(root: Path, graph: Path) -> list[_Issue]:
    """Missing, escaping or too short external-data files referenced by one ONNX graph."""
    try:
        if graph.stat().st_size > _MAX_GRAPH_PARSE_BYTES:
            return []
        import onnx

        model = onnx.load(str(graph), load_external_data=False)
    except Exception as err:  # protobuf raises its own error types
        name = graph.relative_to(root)
        return [_Issue(f"{name} is not a readable ONNX file ({err}); download it again")]

    needed: dict[str, int] = {}
    for tensor in _all_tensors(model.graph):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        info = {item.key: item.value for item in tensor.external_data}
        location = info.get("location", "")
        end = int(info.get("offset", 0) or 0) + int(info.get("length", 0) or 0)
        needed[location] = max(needed.get(location, 0), end)

    issues: list[_Issue] = []
    graph_name = graph.relative_to(root).as_posix()
    base = graph.parent
    for location, end in sorted(needed.items()):
        target = (base / location).resolve()
        try:
            relative = target.relative_to(root.resolve()).as_posix()
        except ValueError:
            issues.append(_Issue(
                f"{graph_name} points at external data {location!r} outside the model folder"
            ))
            continue
        if not target.is_file():
            issues.append(_Issue(
                f"missing {relative} (external data of {graph_name})", missing_name=relative
            ))
        elif target.stat().st_size < end:
            issues.append(_Issue(
                f"{relative} has {target.stat().st_size} bytes but {graph_name} needs {end} "
                "(truncated): download it again"
            ))
    return issues


def _all_tensors(graph: Any) -> Iterator[Any]:
    """Initializers and tensor attributes of a graph and its sub-graphs."""
    yield from graph.initializer
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("g"):
                yield from _all_tensors(attr.g)
            for sub in attr.graphs:
                yield from _all_tensors(sub)


def _default_manifest_entries() -> dict[str, ManifestFile]:
    try:
        return load_manifest().by_local_name()
    except ModelError as err:  # a broken packaged manifest must not hide the real problem
        _LOGGER.warning("%s", err)
        return {}


# --------------------------------------------------------------------------- messages


def _describe_files(entries: Iterable[ManifestFile]) -> str:
    lines = []
    for entry in entries:
        size = f", {_human_size(entry.size)}" if entry.size else ""
        lines.append(
            f"  - {entry.local_name}  ({entry.repo} revision {entry.revision}, "
            f"path {entry.path}{size})"
        )
    return "\n".join(lines)


def download_commands(entries: Iterable[ManifestFile], model_dir: Path) -> str:
    """Copy-paste ``hf download`` commands that put ``entries`` into ``model_dir``."""
    groups: dict[tuple[str, str], list[ManifestFile]] = {}
    for entry in entries:
        groups.setdefault((entry.repo, entry.revision), []).append(entry)
    lines = []
    for (repo, revision), members in groups.items():
        paths = " ".join(shlex.quote(entry.path) for entry in members)
        lines.append(
            f"  hf download {repo} {paths} --revision {revision} "
            f"--local-dir {shlex.quote(str(model_dir))}"
        )
        for entry in members:
            if entry.local_name != entry.path:
                lines.append(
                    f"  mv {shlex.quote(str(model_dir / entry.path))} "
                    f"{shlex.quote(str(model_dir / entry.local_name))}"
                )
    lines.append("  (`hf` comes with huggingface_hub; older releases call it `huggingface-cli`.)")
    return "\n".join(lines)


def _human_size(size: int | None) -> str:
    if size is None:
        return "unknown size"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"
