"""The Home Assistant add-on folder: its config as the Supervisor reads it, its build, its
services wired, its start script run.

The Supervisor's rules live in ``tools/release/supervisor_schema.py`` (written down from its
source) and are tested with broken files in ``test_addon_repository.py``; here the add-on's
own files must pass them and say what the add-on needs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.supervisor_stand_in import SupervisorStandIn
from tools.release import addon_folder, check
from tools.release import supervisor_schema as schema

ADDON = Path(__file__).resolve().parents[2] / "docker" / "addon"
S6 = ADDON / "rootfs" / "etc" / "s6-overlay" / "s6-rc.d"
RUN_SCRIPT = S6 / "omnivoice" / "run"


def _load(name: str) -> Any:
    return yaml.safe_load((ADDON / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    data = _load("config.yaml")
    assert isinstance(data, dict)
    return data


# --------------------------------------------------------------------------- config.yaml


def test_config_passes_the_supervisor_rules(config: dict[str, Any]) -> None:
    assert schema.config_problems(config) == []


def test_config_declares_the_wyoming_service(config: dict[str, Any]) -> None:
    assert config["slug"] == "omnivoice"
    assert config["arch"] == ["amd64"]
    assert config["init"] is False  # the base image's s6-overlay is the init system
    assert config["discovery"] == ["wyoming"]
    assert "10200/tcp" in config["ports"]
    # The voice studio writes cloned voices into /share/omnivoice/voices, and anchors are
    # shared (read and written) in /share/omnivoice/anchors: the share is read-write.
    assert {"type": "share", "read_only": False} in config["map"]
    assert set(config["schema"]) == {"voice", "precision", "num_steps", "guidance_scale",
                                     "preload_languages", "max_gap", "lead_in_ms", "debug"}
    assert config["options"]["voice"] == "en-female-young"


def test_config_shows_the_voice_studio_in_the_sidebar(config: dict[str, Any]) -> None:
    """Ingress on the port the run script serves the studio on, with a panel."""
    assert config["ingress"] is True and config["ingress_port"] == 8099
    assert config["panel_icon"].startswith("mdi:") and config["panel_title"]
    assert "8099/tcp" not in config["ports"]  # reached through ingress only
    run = RUN_SCRIPT.read_text()
    assert '--web-uri "http://0.0.0.0:8099"' in run and "--web-ingress" in run


def test_config_version_matches_the_package(config: dict[str, Any]) -> None:
    from wyoming_omnivoice import __version__

    assert config["version"] == __version__
    assert check.versions() == {where: __version__ for where in check.versions()}


def test_config_names_the_published_image(config: dict[str, Any]) -> None:
    """The store pulls ghcr.io/OWNER/amd64-addon-omnivoice:VERSION, the name the release
    workflow pushes (tests/deploy/test_release_workflow.py)."""
    images = check.published_images(config["image"])
    assert images.addon == f"ghcr.io/{images.owner}/amd64-addon-{config['slug']}"


TRANSLATIONS = sorted(p.name for p in (ADDON / "translations").glob("*.yaml"))


def test_the_store_finds_english_and_the_households_largest_languages() -> None:
    assert {"en.yaml", "de.yaml", "fr.yaml", "es.yaml", "nl.yaml", "it.yaml"} <= set(TRANSLATIONS)


@pytest.mark.parametrize("name", TRANSLATIONS)
def test_translations_cover_every_option_and_port(config: dict[str, Any], name: str) -> None:
    translations = _load(f"translations/{name}")
    assert schema.translation_problems(translations) == []
    assert set(translations["configuration"]) == set(config["schema"])
    for key, entry in translations["configuration"].items():
        assert isinstance(entry["name"], str) and entry["name"], key
        assert isinstance(entry["description"], str) and entry["description"], key
    assert set(translations["network"]) <= set(config["ports"])


def _dockerfile_args() -> dict[str, str | None]:
    text = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    return {m["name"]: m["default"] for m in re.finditer(
        r"^ARG (?P<name>\w+)(?:=(?P<default>\S+))?$", text, re.M)}


def test_the_dockerfile_takes_only_what_the_supervisor_passes(config: dict[str, Any]) -> None:
    """Every ARG is one the Supervisor passes; build.yaml's base is the Dockerfile's default
    (the base a Supervisor without build.yaml uses); the wheel comes from the folder."""
    build = _load("build.yaml")
    assert schema.build_problems(build, config["arch"]) == []
    passed = addon_folder.supervisor_build_args(ADDON, "amd64")
    args = _dockerfile_args()
    assert set(args) <= set(passed), set(args) - set(passed)
    assert args["BUILD_FROM"] == passed["BUILD_FROM"] == build["build_from"]["amd64"]
    assert passed["BUILD_VERSION"] == config["version"]
    dockerfile = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM \$\{BUILD_FROM\}$", dockerfile, re.M)
    assert "COPY wheels/ /usr/src/wheels/" in dockerfile
    assert "wyoming_omnivoice-${BUILD_VERSION}-py3-none-any.whl" in dockerfile
    assert "COPY rootfs /" in dockerfile
    assert "wyoming_omnivoice.health_check" in dockerfile
    assert "useradd --system --uid 10200" in dockerfile


def test_s6_services_are_wired() -> None:
    assert (S6 / "omnivoice" / "type").read_text().strip() == "longrun"
    assert (S6 / "discovery" / "type").read_text().strip() == "oneshot"
    up = (S6 / "discovery" / "up").read_text().strip()
    assert up == "/etc/s6-overlay/s6-rc.d/discovery/run"
    assert (S6 / "discovery" / "dependencies.d" / "omnivoice").is_file()
    assert {p.name for p in (S6 / "user" / "contents.d").iterdir()} == {"omnivoice", "discovery"}
    for script in (RUN_SCRIPT, S6 / "omnivoice" / "finish", S6 / "discovery" / "run"):
        assert os.access(script, os.X_OK), script
        subprocess.run(["bash", "-n", str(script)], check=True)
    discovery = (S6 / "discovery" / "run").read_text()
    assert '{"service": "wyoming", "config": {"uri": uri}}' in discovery
    assert 'uri = f"tcp://{socket.gethostname()}:10200"' in discovery
    # The add-on's scripts need nothing of the base but bash and s6's with-contenv: bashio
    # is not used (the image test's stand-in base has none).
    for script in S6.rglob("*"):
        if script.is_file():
            assert "bashio" not in script.read_text(), script


# --------------------------------------------------------------------------- run script


STUB = """#!{python}
import json, sys
print(json.dumps(sys.argv[1:]))
"""


def run_addon(tmp_path: Path, options: str | None, *, share: dict[str, str] | None = None,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    stub = tmp_path / "server-stub"
    stub.write_text(STUB.format(python=sys.executable))
    stub.chmod(0o755)
    options_file = tmp_path / "options.json"
    if options is not None:
        options_file.write_text(options)
    share_dir = tmp_path / "share"
    for name, content in (share or {}).items():
        target = share_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if content == "<dir>":
            target.mkdir(exist_ok=True)
        else:
            target.write_text(content)
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if k != "SUPERVISOR_TOKEN"},
        **(env or {}),
        "OMNIVOICE_OPTIONS": str(options_file),
        "OMNIVOICE_PYTHON": sys.executable,
        "OMNIVOICE_SERVER": str(stub),
        "OMNIVOICE_DATA_DIR": str(data_dir),
        "OMNIVOICE_SHARE_DIR": str(share_dir),
        # The add-on hands /data to its own user and drops to it when run as root; here
        # the script keeps the test's user (the image test checks the real thing).
        "OMNIVOICE_USER": "",
    }
    return subprocess.run(
        ["bash", str(RUN_SCRIPT)], env=env, capture_output=True, text=True, timeout=60
    )


def _argv(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_run_script_maps_every_option(tmp_path: Path) -> None:
    options = {"voice": "my butler", "precision": "fp32", "num_steps": 12,
               "guidance_scale": 2.5, "preload_languages": "en,de", "max_gap": 1.5,
               "lead_in_ms": 800, "debug": True}
    argv = _argv(run_addon(tmp_path, json.dumps(options)))
    assert argv == [
        "--uri", "tcp://0.0.0.0:10200", "--data-dir", str(tmp_path / "data"), "--device", "cpu",
        "--web-uri", "http://0.0.0.0:8099", "--web-ingress",
        "--voice", "my butler", "--precision", "fp32", "--num-steps", "12",
        "--guidance-scale", "2.5",
        "--preload-languages", "en,de", "--max-gap", "1.5", "--lead-in-ms", "800", "--debug",
    ]


def test_run_script_defaults_of_config_yaml(tmp_path: Path, config: dict[str, Any]) -> None:
    argv = _argv(run_addon(tmp_path, json.dumps(config["options"])))
    assert argv[argv.index("--voice") + 1] == "en-female-young"
    assert argv[argv.index("--precision") + 1] == "auto"  # int8 on the add-on's CPU
    assert argv[argv.index("--num-steps") + 1] == "16"
    assert argv[argv.index("--guidance-scale") + 1] == "2.0"
    assert argv[argv.index("--preload-languages") + 1] == "en"
    assert argv[argv.index("--max-gap") + 1] == "2.0"
    assert argv[argv.index("--lead-in-ms") + 1] == "300"
    assert "--debug" not in argv


def test_run_script_omits_empty_voice_and_reports_missing_options(tmp_path: Path) -> None:
    argv = _argv(run_addon(tmp_path, json.dumps({"voice": " ", "debug": False})))
    assert "--voice" not in argv and "--debug" not in argv
    elsewhere = tmp_path / "no-options"
    elsewhere.mkdir()
    result = run_addon(elsewhere, None)
    assert _argv(result)[-1] == "--web-ingress"
    assert "not found" in result.stderr


def test_run_script_refuses_broken_options(tmp_path: Path) -> None:
    result = run_addon(tmp_path, "{not json")
    assert result.returncode != 0
    assert "not valid JSON" in result.stderr
    assert result.stdout == ""  # the server was never started


def test_run_script_uses_share_voices(tmp_path: Path) -> None:
    share = {"voices.yaml": "voices: []\n", "voices/grandma": "<dir>"}
    argv = _argv(run_addon(tmp_path, "{}", share=share))
    index = argv.index("--voices-file")
    assert argv[index + 1] == str(tmp_path / "share" / "voices.yaml")
    link = tmp_path / "data" / "voices"
    assert link.is_symlink() and link.resolve() == (tmp_path / "share" / "voices").resolve()


def test_run_script_shares_anchors_in_the_share_folder(tmp_path: Path) -> None:
    """With /share/omnivoice/anchors the server's anchors are there (read-write share);
    the add-on's own join it without replacing one already there."""
    own = tmp_path / "data" / "anchors"
    own.mkdir(parents=True)
    (own / "a.npz").write_text("own a")
    (own / "b.npz").write_text("own b")
    result = run_addon(tmp_path, "{}", share={"anchors/a.npz": "shared a"})
    _argv(result)
    shared = tmp_path / "share" / "anchors"
    assert own.is_symlink() and own.resolve() == shared.resolve()
    assert (shared / "a.npz").read_text() == "shared a"  # never replaced
    assert (shared / "b.npz").read_text() == "own b"
    assert "voice anchors shared" in result.stderr
    _argv(run_addon(tmp_path, "{}"))  # a second start keeps the link
    assert own.is_symlink() and (own / "b.npz").read_text() == "own b"


