"""What the model download tells a person: file lists, sizes, copy-paste commands."""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_omnivoice.model.sizes import human_size

if TYPE_CHECKING:
    from wyoming_omnivoice.model.manifest import ManifestFile


def describe_files(entries: Iterable[ManifestFile]) -> str:
    """One line per file: local name, repository, revision, path and size; then the total."""
    lines = []
    total = 0
    exact = True
    for entry in entries:
        size = f", {entry.size_text}" if entry.size_text else ""
        total += entry.size or entry.approx_size or 0
        exact = exact and bool(entry.size)
        lines.append(
            f"  - {entry.local_name}  ({entry.repo} revision {entry.revision}, "
            f"path {entry.path}{size})"
        )
    if len(lines) > 1 and total:
        lines.append(f"  ({'' if exact else 'about '}{human_size(total)} in all)")
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
