"""The repository as a Home Assistant add-on repository, and the release's own checks.

- ``tools/release/supervisor_schema.py`` (the Supervisor's rules, from its source) passes
  this repository's repository.yaml, config.yaml, build.yaml and translations, and fails
  broken ones with a message naming the key;
- ``tools/release/addon_store.py`` reads the repository as the store does: one
  repository.yaml, exactly one add-on folder, icon, logo, intro, docs and changelog;
- ``tools/release/addon_folder.py`` writes the local add-on folder (this checkout's wheel
  inside, no ``image``) and the Supervisor's exact build command for it (built and run for
  real in ``test_addon_image.py``);
- ``tools/release/check.py`` stops a release whose tag, versions or image owner disagree.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from tools.release import addon_folder, addon_store, check
from tools.release import supervisor_schema as schema

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "docker" / "addon"


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    data = _load(ADDON / "config.yaml")
    assert isinstance(data, dict)
    return data


def test_the_repository_is_what_the_store_reads() -> None:
    assert addon_store.repository_problems() == []
    assert schema.repository_problems(_load(ROOT / "repository.yaml")) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"slug": "Omni Voice"}, "slug"),
        ({"arch": ["x86"]}, "arch: unknown"),
        ({"arch": ["armv7"]}, "deprecated"),
        ({"version": 0.1}, "version"),
        ({"startup": "later"}, "startup"),
        ({"ports": {"10200": "x"}}, "ports"),
        ({"map": ["share:rx"]}, "map: bad entry"),
        ({"map": [{"type": "addon_config"}]}, "legacy"),
        ({"init": "no"}, "init"),
        ({"timeout": 5}, "timeout"),
        ({"url": "not a url"}, "url"),
        ({"image": "ghcr.io/x/{arch}-addon-omnivoice:1.0"}, "tag"),
        ({"image": "ghcr.io/X/{arch}-addon-omnivoice"}, "lower case"),
        ({"ingress_port": 0, "ports": {"63000/tcp": None}}, "dynamic ingress"),
        ({"schema": {"voice": "string", "num_steps": "int(1,128)",
                     "guidance_scale": "float(0,10)", "debug": "bool"}}, "schema.voice"),
        ({"options": {"voice": "x", "num_steps": 200, "guidance_scale": 2.0,
                      "debug": False}}, "above 128"),
        ({"options": {"voice": "x", "num_steps": 16, "guidance_scale": "2",
                      "debug": False}}, "not a float"),
        ({"colour": "blue"}, "unknown key"),
        ({"snapshot_exclude": ["x"]}, "deprecated, use backup_exclude"),
    ],
)
def test_the_schema_catches_broken_configs(
        config: dict[str, Any], change: dict[str, Any], problem: str) -> None:
    broken = {**config, **change}
    found = schema.config_problems(broken)
    assert any(problem in text for text in found), found


def test_a_config_without_a_name_or_arch_fails() -> None:
    found = schema.config_problems({"version": "1", "slug": "x", "description": "d"})
    assert "name: required, a non-empty string" in found
    assert "arch: required, a list of architectures" in found


@pytest.mark.parametrize(("build", "problem"), [
    ({"build_from": {"aarch64": "ghcr.io/home-assistant/aarch64-base-debian:trixie"}},
     "no base image for amd64"),
    ({"build_from": "not an image"}, "not an image reference"),
    ({"args": {"X": 1}}, "args"),
    ({"squash": "yes"}, "squash"),
    ({"build_form": {}}, "unknown key"),
])
def test_the_schema_catches_broken_build_files(build: dict[str, Any], problem: str) -> None:
    found = schema.build_problems(build, ["amd64"])
    assert any(problem in text for text in found), found


@pytest.mark.parametrize(("repository", "problem"), [
    ({}, "name: required"),
    ({"name": "x", "url": "example"}, "url"),
    ({"name": "x", "maintainer": ["a"]}, "maintainer"),
])
def test_the_schema_catches_broken_repository_files(repository: dict[str, Any],
                                                     problem: str) -> None:
    found = schema.repository_problems(repository)
    assert any(problem in text for text in found), found


def test_the_schema_catches_broken_translations() -> None:
    found = schema.translation_problems(
        {"configuration": {"voice": {"description": "no name"}}, "network": {"1/tcp": 2}})
    assert "configuration.voice: needs a name (a string)" in found
    assert "network: a mapping of ports to strings" in found


def test_the_store_would_list_any_config_file_outside_hidden_folders() -> None:
    files = [PurePosixPath(p) for p in (
        "docker/addon/config.yaml", "docker/addon/rootfs/etc/config.json",
        ".github/config.yml", "tests/fixtures/models/tiny/config.json", "config/voices.yaml")]
    assert addon_store.addon_configs(files) == [
        PurePosixPath("docker/addon/config.yaml"),
        PurePosixPath("tests/fixtures/models/tiny/config.json")]
    assert addon_store.repository_files([PurePosixPath("a/repository.json"),
                                         PurePosixPath("repository.yaml")]) == [
        PurePosixPath("a/repository.json"), PurePosixPath("repository.yaml")]


def _png(path: Path, width: int, height: int) -> None:
    row = b"\0" + b"\xff\xff\xff" * width
    data = zlib.compress(row * height)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body)))

    path.write_bytes(b"\x89PNG\r\n\x1a\n"
                     + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def test_the_icon_and_logo_are_what_the_store_shows(tmp_path: Path) -> None:
    assert addon_store.png_size(ADDON / "icon.png") == (128, 128)
    width, height = addon_store.png_size(ADDON / "logo.png") or (0, 0)
    assert (width, height) == (250, 100)
    folder = tmp_path / "omnivoice"
    shutil.copytree(ADDON, folder)
    _png(folder / "icon.png", 128, 100)
    (folder / "CHANGELOG.md").unlink()
    found = addon_store.folder_problems(folder)
    assert "icon.png: must be a square PNG (is (128, 100))" in found
    assert "CHANGELOG.md: missing (the store shows it)" in found


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The local add-on folder, with this checkout's wheel built into it."""
    return addon_folder.write(tmp_path_factory.mktemp("local") / "omnivoice")


