"""Every Home Assistant-style sentence file reads as its hand-written spoken form.

``tests/text/normalize_cases/<lang>.tsv`` holds at least 25 replies per language with the words
a native speaker says for them; ``tools/normalize_side_by_side.py`` prints them for review.
A language is on by default (`supports_language`) only if it has such a file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wyoming_omnivoice.text.normalize import normalize_text, supports_language

CASES = Path(__file__).resolve().parent / "normalize_cases"
FILES = sorted(p for p in CASES.glob("*.tsv") if p.stem != "ha_nouns")


def _cases(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(written, accepted spoken forms): the first is the one we read; further columns are
    other readings a native speaker finds as natural."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            written, *spoken = line.split("\t")
            assert spoken, f"{path.name}: no spoken form for {written!r}"
            rows.append((written, tuple(spoken)))
    return rows


@pytest.mark.parametrize(
    ("language", "written", "spoken"),
    [pytest.param(p.stem, w, s, id=f"{p.stem}-{i}") for p in FILES
     for i, (w, s) in enumerate(_cases(p))],
)
def test_sentence(language: str, written: str, spoken: tuple[str, ...]) -> None:
    assert normalize_text(written, language) in spoken


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_language_has_enough_sentences_and_is_on(path: Path) -> None:
    assert len(_cases(path)) >= 25
    assert supports_language(path.stem)


def test_languages_on_by_default_all_have_a_sentence_file() -> None:
    from wyoming_omnivoice.text.normalize import FULL_LANGUAGES, other

    on = {*FULL_LANGUAGES, "zh", *other.ENABLED}
    assert on == {p.stem for p in FILES}
