"""Language table and resolution, compared with upstream's ``_resolve_language``."""

from __future__ import annotations

import logging

import pytest
from rule_goldens import rules

from wyoming_omnivoice.engine.prompt.languages import (
    advertised_language_code,
    all_language_ids,
    all_languages,
    language_info,
    language_name,
    resolve_language,
    strict_language,
    suggest_languages,
)

GOLDEN = rules()["languages"]


def test_table_has_upstream_ids_and_display_names() -> None:
    ids = all_language_ids()
    assert len(ids) == 646
    assert sum(len(i) == 2 for i in ids) == 125
    assert sum(len(i) == 3 for i in ids) == 521
    assert {i: language_name(i) for i in ids} == GOLDEN["names"]


def test_rows_are_consistent() -> None:
    for row in all_languages():
        assert language_info(row.id) == row
        assert row.key == row.key.lower()
    assert language_info("EN") is None
    assert language_name("xx") is None


def test_resolve_matches_upstream_on_every_recorded_input() -> None:
    cases = GOLDEN["resolve"]
    assert len(cases) > 2000
    mismatches = [(value, want, resolve_language(value)) for value, want in cases]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert mismatches == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("English", "en"),
        ("en", "en"),
        ("Chinese", "zh"),
        ("Cantonese", "yue"),
        ("yue", "yue"),
        ("arb", "arb"),
        ("Min Nan Chinese", "nan"),
        ("EN", None),
        ("none", None),
        ("NONE", None),
        (None, None),
    ],
)
def test_resolve_spec_examples(value: str | None, expected: str | None) -> None:
    assert resolve_language(value) == expected


def test_unknown_language_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="wyoming_omnivoice.engine.prompt.languages"):
        assert resolve_language("Klingon") is None
    assert "Klingon" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="wyoming_omnivoice.engine.prompt.languages"):
        assert resolve_language("none") is None
    assert caplog.text == ""


def test_strict_language_agrees_with_resolve_for_known_values() -> None:
    for value, want in GOLDEN["resolve"]:
        if want is not None:
            assert strict_language(value) == want
    assert strict_language(None) is None
    assert strict_language("None") is None


@pytest.mark.parametrize(
    ("value", "suggestion"),
    [("EN", "en (English)"), ("Englsh", "en (English)"), ("cantonse", "yue (Cantonese)")],
)
def test_strict_language_rejects_unknown_with_suggestions(value: str, suggestion: str) -> None:
    with pytest.raises(ValueError, match="Unknown language") as error:
        strict_language(value)
    assert suggestion in str(error.value)
    assert suggestion in suggest_languages(value)


def test_strict_language_without_close_match() -> None:
    with pytest.raises(ValueError) as error:
        strict_language("qqqqqqqqqqqq")
    assert "Did you mean" not in str(error.value)


def test_advertised_codes() -> None:
    codes = {i: advertised_language_code(i) for i in all_language_ids()}
    assert codes["en"] == "en"
    assert codes["zh"] == "zh"
    assert codes["yue"] == "zh-HK"
    assert codes["arb"] == "ar"
    assert codes["npi"] == "ne"
    assert codes["ast"] == "ast"
    assert all(code == i for i, code in codes.items() if len(i) == 2)
    assert len(set(codes.values())) == len(codes), "two languages share an advertised code"
    assert advertised_language_code("English") is None