@pytest.mark.slow
def test_the_local_folder_builds_here_with_this_checkouts_wheel(
        written: Path, config: dict[str, Any]) -> None:
    local = _load(written / "config.yaml")
    assert "image" not in local  # with an image the Supervisor would pull instead
    assert {k: v for k, v in config.items() if k != "image"} == local
    assert [p.name for p in (written / "wheels").glob("*.whl")] == [
        f"wyoming_omnivoice-{config['version']}-py3-none-any.whl"]
    assert addon_store.folder_problems(written) == []
    for path in ADDON.rglob("*"):
        if path.is_file() and path.name != "config.yaml":
            copy = written / path.relative_to(ADDON)
            assert copy.read_bytes() == path.read_bytes(), path
            assert copy.stat().st_mode == path.stat().st_mode, path


@pytest.mark.slow
def test_the_folder_tool_refuses_a_wrong_wheel_or_a_used_folder(
        written: Path, tmp_path: Path) -> None:
    (wheel,) = (written / "wheels").glob("*.whl")
    other = tmp_path / "wyoming_omnivoice-9.9.9-py3-none-any.whl"
    shutil.copy(wheel, other)
    with pytest.raises(ValueError, match=r"the wheel is version 9\.9\.9"):
        addon_folder.write(tmp_path / "a", other)
    with pytest.raises(FileExistsError, match="not empty"):
        addon_folder.write(written, wheel)


def test_the_build_command_is_the_supervisors(config: dict[str, Any]) -> None:
    command = addon_folder.supervisor_command(ADDON, "amd64", "local/amd64-addon-omnivoice:1")
    assert command[:11] == ["docker", "buildx", "build", ".", "--tag",
                            "local/amd64-addon-omnivoice:1", "--file", "Dockerfile",
                            "--platform", "linux/amd64", "--pull"]
    pairs = list(zip(command[11::2], command[12::2], strict=True))
    assert sorted(value for flag, value in pairs if flag == "--build-arg") == sorted([
        f"BUILD_VERSION={config['version']}", "BUILD_ARCH=amd64",
        "BUILD_FROM=ghcr.io/home-assistant/amd64-base-debian:trixie"])
    assert sorted(value for flag, value in pairs if flag == "--label") == sorted([
        f"io.hass.version={config['version']}", "io.hass.arch=amd64", "io.hass.type=app",
        f"io.hass.name={config['name']}", f"io.hass.description={config['description']}"])
    assert addon_folder.local_tag(ADDON, "amd64") == \
        f"local/amd64-addon-omnivoice:{config['version']}"


def test_without_build_yaml_the_supervisor_passes_no_base(tmp_path: Path) -> None:
    folder = tmp_path / "omnivoice"
    shutil.copytree(ADDON, folder)
    (folder / "build.yaml").unlink()
    assert set(addon_folder.supervisor_build_args(folder, "amd64")) == {"BUILD_VERSION",
                                                                        "BUILD_ARCH"}


def _release_root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("pyproject.toml", "wyoming_omnivoice/__init__.py",
                 "docker/addon/config.yaml", "docker/addon/CHANGELOG.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)
    return root


def test_the_release_check_passes_this_checkout(config: dict[str, Any]) -> None:
    version = config["version"]
    assert check.problems(f"v{version}", "wyoming-omnivoice") == []
    assert check.outputs() == {
        "version": version,
        "addon_image": "ghcr.io/wyoming-omnivoice/amd64-addon-omnivoice",
        "cpu_image": "ghcr.io/wyoming-omnivoice/wyoming-omnivoice-cpu",
        "gpu_image": "ghcr.io/wyoming-omnivoice/wyoming-omnivoice-gpu",
    }


def test_the_release_check_stops_disagreeing_versions(tmp_path: Path) -> None:
    root = _release_root(tmp_path)
    version = check.versions(root)["pyproject.toml"]
    assert check.problems(f"v{version}", None, root) == []
    assert check.problems("v9.9.9", None, root) == [
        f"tag 'v9.9.9' is not v{version} (pyproject.toml's version)"]
    config = root / "docker/addon/config.yaml"
    config.write_text(config.read_text().replace(f'version: "{version}"', 'version: "9.9.9"'))
    (root / "docker/addon/CHANGELOG.md").write_text("# Changelog\n")
    found = check.problems(f"v{version}", None, root)
    assert f"docker/addon/config.yaml says 9.9.9, pyproject.toml {version}" in found
    assert f"docker/addon/CHANGELOG.md has no '## {version}' entry" in found


def test_the_release_check_stops_a_fork_pushing_to_another_owner(tmp_path: Path) -> None:
    root = _release_root(tmp_path)
    version = check.versions(root)["pyproject.toml"]
    (found,) = check.problems(f"v{version}", "SomeFork", root)
    assert "set image: ghcr.io/somefork/{arch}-addon-omnivoice" in found
    config = root / "docker/addon/config.yaml"
    config.write_text(config.read_text().replace("ghcr.io/wyoming-omnivoice/",
                                                 "ghcr.io/somefork/"))
    assert check.problems(f"v{version}", "SomeFork", root) == []
    assert check.outputs(root)["cpu_image"] == "ghcr.io/somefork/wyoming-omnivoice-cpu"
