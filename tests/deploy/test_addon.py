"""The Home Assistant add-on folder: config checked like the Supervisor does, run script tested.

The Supervisor skips an add-on whose config.yaml it cannot validate (it only logs a
warning), so the rules below are checked here. They follow the add-on configuration
documentation and the Supervisor's config validation: required keys and their types, the
allowed values of the enumerations, the port and map formats, and the option schema
language (``str``, ``bool``, ``int(min,max)``, ``float(min,max)``, ... with an optional
trailing ``?``), with every option default matching its schema type and range.
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

ADDON = Path(__file__).resolve().parents[2] / "docker" / "addon"
S6 = ADDON / "rootfs" / "etc" / "s6-overlay" / "s6-rc.d"
RUN_SCRIPT = S6 / "omnivoice" / "run"

REQUIRED = {"name": str, "version": str, "slug": str, "description": str, "arch": list}
ARCHES = {"aarch64", "amd64", "armhf", "armv7", "i386"}
BOOLEAN_KEYS = {
    "init", "advanced", "ingress", "ingress_stream", "panel_admin", "host_network", "host_pid",
    "host_ipc", "host_uts", "host_dbus", "udev", "tmpfs", "apparmor", "full_access", "audio",
    "video", "gpio", "usb", "uart", "devicetree", "kernel_modules", "realtime", "hassio_api",
    "homeassistant_api", "stdin", "legacy", "docker_api", "auth_api", "journald",
}
STRING_KEYS = {
    "url", "webui", "watchdog", "ingress_entry", "panel_icon", "panel_title", "homeassistant",
    "image", "backup_pre", "backup_post", "restore_pre", "restore_post", "hassio_role",
}
ENUMS = {
    "startup": {"initialize", "system", "services", "application", "once"},
    "boot": {"auto", "manual", "manual_only"},
    "stage": {"stable", "experimental", "deprecated"},
    "backup": {"hot", "cold"},
}
LIST_OF_STR_KEYS = {"discovery", "backup_exclude", "devices", "machine", "services", "privileged"}
OTHER_KEYS = {
    "ports", "ports_description", "map", "environment", "options", "schema", "timeout",
    "ingress_port", "ulimits", "breaking_versions",
}
KNOWN_KEYS = (
    set(REQUIRED) | BOOLEAN_KEYS | STRING_KEYS | set(ENUMS) | LIST_OF_STR_KEYS | OTHER_KEYS
)
MAP_TYPES = {
    "data", "config", "ssl", "addons", "backup", "share", "media", "homeassistant_config",
    "all_addon_configs", "addon_config",
}
SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
PORT_KEY = re.compile(r"^\d{1,5}(/(tcp|udp))?$")
# One schema element: a type, optionally bounded, optionally made optional with "?".
NUMBER = r"-?\d*\.?\d+"
SCHEMA_ELEMENT = re.compile(
    r"^(?P<type>bool|email|url|port|device(\(subsystem=[a-z]+\))?"
    r"|str(\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(\(\d*,\d*\))?"
    rf"|int(\((?P<i_min>-?\d+)?,(?P<i_max>-?\d+)?\))?"
    rf"|float(\((?P<f_min>{NUMBER})?,(?P<f_max>{NUMBER})?\))?"
    r"|match\(.*\)|list\(.+\))(?P<optional>\?)?$"
)
DOCKER_IMAGE = re.compile(r"^([a-zA-Z\-.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[.\-\w{}]+)?$")


def _load(name: str) -> Any:
    return yaml.safe_load((ADDON / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    data = _load("config.yaml")
    assert isinstance(data, dict)
    return data


def config_problems(config: dict[str, Any]) -> list[str]:
    """Everything in an add-on config.yaml the Supervisor would reject."""
    problems = []
    for key, kind in REQUIRED.items():
        if not isinstance(config.get(key), kind) or not config.get(key):
            problems.append(f"{key}: required {kind.__name__}")
    problems += [f"{key}: unknown key" for key in set(config) - KNOWN_KEYS]
    if not SLUG.match(str(config.get("slug", ""))):
        problems.append("slug: only letters, digits, '-', '_' and '.'")
    problems += [f"arch: unknown {a!r}" for a in config.get("arch", []) if a not in ARCHES]
    for key in BOOLEAN_KEYS & set(config):
        if not isinstance(config[key], bool):
            problems.append(f"{key}: must be a boolean")
    for key in STRING_KEYS & set(config):
        if not isinstance(config[key], str):
            problems.append(f"{key}: must be a string")
    for key, allowed in ENUMS.items():
        if key in config and config[key] not in allowed:
            problems.append(f"{key}: {config[key]!r} not in {sorted(allowed)}")
    for key in LIST_OF_STR_KEYS & set(config):
        value = config[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{key}: must be a list of strings")
    for key in ("ports", "ports_description"):
        for port, value in (config.get(key) or {}).items():
            if not PORT_KEY.match(str(port)):
                problems.append(f"{key}: bad port {port!r} (use '10200/tcp')")
            if key == "ports" and value is not None and not (
                isinstance(value, int) and 1 <= value <= 65535
            ):
                problems.append(f"ports: {port} maps to {value!r} (a port or null)")
            if key == "ports_description" and not isinstance(value, str):
                problems.append(f"ports_description: {port} needs a string")
    for entry in config.get("map", []):
        if isinstance(entry, str):
            kind, _, mode = entry.partition(":")
            if kind not in MAP_TYPES or mode not in ("", "rw", "ro"):
                problems.append(f"map: bad entry {entry!r}")
        elif isinstance(entry, dict):
            if entry.get("type") not in MAP_TYPES:
                problems.append(f"map: bad type in {entry!r}")
            if not isinstance(entry.get("read_only", True), bool):
                problems.append(f"map: read_only must be a boolean in {entry!r}")
            if set(entry) - {"type", "read_only", "path"}:
                problems.append(f"map: unknown keys in {entry!r}")
        else:
            problems.append(f"map: bad entry {entry!r}")
    if "timeout" in config and not (
        isinstance(config["timeout"], int) and 10 <= config["timeout"] <= 300
    ):
        problems.append("timeout: an integer from 10 to 300")
    problems += option_problems(config.get("options") or {}, config.get("schema") or {})
    return problems


def option_problems(options: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    problems = []
    for key, element in schema.items():
        match = SCHEMA_ELEMENT.match(str(element)) if isinstance(element, str) else None
        if match is None:
            problems.append(f"schema.{key}: {element!r} is not a schema element")
            continue
        if key not in options:
            if not match["optional"]:
                problems.append(f"options.{key}: required by the schema but has no default")
            continue
        problems += _default_problems(key, options[key], match)
    problems += [f"options.{key}: not in the schema" for key in set(options) - set(schema)]
    return problems


def _default_problems(key: str, value: Any, match: re.Match[str]) -> list[str]:
    kind = match["type"].split("(")[0]
    if value is None:
        return []  # the user must set it before the add-on starts
    checks = {
        "bool": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "port": lambda v: isinstance(v, int) and 1 <= v <= 65535,
    }
    if not checks.get(kind, lambda v: isinstance(v, str))(value):
        return [f"options.{key}: default {value!r} is not a {kind}"]
    low, high = {
        "int": (match["i_min"], match["i_max"]),
        "float": (match["f_min"], match["f_max"]),
        "str": (match["s_min"], match["s_max"]),
    }.get(kind, (None, None))
    measured = len(value) if kind == "str" else value
    if low is not None and measured < float(low):
        return [f"options.{key}: default {value!r} below {low}"]
    if high is not None and measured > float(high):
        return [f"options.{key}: default {value!r} above {high}"]
    return []


# --------------------------------------------------------------------------- config.yaml


def test_config_passes_the_supervisor_rules(config: dict[str, Any]) -> None:
    assert config_problems(config) == []


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
                                     "preload_languages", "max_gap", "debug"}
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
    assert __version__ in _load("build.yaml")["args"]["WYOMING_OMNIVOICE_PIP"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"slug": "Omni Voice"}, "slug"),
        ({"arch": ["x86"]}, "arch"),
        ({"startup": "later"}, "startup"),
        ({"ports": {"10200": "x"}}, "ports"),
        ({"map": ["share:rx"]}, "map"),
        ({"init": "no"}, "init"),
        ({"schema": {"voice": "string", "num_steps": "int(1,128)",
                     "guidance_scale": "float(0,10)", "debug": "bool"}}, "schema.voice"),
        ({"options": {"voice": "x", "num_steps": 200, "guidance_scale": 2.0,
                      "debug": False}}, "above 128"),
        ({"options": {"voice": "x", "num_steps": 16, "guidance_scale": "2",
                      "debug": False}}, "not a float"),
        ({"colour": "blue"}, "unknown key"),
    ],
)
def test_the_checker_catches_broken_configs(
    config: dict[str, Any], change: dict[str, Any], problem: str
) -> None:
    broken = {**config, **change}
    assert any(problem in text for text in config_problems(broken)), config_problems(broken)


def test_translations_cover_every_option_and_port(config: dict[str, Any]) -> None:
    translations = _load("translations/en.yaml")
    assert set(translations["configuration"]) == set(config["schema"])
    for key, entry in translations["configuration"].items():
        assert isinstance(entry["name"], str) and entry["name"], key
        assert isinstance(entry["description"], str) and entry["description"], key
    assert set(translations["network"]) <= set(config["ports"])


def test_build_yaml_and_dockerfile_agree() -> None:
    build = _load("build.yaml")
    assert set(build) <= {"build_from", "args", "labels", "squash"}
    assert set(build["build_from"]) == {"amd64"}
    for image in build["build_from"].values():
        assert DOCKER_IMAGE.match(image), image
    assert all(isinstance(v, str) for v in build["args"].values())
    dockerfile = (ADDON / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^ARG BUILD_FROM", dockerfile, re.M)
    assert re.search(r"^FROM \$\{BUILD_FROM\}", dockerfile, re.M)
    for arg in build["args"]:
        assert re.search(rf"^ARG {arg}\b", dockerfile, re.M), arg
    assert "COPY rootfs /" in dockerfile
    assert "wyoming_omnivoice.health_check" in dockerfile


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
    assert 'bashio::discovery "wyoming"' in discovery
    assert "tcp://$(hostname):10200" in discovery


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
               "debug": True}
    argv = _argv(run_addon(tmp_path, json.dumps(options)))
    assert argv == [
        "--uri", "tcp://0.0.0.0:10200", "--data-dir", str(tmp_path / "data"), "--device", "cpu",
        "--web-uri", "http://0.0.0.0:8099", "--web-ingress",
        "--voice", "my butler", "--precision", "fp32", "--num-steps", "12",
        "--guidance-scale", "2.5",
        "--preload-languages", "en,de", "--max-gap", "1.5", "--debug",
    ]


def test_run_script_defaults_of_config_yaml(tmp_path: Path, config: dict[str, Any]) -> None:
    argv = _argv(run_addon(tmp_path, json.dumps(config["options"])))
    assert argv[argv.index("--voice") + 1] == "en-female-young"
    assert argv[argv.index("--precision") + 1] == "auto"  # int8 on the add-on's CPU
    assert argv[argv.index("--num-steps") + 1] == "16"
    assert argv[argv.index("--guidance-scale") + 1] == "2.0"
    assert argv[argv.index("--preload-languages") + 1] == "en"
    assert argv[argv.index("--max-gap") + 1] == "2.0"
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


class _HomeAssistantApi:
    """A stand-in for the Supervisor's proxy of Home Assistant's ``/api/config``."""

    def __init__(self, language: str | None, token: str = "secret-token") -> None:
        import http.server
        import threading

        api = self
        self.token = token
        self.seen: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.seen.append(f"{self.path} {self.headers.get('Authorization')}")
                if self.headers.get("Authorization") != f"Bearer {api.token}":
                    self.send_error(401)
                    return
                body = json.dumps({"language": language, "version": "2026.11.0"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/core/api/config"

    def env(self) -> dict[str, str]:
        return {"SUPERVISOR_TOKEN": self.token, "OMNIVOICE_HA_CONFIG_URL": self.url}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize(("ha_language", "option", "expected"), [
    ("de-DE", "en", "en,de"),
    ("de", None, "en,de"),       # the option left empty: English and Home Assistant's
    ("pt-BR", "en,fr", "en,fr,pt"),
    ("en-GB", "en", "en"),       # English already
])
def test_run_script_preloads_home_assistants_language(
        tmp_path: Path, ha_language: str, option: str | None, expected: str) -> None:
    api = _HomeAssistantApi(ha_language)
    try:
        options = {} if option is None else {"preload_languages": option}
        argv = _argv(run_addon(tmp_path, json.dumps(options), env=api.env()))
    finally:
        api.close()
    assert argv[argv.index("--preload-languages") + 1] == expected
    assert api.seen == ["/core/api/config Bearer secret-token"]


def test_run_script_starts_when_home_assistant_cannot_be_asked(tmp_path: Path) -> None:
    api = _HomeAssistantApi("de")
    url = api.url
    api.close()  # nobody listens there now
    result = run_addon(tmp_path, json.dumps({"preload_languages": "en"}),
                       env={"SUPERVISOR_TOKEN": "t", "OMNIVOICE_HA_CONFIG_URL": url})
    argv = _argv(result)
    assert argv[argv.index("--preload-languages") + 1] == "en"
    assert "could not read Home Assistant's language" in result.stderr


def test_run_script_keeps_none_and_asks_nothing_outside_the_supervisor(tmp_path: Path) -> None:
    api = _HomeAssistantApi("de")
    try:
        argv = _argv(run_addon(tmp_path, json.dumps({"preload_languages": "none"}),
                               env=api.env()))
        assert argv[argv.index("--preload-languages") + 1] == "none"
        standalone = tmp_path / "standalone"
        standalone.mkdir()
        argv = _argv(run_addon(standalone, json.dumps({"preload_languages": "en"}),
                               env={"OMNIVOICE_HA_CONFIG_URL": api.url}))
        assert argv[argv.index("--preload-languages") + 1] == "en"
    finally:
        api.close()
    assert api.seen == []


def test_config_asks_for_the_home_assistant_api(config: dict[str, Any]) -> None:
    assert config["homeassistant_api"] is True
