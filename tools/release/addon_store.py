"""What the Supervisor's add-on store reads from this repository, checked as it reads it.

How the store finds things (home-assistant/supervisor, commit 090ef31, 2026-08-21; facts
read from the source, no code copied):

- ``supervisor/store/data.py``: a repository added by URL is cloned; its description is the
  first ``repository.(yaml|yml|json)`` that a recursive search finds (the developer docs:
  at the root). Its add-ons are **every** ``config.(yaml|yml|json)`` at any depth whose path
  has no part starting with ``.`` and no ``rootfs`` part; the file's folder is the add-on's
  folder, and the build context when it is built. A config that fails validation is
  skipped with a log line. Translations are ``translations/LANG.(yaml|yml|json)``.
- ``supervisor/apps/model.py``: the store shows ``icon.png``, ``logo.png``, ``README.md``
  (the intro), ``DOCS.md`` and ``CHANGELOG.md`` of the add-on's folder; ``image`` in
  config.yaml means "pull", its absence means "build here".
- ``supervisor/apps/build.py``: ``Dockerfile.ARCH`` before ``Dockerfile``; the first
  ``build.(yaml|yml|json)`` found under the folder.

The developer docs (add-ons/presentation.md) ask for a square ``icon.png`` (128x128
recommended) and a ``logo.png`` of about 250x100.

So a stray ``config.json`` anywhere in the repository would show up as a broken add-on;
:func:`repository_problems` reports it. Run ``python -m tools.release.addon_store`` for the
whole repository (the files ``git ls-files`` lists: what a clone holds), or with a folder
(the one ``tools.release.addon_folder`` writes).
"""

from __future__ import annotations

import argparse
import struct
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from tools.release import supervisor_schema as schema

ROOT = Path(__file__).resolve().parents[2]
SUFFIXES = (".yaml", ".yml", ".json")
#: The one add-on this repository holds.
ADDON_FOLDER = PurePosixPath("docker/addon")
ICON_SIZE = (128, 128)
PRESENTATION = ("icon.png", "logo.png", "README.md", "DOCS.md", "CHANGELOG.md")


def tracked_files(root: Path = ROOT) -> list[PurePosixPath]:
    """The files a clone of this repository holds (``git ls-files``)."""
    listing = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True, timeout=60).stdout.decode()
    return [PurePosixPath(name) for name in listing.split("\0") if name]


def repository_files(files: list[PurePosixPath]) -> list[PurePosixPath]:
    """Every file the store could take as the repository's description."""
    return [f for f in files if f.stem == "repository" and f.suffix in SUFFIXES]


def addon_configs(files: list[PurePosixPath]) -> list[PurePosixPath]:
    """Every file the store reads as an add-on's config."""
    return [f for f in files if f.stem == "config" and f.suffix in SUFFIXES
            and not any(part.startswith(".") or part == "rootfs" for part in f.parts)]


def png_size(path: Path) -> tuple[int, int] | None:
    """A PNG's width and height from its header, or None when it is not a PNG."""
    head = path.read_bytes()[:24]
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return int(width), int(height)


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def folder_problems(folder: Path) -> list[str]:
    """An add-on folder as the store and the Supervisor's build read it."""
    config_path = folder / "config.yaml"
    if not config_path.is_file():
        return [f"{folder}: no config.yaml"]
    config = load(config_path)
    problems = [f"config.yaml: {p}" for p in schema.config_problems(config)]
    arches = [a for a in (config.get("arch") or []) if isinstance(a, str)] \
        if isinstance(config, dict) else []
    builds = sorted(p for p in folder.rglob("build.*") if p.suffix in SUFFIXES)
    if len(builds) > 1:
        problems.append(f"several build files, the Supervisor takes any one: {builds}")
    for build in builds:
        problems += [f"{build.name}: {p}" for p in schema.build_problems(load(build), arches)]
    if not any((folder / name).is_file() for name in ("Dockerfile",
                                                       *(f"Dockerfile.{a}" for a in arches))):
        problems.append("no Dockerfile")
    translations = sorted(p for p in (folder / "translations").glob("*") if p.suffix in SUFFIXES)
    if not translations:
        problems.append("translations: none (the options show their raw names)")
    for path in translations:
        problems += [f"translations/{path.name}: {p}"
                     for p in schema.translation_problems(load(path))]
    if not (folder / "wheels").is_dir():
        problems.append("wheels/: missing (the Dockerfile installs the wheel from it)")
    for name in PRESENTATION:
        if not (folder / name).is_file():
            problems.append(f"{name}: missing (the store shows it)")
    problems += _image_problems(folder)
    return problems


def _image_problems(folder: Path) -> list[str]:
    problems = []
    icon, logo = folder / "icon.png", folder / "logo.png"
    if icon.is_file():
        size = png_size(icon)
        if size is None or size[0] != size[1]:
            problems.append(f"icon.png: must be a square PNG (is {size})")
        elif size != ICON_SIZE:
            problems.append(f"icon.png: {size[0]}x{size[1]}, the docs ask for 128x128")
    if logo.is_file():
        size = png_size(logo)
        if size is None:
            problems.append("logo.png: not a PNG")
        elif not (size[0] > size[1] and 150 <= size[0] <= 500):
            problems.append(f"logo.png: {size[0]}x{size[1]}, the docs suggest about 250x100")
    return problems


def repository_problems(root: Path = ROOT) -> list[str]:
    """The repository as the store reads it: one repository.yaml at the root, exactly the
    add-on folders meant, each of them sound."""
    files = tracked_files(root)
    problems = []
    found = repository_files(files)
    if found != [PurePosixPath("repository.yaml")]:
        problems.append(f"repository files {[str(f) for f in found]}: want repository.yaml "
                        "at the root and no other")
    else:
        problems += [f"repository.yaml: {p}"
                     for p in schema.repository_problems(load(root / "repository.yaml"))]
    configs = addon_configs(files)
    if configs != [ADDON_FOLDER / "config.yaml"]:
        problems.append(f"add-on configs {[str(c) for c in configs]}: the store would list "
                        f"each; want only {ADDON_FOLDER / 'config.yaml'}")
    tracked = set(files)
    for config in configs:
        folder = root / config.parent
        problems += [f"{config.parent}/{p}" for p in folder_problems(folder)]
        untracked = [p.relative_to(root) for p in folder.rglob("*")
                     if p.is_file() and PurePosixPath(p.relative_to(root).as_posix())
                     not in tracked and "__pycache__" not in p.parts]
        problems += [f"{path}: in the add-on folder but not committed (a clone lacks it)"
                     for path in untracked if path.suffix != ".whl"]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", type=Path,
                        help="an add-on folder to check (default: the whole repository)")
    args = parser.parse_args(argv)
    problems = folder_problems(args.folder) if args.folder else repository_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
