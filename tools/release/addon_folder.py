"""The Home Assistant add-on folder with this checkout's wheel inside it, and the exact build
command the Supervisor runs for such a folder.

Why a folder with the wheel: the Supervisor builds a local add-on from its folder alone
(the folder is the build context; nothing else of the repository is there), and the package
is not on PyPI until a release publishes it. So the folder carries the package itself, in
``wheels/``, and the add-on's Dockerfile installs it from there. The release workflow
builds the published add-on image from the same folder, with the same Dockerfile and the
same arguments (``build-command`` below), so there is one way the add-on is built::

    python -m tools.release.addon_folder write --out build/omnivoice   # builds the wheel
    python -m tools.release.addon_folder write --out DIR --wheel dist/NAME.whl
    python -m tools.release.addon_folder build-command DIR --arch amd64 --tag IMAGE:VERSION

The written folder is ``docker/addon`` without config.yaml's ``image`` (with an image the
Supervisor pulls instead of building) and with the wheel in ``wheels/``. Copy it to
``/addons/omnivoice`` on the Home Assistant host for a local install.

The build command follows ``supervisor/apps/build.py`` (``AppBuild.get_docker_args``,
home-assistant/supervisor commit 090ef31, 2026-08-21; facts read, no code copied):
``docker buildx build . --tag IMAGE --file Dockerfile[.ARCH] --platform linux/ARCH
--pull``, the labels ``io.hass.version``, ``io.hass.arch``, ``io.hass.type=app``,
build.yaml's ``labels``, ``io.hass.name`` and ``io.hass.description`` (config.yaml's name
and description without ``'``), ``io.hass.url`` when config.yaml has a url, and the build
arguments ``BUILD_VERSION`` (config.yaml's version), ``BUILD_ARCH``, build.yaml's ``args``,
and ``BUILD_FROM`` (build.yaml's ``build_from``, for the architecture; only when a
build.yaml exists; ``ghcr.io/home-assistant/base:latest`` when it names none). The
Supervisor tags a local build ``local/ARCH-addon-SLUG:VERSION`` (``supervisor/apps/model.py``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tools.release.addon_store import ADDON_FOLDER, ROOT, SUFFIXES, load

ADDON = ROOT / ADDON_FOLDER
PLATFORMS = {"amd64": "linux/amd64", "aarch64": "linux/arm64"}
DEFAULT_BASE = "ghcr.io/home-assistant/base:latest"
WHEEL_NAME = re.compile(r"^wyoming_omnivoice-(?P<version>[^-]+)-py3-none-any\.whl$")
#: config.yaml's ``image`` line and the comment lines right above it.
IMAGE_BLOCK = re.compile(r"(?m)^(?:#[^\n]*\n)*image:[^\n]*\n")


def build_wheel(out: Path, root: Path = ROOT) -> Path:
    """This checkout's wheel, built with pip into ``out``: with the setuptools at hand when
    it reads pyproject.toml's SPDX ``license`` (77 and newer), else in pip's isolated build
    environment, which fetches one (Python 3.11's venv brings setuptools 65)."""
    try:
        major = int(importlib.metadata.version("setuptools").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        major = 0
    isolation = ["--no-build-isolation"] if major >= 77 else []
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", str(root), "--no-deps",
                             *isolation, "--quiet", "--wheel-dir", str(out)],
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise OSError(f"pip wheel failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    (wheel,) = out.glob("wyoming_omnivoice-*.whl")
    return wheel


def local_config(text: str) -> str:
    """config.yaml for a local build: the same, without ``image`` (and its comment)."""
    without, count = IMAGE_BLOCK.subn("", text)
    if count != 1:
        raise ValueError(f"config.yaml should have one 'image:' line, found {count}")
    return without


def write(out: Path, wheel: Path | None = None, source: Path = ADDON) -> Path:
    """Write the add-on folder to ``out`` (absent or empty): ``source`` with config.yaml
    made local and the wheel in ``wheels/`` (built from this checkout when not given)."""
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty: give a new folder")
    config_text = (source / "config.yaml").read_text(encoding="utf-8")
    version = str(load(source / "config.yaml")["version"])
    shutil.copytree(source, out, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.whl"))
    (out / "config.yaml").write_text(local_config(config_text), encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        wheel = wheel if wheel is not None else build_wheel(Path(scratch))
        match = WHEEL_NAME.match(wheel.name)
        if match is None:
            raise ValueError(f"{wheel.name} is not a wyoming-omnivoice wheel")
        if match["version"] != version:
            raise ValueError(f"the wheel is version {match['version']} but the add-on's "
                             f"config.yaml says {version}: build the wheel of this checkout")
        (out / "wheels").mkdir(exist_ok=True)
        shutil.copy2(wheel, out / "wheels" / wheel.name)
    return out


def build_file(folder: Path) -> Path | None:
    found = sorted(p for p in folder.rglob("build.*") if p.suffix in SUFFIXES)
    return found[0] if found else None


def supervisor_build_args(folder: Path, arch: str) -> dict[str, str]:
    """The build arguments the Supervisor passes for ``folder`` on ``arch``."""
    config = load(folder / "config.yaml")
    args = {"BUILD_VERSION": str(config["version"]), "BUILD_ARCH": arch}
    path = build_file(folder)
    if path is not None:
        build: dict[str, Any] = load(path) or {}
        args.update({str(k): str(v) for k, v in (build.get("args") or {}).items()})
        base = build.get("build_from") or DEFAULT_BASE
        args["BUILD_FROM"] = base if isinstance(base, str) else base[arch]
    return args


def supervisor_labels(folder: Path, arch: str) -> dict[str, str]:
    """The labels the Supervisor puts on the image it builds from ``folder``."""
    config = load(folder / "config.yaml")
    labels = {"io.hass.version": str(config["version"]), "io.hass.arch": arch,
              "io.hass.type": "app"}
    path = build_file(folder)
    if path is not None:
        labels.update({str(k): str(v) for k, v in ((load(path) or {}).get("labels")
                                                    or {}).items()})
    for key in ("name", "description"):
        if value := str(config.get(key) or "").replace("'", ""):
            labels[f"io.hass.{key}"] = value
    if config.get("url"):
        labels["io.hass.url"] = str(config["url"])
    return labels


def supervisor_command(folder: Path, arch: str, tag: str) -> list[str]:
    """``docker buildx build ...`` as the Supervisor runs it, in ``folder``."""
    dockerfile = f"Dockerfile.{arch}" if (folder / f"Dockerfile.{arch}").exists() \
        else "Dockerfile"
    command = ["docker", "buildx", "build", ".", "--tag", tag, "--file", dockerfile,
               "--platform", PLATFORMS[arch], "--pull"]
    for key, value in supervisor_labels(folder, arch).items():
        command += ["--label", f"{key}={value}"]
    for key, value in supervisor_build_args(folder, arch).items():
        command += ["--build-arg", f"{key}={value}"]
    return command


def local_tag(folder: Path, arch: str) -> str:
    """The Supervisor's tag for a local build: ``local/ARCH-addon-SLUG:VERSION``."""
    config = load(folder / "config.yaml")
    return f"local/{arch}-addon-{config['slug']}:{config['version']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    writer = commands.add_parser("write", help="write the add-on folder with the wheel")
    writer.add_argument("--out", type=Path, required=True, help="a new or empty folder")
    writer.add_argument("--wheel", type=Path, help="the wheel (default: build this checkout's)")
    printer = commands.add_parser("build-command",
                                  help="print the Supervisor's build command, one word a line")
    printer.add_argument("folder", type=Path)
    printer.add_argument("--arch", default="amd64", choices=sorted(PLATFORMS))
    printer.add_argument("--tag", help="image tag (default: the Supervisor's local tag)")
    args = parser.parse_args(argv)
    if args.command == "build-command":
        tag = args.tag or local_tag(args.folder, args.arch)
        print("\n".join(supervisor_command(args.folder, args.arch, tag)))
        return 0
    try:
        out = write(args.out, args.wheel)
    except (OSError, ValueError) as err:
        print(f"addon_folder: {err}", file=sys.stderr)
        return 1
    print(f"wrote {out}: copy it to /addons/omnivoice on the Home Assistant host (Samba or "
          "SSH add-on), then Settings > Add-ons > Add-on store > menu > Check for updates; "
          "it is listed under Local add-ons")
    return 0


if __name__ == "__main__":
    sys.exit(main())
