"""The model manifest: which files make up the model, pinned to repositories and revisions.

The manifest (``wyoming_omnivoice/data/manifest.json``, or ``--manifest``) names every file
with its repository, pinned revision (a commit hash), path in the repository, local name in
the model directory and, where known, its size and SHA-256. Files without a SHA-256 here are
checked against the hub's own hash of the file at the first download (see
:mod:`.verification`).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

from wyoming_omnivoice.engine import ModelError
from wyoming_omnivoice.model.sizes import human_size

_LOGGER = logging.getLogger(__name__)

GROUP_CORE = "core"
GROUP_CLONING = "cloning"
_GROUPS = (GROUP_CORE, GROUP_CLONING)

SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
_REPO_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


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
    #: A rounded size for messages when ``size`` is unknown (never used to check a file).
    approx_size: int | None = None

    @property
    def size_text(self) -> str:
        """The exact size, else "about" the rounded one, else empty."""
        if self.size:
            return human_size(self.size)
        return f"about {human_size(self.approx_size)}" if self.approx_size else ""

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
    if not isinstance(model_dir, str) or not is_safe_relative(model_dir) or "/" in model_dir:
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
            "approx_size",
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
        if not isinstance(file_path, str) or not is_safe_relative(file_path):
            raise fail(f"{where}.path must be a relative path inside the repository")
        local_name = item.get("local_name", file_path)
        if not isinstance(local_name, str) or not is_safe_relative(local_name):
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
        approx = item.get("approx_size")
        if approx is not None and (isinstance(approx, bool) or not isinstance(approx, int)
                                   or approx < 0):
            raise fail(f"{where}.approx_size must be a non-negative integer or null")
        sha256 = item.get("sha256")
        if sha256 is not None:
            if not isinstance(sha256, str) or not SHA256_RE.match(sha256.lower()):
                raise fail(f"{where}.sha256 must be 64 hex digits or null")
            sha256 = sha256.lower()
        role = item.get("role", "")
        if not isinstance(role, str):
            raise fail(f"{where}.role must be a string")
        files.append(
            ManifestFile(
                repo=repo, revision=revision, path=file_path, local_name=local_name,
                group=group, size=size, sha256=sha256, role=role, approx_size=approx,
            )
        )
    return Manifest(source=source, model_dir=model_dir, files=tuple(files))


def is_safe_relative(name: str) -> bool:
    """A relative POSIX path that stays inside its folder (no ``..``, no absolute path)."""
    if not name or "\\" in name or name.startswith("/"):
        return False
    parts = PurePosixPath(name).parts
    return all(part not in ("", ".", "..") for part in parts)
