"""One typed configuration: every flag declared in one module, parsed into a frozen Config."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from wyoming_omnivoice.app.config import Config, parse_config, validate
from wyoming_omnivoice.app.flags import BOUNDS, Bounds, add_number, build_parser
from wyoming_omnivoice.errors import StartupError

PACKAGE = Path(__file__).resolve().parents[2] / "wyoming_omnivoice"


def test_every_flag_is_a_config_field_with_the_same_default() -> None:
    fields = {field.name: field for field in dataclasses.fields(Config)}
    dests = {action.dest: action.default for action in build_parser()._actions
             if action.dest not in ("help", "version")}
    assert set(dests) == set(fields)
    assert Config() == parse_config([])
    for name, default in dests.items():
        assert getattr(Config(), name) == default, name


def test_the_config_is_frozen_and_typed() -> None:
    config = parse_config(["--max-concurrent", "3", "--preload-languages", "en,de"])
    assert config.max_concurrent == 3 and config.preload_languages == ("en", "de")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_concurrent = 4  # type: ignore[misc]


#: Tools of their own with their own few flags: the offline converter and the Docker probe.
OTHER_TOOLS = ["convert.py", "convert_anchors.py", "convert_prepare.py", "health_check.py"]


def test_flags_are_declared_in_one_module() -> None:
    """The server's and the synthesize CLI's flags are all in app/flags.py."""
    declaring = sorted(
        path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
        if any(isinstance(node, ast.Attribute) and node.attr == "add_argument"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert declaring == sorted([*OTHER_TOOLS, "app/flags.py"])


def test_no_namespace_past_the_cli() -> None:
    """Only the command-line modules name argparse.Namespace (the server's Config is made
    from it in app/config.py)."""
    naming = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
                    if "Namespace" in path.read_text(encoding="utf-8"))
    assert naming == ["app/config.py", "app/flags.py", "convert_anchors.py",
                      "convert_prepare.py", "synthesize.py"]


def test_every_numeric_flag_has_its_bounds_checked_in_flag_order() -> None:
    actions = [action for action in build_parser()._actions if action.option_strings]
    numeric = [action.option_strings[0] for action in actions
               if action.type in (int, float)]
    assert numeric == list(BOUNDS)  # validate reports the first bad one, in this order
    with pytest.raises(KeyError, match="--new-flag"):
        add_number(build_parser(), "--new-flag", int, 1, "a flag without bounds")


@pytest.mark.parametrize(("bounds", "value", "message"), [
    (Bounds(0.1, 3600), 0.05, "--x 0.05: use 0.1 to 3600"),
    (Bounds(0, 86400, low_means="never"), -1.0, "--x -1.0: use 0 (never) to 86400"),
    (Bounds(1), 0, "--x 0: must be >= 1"),
    (Bounds(0, 10), float("nan"), "--x nan: use 0 to 10"),
    (Bounds(0, 10), 10.0, None), (Bounds(0, 10), None, None), (Bounds(1), 10**9, None),
])
def test_bounds_say_what_to_use(bounds: Bounds, value: float | None,
                                message: str | None) -> None:
    assert bounds.problem("--x", value) == message


@pytest.mark.parametrize(("argv", "message"), [
    (["--read-timeout", "0", "--max-connections", "0"], "--read-timeout 0.0: use 0.1 to 3600"),
    (["--idle-timeout", "-1"], "--idle-timeout -1.0: use 0 (never) to 86400"),
    (["--max-text-length", "0"], "--max-text-length 0: must be >= 1"),
    (["--shutdown-timeout", "3601"], "--shutdown-timeout 3601.0: use 0 to 3600"),
])
def test_validate_names_the_first_bad_value(argv: list[str], message: str,
                                            tmp_path: Path) -> None:
    with pytest.raises(StartupError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(parse_config([*argv, "--data-dir", str(tmp_path)]))


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-batch-size", "0"], "--max-batch-size 0: use 1 to 64"),
    (["--num-steps", "200"], "--num-steps 200: use 1 to 128"),
    (["--prefix-cache", "-1"],
     "--prefix-cache -1: use 0 (off, exact) to 128"),
    (["--prefix-cache", "129"], "--prefix-cache 129: use 0 (off, exact) to 128"),
    (["--uri", "http://x"], "use tcp://HOST:PORT"),
])
def test_validate_names_the_bad_value(argv: list[str], message: str, tmp_path: Path) -> None:
    with pytest.raises(StartupError, match=re.escape(message)):
        validate(parse_config([*argv, "--data-dir", str(tmp_path)]))


def test_prefix_cache_is_off_unless_asked(tmp_path: Path) -> None:
    assert validate(parse_config(["--data-dir", str(tmp_path)])).prefix_cache == 0
    assert validate(parse_config(["--prefix-cache", "4", "--data-dir", str(tmp_path)])
                    ).prefix_cache == 4
    with pytest.raises(SystemExit):  # argparse: not a whole number
        parse_config(["--prefix-cache", "two"])
