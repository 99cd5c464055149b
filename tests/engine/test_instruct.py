"""Voice-design instruct rules, compared with upstream's ``_resolve_instruct``."""

from __future__ import annotations

import pytest
from rule_goldens import rules

from wyoming_omnivoice.engine.prompt.instruct import (
    ALL_ITEMS,
    CATEGORIES,
    EN_TO_ZH,
    VALID_CHINESE,
    VALID_ENGLISH,
    UnknownInstructItems,
    category_of,
    normalize_instruct,
    vocabulary,
)

GOLDEN = rules()["instruct"]


def _run(instruct: str | None, text: str) -> dict:
    try:
        return {"output": normalize_instruct(instruct, text)}
    except UnknownInstructItems as error:
        return {"error": "unknown", "items": [list(item) for item in error.items]}
    except ValueError as error:
        message = str(error)
        if message.startswith("Cannot mix"):
            return {"error": "mix"}
        if message.startswith("Conflicting instruct items"):
            detail = message.split(": ", 1)[1].split(". Each category", 1)[0]
            return {"error": "conflict", "detail": detail}
        raise


def test_vocabulary_matches_upstream() -> None:
    assert list(VALID_ENGLISH) == GOLDEN["valid_en"]
    assert list(VALID_CHINESE) == GOLDEN["valid_zh"]
    assert GOLDEN["en_to_zh"] == EN_TO_ZH
    assert len(VALID_ENGLISH) == 23
    assert len(VALID_CHINESE) == 25


def test_vocabulary_data_for_messages() -> None:
    data = vocabulary()
    assert list(data) == ["gender", "age", "pitch", "style", "accent", "dialect"]
    assert data["accent"]["zh"] == []
    assert data["dialect"]["en"] == []
    assert sum(len(c["en"]) for c in data.values()) == 23
    assert sum(len(c["zh"]) for c in data.values()) == 25
    assert {cat.name for cat in CATEGORIES} == set(data)
    assert category_of("四川话") == "dialect"
    assert category_of("young adult") == "age"
    assert category_of("Young Adult") is None
    assert all(category_of(item) for item in ALL_ITEMS)


def test_every_recorded_case_matches_upstream() -> None:
    cases = GOLDEN["cases"]
    assert len(cases) > 2000
    errors = {"unknown": 0, "mix": 0, "conflict": 0}
    mismatches = []
    for case in cases:
        want = {k: v for k, v in case.items() if k not in ("instruct", "text")}
        got = _run(case["instruct"], case["text"])
        if got != want:
            mismatches.append((case["instruct"], case["text"], want, got))
        if "error" in want:
            errors[want["error"]] += 1
    assert mismatches == []
    assert all(count > 0 for count in errors.values()), errors


@pytest.mark.parametrize(
    ("instruct", "text", "expected"),
    [
        (
            "Female, Young Adult, High Pitch, British Accent",
            "",
            "female, young adult, high pitch, british accent",
        ),
        ("male，四川话", "", "男，四川话"),
        ("female, low pitch", "你好", "女，低音调"),
        ("女，青年", "Hello", "female, young adult"),
        ("female,  whisper,", "", "female, whisper"),
        ("   ", "", None),
        (None, "", None),
    ],
)
def test_spec_examples(instruct: str | None, text: str, expected: str | None) -> None:
    assert normalize_instruct(instruct, text) == expected


def test_unknown_item_message_lists_allowed_words_and_suggestion() -> None:
    with pytest.raises(ValueError) as error:
        normalize_instruct("femal, whisper")
    message = str(error.value)
    assert "did you mean 'female'?" in message
    assert "british accent" in message
    assert "四川话" in message
    assert "\n" not in message  # one log line


def test_dialect_and_accent_conflict() -> None:
    with pytest.raises(ValueError, match="Cannot mix"):
        normalize_instruct("四川话, british accent")


def test_two_items_of_one_category() -> None:
    with pytest.raises(ValueError, match="'male' vs 'female'"):
        normalize_instruct("male, 女")
