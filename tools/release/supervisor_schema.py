"""The Home Assistant Supervisor's rules for an add-on repository, written down from its source.

Followed (home-assistant/supervisor at 2026.08.0-4, commit 090ef31, 2026-08-21; facts read,
no code copied):

- ``supervisor/apps/validate.py``: ``_SCHEMA_APP_CONFIG`` (config.yaml's keys and types),
  ``_migrate_app_config`` / ``_warn_app_config`` (deprecated forms, map entries skipped,
  the dynamic ingress port range), ``SCHEMA_BUILD_CONFIG`` (build.yaml),
  ``SCHEMA_APP_TRANSLATIONS`` (translations/*.yaml);
- ``supervisor/apps/options.py``: ``RE_SCHEMA_ELEMENT``, the option schema language;
- ``supervisor/validate.py``: ``docker_image`` (no tag, lower-case path components),
  ``docker_ports``, ``network_port``, ``version_tag``;
- ``supervisor/store/validate.py``: ``SCHEMA_REPOSITORY_CONFIG`` (repository.yaml);
- ``supervisor/const.py``: the architectures, startup/boot/stage values, roles;
  ``supervisor/apps/const.py``: map types; ``supervisor/docker/const.py``: capabilities.

The Supervisor drops unknown keys silently and skips a config it cannot validate with only a
log line (the add-on is then missing from the store). Here both are problems: a typo in a
key would otherwise be lost without a word. A version must be a quoted string (YAML reads
``0.10`` as the float 0.1).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

ARCHES = {"aarch64", "amd64"}
DEPRECATED_ARCHES = {"armhf", "armv7", "i386"}
STARTUP = {"initialize", "system", "services", "application", "once"}
BOOT = {"auto", "manual", "manual_only"}
STAGE = {"stable", "experimental", "deprecated"}
BACKUP = {"hot", "cold"}
ROLES = {"default", "homeassistant", "backup", "manager", "admin"}
CAPABILITIES = {
    "BPF", "CHECKPOINT_RESTORE", "DAC_READ_SEARCH", "IPC_LOCK", "NET_ADMIN", "NET_RAW",
    "PERFMON", "SYS_ADMIN", "SYS_MODULE", "SYS_NICE", "SYS_PTRACE", "SYS_RAWIO",
    "SYS_RESOURCE", "SYS_TIME",
}
MAP_TYPES = {
    "data", "config", "ssl", "local_apps", "backup", "share", "media", "homeassistant_config",
    "all_app_configs", "app_config",
}
#: Map types the Supervisor still reads but calls legacy (2026.07) or deprecated.
LEGACY_MAP_TYPES = {"addons": "local_apps", "all_addon_configs": "all_app_configs",
                    "addon_config": "app_config", "config": "homeassistant_config"}
BOOLEAN_KEYS = {
    "init", "ingress", "ingress_stream", "panel_admin", "host_network", "host_pid",
    "host_ipc", "host_uts", "host_dbus", "udev", "tmpfs", "apparmor", "full_access", "audio",
    "video", "gpio", "usb", "uart", "devicetree", "kernel_modules", "realtime", "hassio_api",
    "homeassistant_api", "stdin", "legacy", "docker_api", "auth_api", "journald",
}
STRING_KEYS = {"ingress_entry", "panel_icon", "panel_title", "backup_pre", "backup_post"}
STRING_LIST_KEYS = {"devices", "discovery", "backup_exclude"}
OTHER_KEYS = {
    "name", "version", "slug", "description", "arch", "machine", "url", "startup", "boot",
    "stage", "ports", "ports_description", "watchdog", "webui", "ingress_port",
    "homeassistant", "map", "environment", "privileged", "hassio_role", "services", "backup",
    "options", "schema", "image", "ulimits", "timeout", "breaking_versions",
}
KNOWN_KEYS = BOOLEAN_KEYS | STRING_KEYS | STRING_LIST_KEYS | OTHER_KEYS
#: Keys the Supervisor migrates or ignores, with what to use instead.
DEPRECATED_KEYS = {
    "advanced": "nothing (ignored since 2026.03)", "codenotary": "nothing (ignored)",
    "auto_uart": "uart", "snapshot": "backup", "snapshot_exclude": "backup_exclude",
    "snapshot_pre": "backup_pre", "snapshot_post": "backup_post",
}

SLUG = re.compile(r"^[-_.A-Za-z0-9]+$")
PORT_KEY = re.compile(r"^\d+(?:/tcp|/udp)?$")
WATCHDOG = re.compile(r"^(?:https?|\[PROTO:\w+\]|tcp):\/\/\[HOST\]:(\[PORT:\d+\]|\d+).*$")
WEBUI = re.compile(r"^(?:https?|\[PROTO:\w+\]):\/\/\[HOST\]:\[PORT:\d+\].*$")
SERVICE = re.compile(r"^(mqtt|mysql):(provide|want|need)$")
MAP_STRING = re.compile(r"^([a-z_]+)(?::(rw|ro))?$")
MACHINE = re.compile(
    r"^!?(?:|intel-nuc|khadas-vim3|generic-aarch64|generic-x86-64|odroid-c2|odroid-c4"
    r"|odroid-m1|odroid-n2|odroid-xu|qemuarm-64|qemuarm|qemux86-64|qemux86|raspberrypi"
    r"|raspberrypi2|raspberrypi3-64|raspberrypi3|raspberrypi4-64|raspberrypi4"
    r"|raspberrypi5-64|yellow|green|tinker)$")
IMAGE_COMPONENT = re.compile(r"^[a-z0-9{][a-z0-9.\-_{}]*$")
REGISTRY = re.compile(r"^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
                      r"(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::\d+)?$")
#: build.yaml's ``build_from``: an image reference, tag allowed, ``{arch}`` templates allowed.
BUILD_IMAGE = re.compile(r"^([a-zA-Z\-.:\d{}]+/)*?([\-\w{}]+)/([\-\w{}]+)(:[.\-\w{}]+)?$")
NUMBER = r"-?\d*\.?\d+"
SCHEMA_ELEMENT = re.compile(
    r"^(?P<type>bool|email|url|port|device(?:\(subsystem=[a-z]+\))?"
    r"|str(?:\((?P<s_min>\d+)?,(?P<s_max>\d+)?\))?"
    r"|password(?:\((?P<p_min>\d+)?,(?P<p_max>\d+)?\))?"
    r"|int(?:\((?P<i_min>-?\d+)?,(?P<i_max>-?\d+)?\))?"
    rf"|float(?:\((?P<f_min>{NUMBER})?,(?P<f_max>{NUMBER})?\))?"
    r"|match\(.*\)|list\(.+\))(?P<optional>\?)?$")
INGRESS_DYNAMIC_PORTS = range(62000, 65501)


def is_url(value: object) -> bool:
    """What the Supervisor's ``vol.Url()`` accepts: a scheme and a host."""
    if not isinstance(value, str):
        return False
    parsed = urlparse(value)
    return bool(parsed.scheme and parsed.netloc)