def test_run_script_keeps_its_anchors_without_a_shared_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "anchors").mkdir(parents=True)
    _argv(run_addon(tmp_path, "{}"))
    assert not (tmp_path / "data" / "anchors").is_symlink()


def test_run_script_keeps_a_real_voices_folder(tmp_path: Path) -> None:
    (tmp_path / "data" / "voices").mkdir(parents=True)
    _argv(run_addon(tmp_path, "{}", share={"voices/x": "<dir>"}))
    assert not (tmp_path / "data" / "voices").is_symlink()


TOKEN = "secret-token"


def _supervisor_env(api: SupervisorStandIn) -> dict[str, str]:
    """What the add-on has in its environment to reach the Supervisor: its token (and
    here the stand-in's address for Home Assistant's configuration)."""
    return {"SUPERVISOR_TOKEN": api.token,
            "OMNIVOICE_HA_CONFIG_URL": f"{api.url}/core/api/config"}


@pytest.mark.parametrize(("ha_language", "option", "expected"), [
    ("de-DE", "en", "en,de"),
    ("de", None, "en,de"),       # the option left empty: English and Home Assistant's
    ("pt-BR", "en,fr", "en,fr,pt"),
    ("en-GB", "en", "en"),       # English already
])
def test_run_script_preloads_home_assistants_language(
        tmp_path: Path, ha_language: str, option: str | None, expected: str) -> None:
    api = SupervisorStandIn(TOKEN, ha_language)
    try:
        options = {} if option is None else {"preload_languages": option}
        argv = _argv(run_addon(tmp_path, json.dumps(options), env=_supervisor_env(api)))
    finally:
        api.close()
    assert argv[argv.index("--preload-languages") + 1] == expected
    assert api.seen == [f"GET /core/api/config {TOKEN}"]


