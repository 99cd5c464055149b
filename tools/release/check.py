"""Before a release publishes anything: the tag, the versions and the image names agree.

``python -m tools.release.check --tag v0.1.0 --owner OWNER [--github-output FILE]`` fails,
saying what to change, unless

- the tag is ``v`` + pyproject.toml's version, which is ``wyoming_omnivoice.__version__``,
  the add-on's config.yaml ``version``, and a ``## VERSION`` heading of the add-on's
  CHANGELOG.md (what the store shows for the update);
- config.yaml's ``image`` is ``ghcr.io/OWNER/{arch}-addon-SLUG`` with OWNER the GitHub
  account the workflow runs under (its token can push only there).

The add-on's ``image`` is the one place the published names come from: the add-on image is
it, the server images are ``ghcr.io/OWNER/wyoming-omnivoice-cpu`` and ``-gpu`` beside it
(:func:`published_images`). A fork changes that one line. With ``--github-output`` the
version and the names are written as step outputs for the release workflow's jobs.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tools.release.addon_store import ADDON_FOLDER, ROOT, load

ADDON_IMAGE = re.compile(
    r"^ghcr\.io/(?P<owner>[a-z0-9][a-z0-9-]*)/\{arch\}-addon-(?P<slug>[\w.-]+)$")
VERSION_LINE = re.compile(r'^__version__ = "(?P<version>[^"]+)"$', re.M)
#: The add-on's architecture whose image the release builds.
ARCH = "amd64"


@dataclass(frozen=True)
class PublishedImages:
    """The image names (no tag) a release pushes."""

    owner: str
    addon: str
    cpu: str
    gpu: str


def published_images(image: str, arch: str = ARCH) -> PublishedImages:
    """The names pushed, from the add-on's ``image`` (``ghcr.io/OWNER/{arch}-addon-SLUG``)."""
    match = ADDON_IMAGE.match(image)
    if match is None:
        raise ValueError(f"config.yaml image {image!r} is not ghcr.io/OWNER/{{arch}}-addon-SLUG "
                         "(OWNER in lower case)")
    owner = match["owner"]
    return PublishedImages(owner=owner, addon=image.format(arch=arch),
                           cpu=f"ghcr.io/{owner}/wyoming-omnivoice-cpu",
                           gpu=f"ghcr.io/{owner}/wyoming-omnivoice-gpu")


def versions(root: Path = ROOT) -> dict[str, str]:
    """Where the version is written: file -> version found there."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    package = VERSION_LINE.search(
        (root / "wyoming_omnivoice" / "__init__.py").read_text(encoding="utf-8"))
    config = load(root / ADDON_FOLDER / "config.yaml")
    return {
        "pyproject.toml": str(pyproject["project"]["version"]),
        "wyoming_omnivoice/__init__.py": package["version"] if package else "(none)",
        f"{ADDON_FOLDER}/config.yaml": str(config.get("version")),
    }


def changelog_versions(root: Path = ROOT) -> list[str]:
    text = (root / ADDON_FOLDER / "CHANGELOG.md").read_text(encoding="utf-8")
    return re.findall(r"^## \[?v?([0-9][^\]\s]*)", text, re.M)


def problems(tag: str, owner: str | None, root: Path = ROOT) -> list[str]:
    """Everything that stops a release of ``tag`` by ``owner``."""
    found = versions(root)
    version = found["pyproject.toml"]
    result = [f"{where} says {value}, pyproject.toml {version}"
              for where, value in found.items() if value != version]
    if tag != f"v{version}":
        result.append(f"tag {tag!r} is not v{version} (pyproject.toml's version)")
    if version not in changelog_versions(root):
        result.append(f"{ADDON_FOLDER}/CHANGELOG.md has no '## {version}' entry")
    image = str(load(root / ADDON_FOLDER / "config.yaml").get("image", ""))
    try:
        images = published_images(image)
    except ValueError as err:
        return [*result, str(err)]
    if owner is not None and images.owner != owner.lower():
        result.append(f"config.yaml image names ghcr.io/{images.owner}, but this repository "
                      f"belongs to {owner}: set image: ghcr.io/{owner.lower()}/{{arch}}-addon-"
                      f"omnivoice in {ADDON_FOLDER}/config.yaml")
    return result


def outputs(root: Path = ROOT) -> dict[str, str]:
    """The release workflow's step outputs: the version and the image names."""
    images = published_images(str(load(root / ADDON_FOLDER / "config.yaml")["image"]))
    return {"version": versions(root)["pyproject.toml"], "addon_image": images.addon,
            "cpu_image": images.cpu, "gpu_image": images.gpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tag", required=True, help="the pushed tag, e.g. v0.1.0")
    parser.add_argument("--owner", help="the GitHub account the release pushes images to")
    parser.add_argument("--github-output", type=Path,
                        help="append the version and image names here ($GITHUB_OUTPUT)")
    args = parser.parse_args(argv)
    found = problems(args.tag, args.owner)
    for problem in found:
        print(f"release check: {problem}", file=sys.stderr)
    if found:
        return 1
    values = outputs()
    for key, value in values.items():
        print(f"{key}={value}")
    if args.github_output:
        with args.github_output.open("a", encoding="utf-8") as handle:
            handle.writelines(f"{key}={value}\n" for key, value in values.items())
    return 0


if __name__ == "__main__":
    sys.exit(main())
