"""Text cleanup of LLM replies before synthesis."""

from __future__ import annotations

import pytest

from wyoming_omnivoice.text.cleanup import clean_text, has_speech
from wyoming_omnivoice.text.prepare import prepare_sentence


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("The light is **on**.", "The light is on."),
        ("It is *very* warm and __humid__.", "It is very warm and humid."),
        ("~~Old~~ New value.", "Old New value."),
        ("Use `snake_case` names.", "Use snake_case names."),
        ("## Weather today", "Weather today"),
        ("> Quoted reply", "Quoted reply"),
        ("- eggs\n- milk\n* bread\n+ jam", "eggs\nmilk\nbread\njam"),
        ("1. First\n2) Second", "First\nSecond"),
        ("See [the docs](https://example.com/a_(b)) now.", "See the docs now."),
        ("Visit https://example.com/path?q=1 today.", "Visit today."),
        ("Go to www.example.org for more.", "Go to for more."),
        ("Link <https://example.com> here.", "Link here."),
        ("Done ✅ and sunny ☀️ today 🙂👍🏽.", "Done and sunny today."),
        ("Family 👨‍👩‍👧 photo.", "Family photo."),
        ("Love ❤️‍🔥 and 🏳️‍🌈 flags.", "Love and flags."),
        # a zero-width joiner inside a word is spelling: Sinhala ශ්‍රී, Devanagari र्‍य,
        # Bengali র‍্য, Malayalam ൻ‍
        ("ශ්\u200dරී ලංකාව.", "ශ්\u200dරී ලංකාව."),
        ("र्\u200dय and র\u200d্য and ന്\u200d.", "र्\u200dय and র\u200d্য and ന്\u200d."),
        ("Line<br>break", "Line break"),
        ("I laughed [laughter] a lot [sigh].", "I laughed [laughter] a lot [sigh]."),
        ("Say [B EY1 S] and ZHE2.", "Say [B EY1 S] and ZHE2."),
        ("Temperature is 21.5 °C, 3 * 4 = 12.", "Temperature is 21.5 °C, 3 * 4 = 12."),
        ("a_b_c stays", "a_b_c stays"),
        ("你好，**世界**！😀", "你好，世界！"),
        ("Too    many   spaces .", "Too many spaces."),
        ("---\nAfter a rule", "After a rule"),
    ],
)
def test_clean_text(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean


def test_table_cells_are_kept_apart() -> None:
    text = "| Room | Temp |\n|---|---|\n| Kitchen | 21 |"
    cleaned = clean_text(text)
    assert "Kitchen" in cleaned and "21" in cleaned and "|" not in cleaned
    assert "---" not in cleaned


def test_prepare_sentence_joins_lines() -> None:
    assert prepare_sentence("- eggs\n- milk") == "eggs milk"


@pytest.mark.parametrize("text", ["", "   ", "** __ **", "🙂🙂", "...", "- \n- "])
def test_nothing_to_say(text: str) -> None:
    assert not has_speech(clean_text(text))


@pytest.mark.parametrize("text", ["Hi", "42", "你好", "[laughter]"])
def test_something_to_say(text: str) -> None:
    assert has_speech(clean_text(text))


@pytest.mark.parametrize("unit", ["**a ", "__a ", "~~a ", "a **b", "*a "])
def test_unclosed_emphasis_runs_keep_their_words(unit: str) -> None:
    """Inputs that made the old emphasis patterns backtrack (quadratic time; see
    benchmarks/bench_text_prep.py) are still cleaned: unpaired ``**``/``~~`` go, single
    marks stay as they are, and every word is kept, in order."""
    text = unit * 1250
    cleaned = clean_text(text)
    assert "**" not in cleaned and "~~" not in cleaned
    words = [word.strip("*_~") for word in text.split()]
    assert [word.strip("*_~") for word in cleaned.split()] == [w for w in words if w]


def test_table_separator_rows_and_long_blank_runs() -> None:
    assert clean_text("| a | b |\n|---|:--:|\n| 1 | 2 |") == ", a, b,\n\n, 1, 2,"
    assert clean_text(" " * 4999 + "x") == "x"
    assert clean_text("| -- " * 833) == ""