def test_run_script_starts_when_home_assistant_cannot_be_asked(tmp_path: Path) -> None:
    api = SupervisorStandIn(TOKEN, "de")
    url = _supervisor_env(api)["OMNIVOICE_HA_CONFIG_URL"]
    api.close()  # nobody listens there now
    result = run_addon(tmp_path, json.dumps({"preload_languages": "en"}),
                       env={"SUPERVISOR_TOKEN": "t", "OMNIVOICE_HA_CONFIG_URL": url})
    argv = _argv(result)
    assert argv[argv.index("--preload-languages") + 1] == "en"
    assert "could not read Home Assistant's language" in result.stderr


def test_run_script_keeps_none_and_asks_nothing_outside_the_supervisor(tmp_path: Path) -> None:
    api = SupervisorStandIn(TOKEN, "de")
    try:
        argv = _argv(run_addon(tmp_path, json.dumps({"preload_languages": "none"}),
                               env=_supervisor_env(api)))
        assert argv[argv.index("--preload-languages") + 1] == "none"
        standalone = tmp_path / "standalone"
        standalone.mkdir()
        argv = _argv(run_addon(standalone, json.dumps({"preload_languages": "en"}),
                               env={"OMNIVOICE_HA_CONFIG_URL": f"{api.url}/core/api/config"}))
        assert argv[argv.index("--preload-languages") + 1] == "en"
    finally:
        api.close()
    assert api.seen == []


def test_config_asks_for_the_home_assistant_api(config: dict[str, Any]) -> None:
    assert config["homeassistant_api"] is True