def image_problem(image: object) -> str | None:
    """Why ``image`` is not an add-on image name the Supervisor takes, or None."""
    if not isinstance(image, str) or not image:
        return "must be a non-empty string"
    first, slash, rest = image.partition("/")
    registry = None
    if slash and (first == "localhost" or "." in first or ":" in first or first != first.lower()):
        registry, image = first, rest
    if registry is not None and (registry != registry.lower() or not REGISTRY.match(registry)):
        return f"registry {registry!r} must be a lower-case domain"
    if ":" in image:
        return "must not carry a tag (the Supervisor pulls the add-on's version)"
    bad = [part for part in image.split("/") if not IMAGE_COMPONENT.match(part)]
    return f"bad path component {bad[0]!r} (lower case only)" if bad else None


def _is_port(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def config_problems(config: object) -> list[str]:
    """Everything in an add-on's config.yaml that the Supervisor would reject, skip, drop or
    call deprecated."""
    if not isinstance(config, dict):
        return ["config.yaml must be a mapping"]
    problems: list[str] = []
    for key in ("name", "version", "slug", "description"):
        if not isinstance(config.get(key), str) or not config.get(key):
            problems.append(f"{key}: required, a non-empty string")
    if isinstance(config.get("slug"), str) and not SLUG.match(config["slug"]):
        problems.append("slug: only letters, digits, '-', '_' and '.'")
    arch = config.get("arch")
    if not isinstance(arch, list) or not arch:
        problems.append("arch: required, a list of architectures")
    else:
        for value in arch:
            if value in DEPRECATED_ARCHES:
                problems.append(f"arch: {value!r} is deprecated")
            elif value not in ARCHES:
                problems.append(f"arch: unknown {value!r} (one of {sorted(ARCHES)})")
    for key in sorted(set(config) - KNOWN_KEYS):
        if key in DEPRECATED_KEYS:
            problems.append(f"{key}: deprecated, use {DEPRECATED_KEYS[key]}")
        else:
            problems.append(f"{key}: unknown key (the Supervisor drops it without a word)")
    for key in sorted(BOOLEAN_KEYS & set(config)):
        if not isinstance(config[key], bool):
            problems.append(f"{key}: must be a boolean")
    for key in sorted(STRING_KEYS & set(config)):
        if not isinstance(config[key], str):
            problems.append(f"{key}: must be a string")
    for key in sorted(STRING_LIST_KEYS & set(config)):
        value = config[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{key}: must be a list of strings")
    for key, allowed in (("startup", STARTUP), ("boot", BOOT), ("stage", STAGE),
                         ("backup", BACKUP), ("hassio_role", ROLES)):
        if key in config and config[key] not in allowed:
            problems.append(f"{key}: {config[key]!r} not in {sorted(allowed)}")
    problems += _pattern_problems(config)
    problems += _port_problems(config)
    problems += _map_problems(config.get("map", []))
    if "image" in config and (why := image_problem(config["image"])):
        problems.append(f"image: {why}")
    timeout = config.get("timeout", 10)
    if not (isinstance(timeout, int) and not isinstance(timeout, bool) and 10 <= timeout <= 300):
        problems.append("timeout: an integer from 10 to 300")
    options, schema = config.get("options", {}), config.get("schema", {})
    if not isinstance(options, dict):
        problems.append("options: must be a mapping")
    elif schema is not False:
        problems += option_problems(options, schema)
    return problems


def _pattern_problems(config: dict[str, Any]) -> list[str]:
    problems = []
    if "url" in config and not is_url(config["url"]):
        problems.append("url: must be a URL")
    for key, pattern in (("watchdog", WATCHDOG), ("webui", WEBUI)):
        if key in config and not (isinstance(config[key], str) and pattern.match(config[key])):
            problems.append(f"{key}: does not match the Supervisor's {key} format")
    for key, pattern in (("machine", MACHINE), ("services", SERVICE)):
        values = config.get(key, [])
        if not isinstance(values, list) or not all(
                isinstance(v, str) and pattern.match(v) for v in values):
            problems.append(f"{key}: a list of known {key} values")
    privileged = config.get("privileged", [])
    if not isinstance(privileged, list) or not set(map(str, privileged)) <= CAPABILITIES:
        problems.append(f"privileged: a list of capabilities from {sorted(CAPABILITIES)}")
    environment = config.get("environment", {})
    if not isinstance(environment, dict) or not all(
            isinstance(k, str) and re.fullmatch(r"\w*", k) and isinstance(v, str)
            for k, v in environment.items()):
        problems.append("environment: a mapping of names to strings")
    for key in ("version", "homeassistant"):
        if key in config and not isinstance(config[key], str):
            problems.append(f"{key}: quote it (a string; YAML reads 0.10 as 0.1)")
    return problems


def _port_problems(config: dict[str, Any]) -> list[str]:
    problems = []
    for key in ("ports", "ports_description"):
        value = config.get(key, {})
        if not isinstance(value, dict):
            problems.append(f"{key}: must be a mapping")
            continue
        for port, target in value.items():
            if not (isinstance(port, str) and PORT_KEY.match(port)):
                problems.append(f"{key}: bad port {port!r} (write '10200/tcp')")
            if key == "ports" and target is not None and not _is_port(target):
                problems.append(f"ports: {port} maps to {target!r} (a port or null)")
            if key == "ports_description" and not isinstance(target, str):
                problems.append(f"ports_description: {port} needs a string")
    ingress_port = config.get("ingress_port", 8099)
    if not (_is_port(ingress_port) or ingress_port == 0):
        problems.append("ingress_port: a port, or 0 for a dynamic one")
    if config.get("ingress") and ingress_port == 0:
        for port in config.get("ports", {}) or {}:
            number = str(port).partition("/")[0]
            if number.isdigit() and int(number) in INGRESS_DYNAMIC_PORTS:
                problems.append(f"ports: {port} is in the dynamic ingress range 62000-65500")
    return problems


def _map_problems(entries: object) -> list[str]:
    if not isinstance(entries, list):
        return ["map: must be a list"]
    problems = []
    for entry in entries:
        kind: object = None
        if isinstance(entry, str) and (match := MAP_STRING.match(entry)):
            kind = match.group(1)
        elif isinstance(entry, dict):
            kind = entry.get("type")
            if not isinstance(entry.get("read_only", True), bool):
                problems.append(f"map: read_only must be a boolean in {entry!r}")
            if not isinstance(entry.get("path", ""), str):
                problems.append(f"map: path must be a string in {entry!r}")
            if set(entry) - {"type", "read_only", "path"}:
                problems.append(f"map: unknown keys in {entry!r}")
        if kind in LEGACY_MAP_TYPES:
            problems.append(f"map: {kind!r} is legacy, use {LEGACY_MAP_TYPES[str(kind)]!r}")
        elif kind not in MAP_TYPES:
            problems.append(f"map: bad entry {entry!r} (the Supervisor skips it)")
    return problems


def option_problems(options: dict[str, Any], schema: object) -> list[str]:
    """The option schema: each element a schema element, each default of its type and
    within its bounds, each option in the schema."""
    if not isinstance(schema, dict):
        return ["schema: a mapping of option names to schema elements (or false)"]
    problems = []
    for key, element in schema.items():
        if isinstance(element, list | dict):
            continue  # nested lists and groups: checked by the Supervisor when options change
        match = SCHEMA_ELEMENT.match(element) if isinstance(element, str) else None
        if match is None:
            problems.append(f"schema.{key}: {element!r} is not a schema element")
        elif key not in options:
            if not match["optional"]:
                problems.append(f"options.{key}: required by the schema but has no default")
        else:
            problems += _default_problems(key, options[key], match)
    problems += [f"options.{key}: not in the schema" for key in sorted(set(options) - set(schema))]
    return problems


def _default_problems(key: str, value: Any, match: re.Match[str]) -> list[str]:
    kind = match["type"].split("(")[0]
    if value is None:
        return []  # the user must set it before the add-on starts
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    fits = {"bool": isinstance(value, bool), "port": _is_port(value),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": is_number}.get(kind, isinstance(value, str))
    if not fits:
        return [f"options.{key}: default {value!r} is not a {kind}"]
    low, high = {"int": (match["i_min"], match["i_max"]),
                 "float": (match["f_min"], match["f_max"]),
                 "str": (match["s_min"], match["s_max"]),
                 "password": (match["p_min"], match["p_max"])}.get(kind, (None, None))
    measured = len(value) if kind in ("str", "password") else value
    if low is not None and measured < float(low):
        return [f"options.{key}: default {value!r} below {low}"]
    if high is not None and measured > float(high):
        return [f"options.{key}: default {value!r} above {high}"]
    return []


def build_problems(build: object, arches: list[str]) -> list[str]:
    """build.yaml (``SCHEMA_BUILD_CONFIG``): ``build_from`` one image or one per
    architecture (every architecture of config.yaml), ``args`` and ``labels`` string
    mappings, ``squash`` a boolean (ignored by BuildKit builds)."""
    if not isinstance(build, dict):
        return ["build.yaml must be a mapping"]
    problems = [f"{key}: unknown key" for key in sorted(set(build) - {"build_from", "args",
                                                                     "labels", "squash"})]
    build_from = build.get("build_from", {})
    images = build_from if isinstance(build_from, dict) else {arch: build_from for arch in arches}
    for arch in arches:
        if arch not in images:
            problems.append(f"build_from: no base image for {arch}")
    for arch, image in images.items():
        if arch not in ARCHES | DEPRECATED_ARCHES:
            problems.append(f"build_from: unknown architecture {arch!r}")
        if not (isinstance(image, str) and BUILD_IMAGE.match(image)):
            problems.append(f"build_from: {image!r} is not an image reference")
    for key in ("args", "labels"):
        value = build.get(key, {})
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            problems.append(f"{key}: a mapping of strings to strings (quote numbers)")
    if not isinstance(build.get("squash", False), bool):
        problems.append("squash: must be a boolean")
    return problems


def repository_problems(repository: object) -> list[str]:
    """repository.yaml (``SCHEMA_REPOSITORY_CONFIG``): a name, an optional URL and an
    optional maintainer."""
    if not isinstance(repository, dict):
        return ["repository.yaml must be a mapping"]
    problems = [f"{key}: unknown key" for key in sorted(set(repository)
                                                        - {"name", "url", "maintainer"})]
    if not isinstance(repository.get("name"), str) or not repository.get("name"):
        problems.append("name: required, a non-empty string")
    if "url" in repository and not is_url(repository["url"]):
        problems.append("url: must be a URL")
    if "maintainer" in repository and not isinstance(repository["maintainer"], str):
        problems.append("maintainer: must be a string")
    return problems


def translation_problems(translation: object) -> list[str]:
    """translations/LANG.yaml (``SCHEMA_APP_TRANSLATIONS``): ``configuration`` maps an
    option to a name, an optional description and nested ``fields``; ``network`` maps a port
    to a string. The Supervisor skips a file that fails this."""
    if not isinstance(translation, dict):
        return ["a translation must be a mapping"]
    problems = [f"{key}: unknown key" for key in sorted(set(translation)
                                                        - {"configuration", "network"})]
    problems += _translated_options(translation.get("configuration", {}), "configuration")
    network = translation.get("network", {})
    if not isinstance(network, dict) or not all(isinstance(v, str) for v in network.values()):
        problems.append("network: a mapping of ports to strings")
    return problems


def _translated_options(entries: object, where: str) -> list[str]:
    if not isinstance(entries, dict):
        return [f"{where}: must be a mapping"]
    problems = []
    for key, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            problems.append(f"{where}.{key}: needs a name (a string)")
            continue
        if entry.get("description") is not None and not isinstance(entry["description"], str):
            problems.append(f"{where}.{key}.description: must be a string")
        if "fields" in entry:
            problems += _translated_options(entry["fields"], f"{where}.{key}.fields")
    return problems
