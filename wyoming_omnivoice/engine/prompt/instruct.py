"""Voice-design instruct vocabulary and ``normalize_instruct`` (upstream ``_resolve_instruct``).

An instruct is a comma-separated list of voice attributes, at most one per category:
gender, age, pitch, style, accent (English only) and dialect (Chinese only). Items are
accepted in English (any case) or Chinese and are translated to the language of the output:
a dialect forces Chinese, an accent forces English, otherwise Chinese is used when the
target text contains a CJK ideograph.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InstructCategory:
    """A group of mutually exclusive instruct items."""

    name: str
    pairs: tuple[tuple[str, str], ...]
    """(English, Chinese) pairs for categories present in both languages."""
    english_only: tuple[str, ...] = ()
    chinese_only: tuple[str, ...] = ()

    @property
    def english(self) -> tuple[str, ...]:
        return tuple(en for en, _ in self.pairs) + self.english_only

    @property
    def chinese(self) -> tuple[str, ...]:
        return tuple(zh for _, zh in self.pairs) + self.chinese_only

    @property
    def items(self) -> frozenset[str]:
        return frozenset(self.english + self.chinese)


CATEGORIES: tuple[InstructCategory, ...] = (
    InstructCategory("gender", (("male", "男"), ("female", "女"))),
    InstructCategory(
        "age",
        (
            ("child", "儿童"),
            ("teenager", "少年"),
            ("young adult", "青年"),
            ("middle-aged", "中年"),
            ("elderly", "老年"),
        ),
    ),
    InstructCategory(
        "pitch",
        (
            ("very low pitch", "极低音调"),
            ("low pitch", "低音调"),
            ("moderate pitch", "中音调"),
            ("high pitch", "高音调"),
            ("very high pitch", "极高音调"),
        ),
    ),
    InstructCategory("style", (("whisper", "耳语"),)),
    InstructCategory(
        "accent",
        (),
        english_only=tuple(
            f"{country} accent"
            for country in (
                "american",
                "british",
                "australian",
                "chinese",
                "canadian",
                "indian",
                "korean",
                "portuguese",
                "russian",
                "japanese",
            )
        ),
    ),
    InstructCategory(
        "dialect",
        (),
        chinese_only=tuple(
            f"{place}话"
            for place in (
                "河南",
                "陕西",
                "四川",
                "贵州",
                "云南",
                "桂林",
                "济南",
                "石家庄",
                "甘肃",
                "宁夏",
                "青岛",
                "东北",
            )
        ),
    ),
)

_CJK = re.compile("[\u4e00-\u9fff]")
_SEPARATOR = re.compile(r"\s*[,，]\s*")

EN_TO_ZH: dict[str, str] = {en: zh for cat in CATEGORIES for en, zh in cat.pairs}
ZH_TO_EN: dict[str, str] = {zh: en for en, zh in EN_TO_ZH.items()}
ALL_ITEMS: frozenset[str] = frozenset().union(*(cat.items for cat in CATEGORIES))
VALID_ENGLISH: tuple[str, ...] = tuple(sorted(i for i in ALL_ITEMS if not _CJK.search(i)))
VALID_CHINESE: tuple[str, ...] = tuple(sorted(i for i in ALL_ITEMS if _CJK.search(i)))
_CATEGORY_OF: dict[str, str] = {item: cat.name for cat in CATEGORIES for item in cat.items}


def category_of(item: str) -> str | None:
    """Category name of a (lowercase) item, or ``None`` when it is not in the vocabulary."""
    return _CATEGORY_OF.get(item)


def vocabulary() -> dict[str, dict[str, list[str]]]:
    """The vocabulary as plain data: ``{category: {"en": [...], "zh": [...]}}``."""
    return {cat.name: {"en": list(cat.english), "zh": list(cat.chinese)} for cat in CATEGORIES}


def instruct_vocabulary() -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
    """Per category, in prompt order: (name, English items, Chinese items). At most one item
    per category; an accent (English speech) and a dialect (Chinese speech) never together."""
    return tuple((cat.name, cat.english, cat.chinese) for cat in CATEGORIES)


class UnknownInstructItems(ValueError):
    """Instruct items outside the vocabulary; ``items`` holds (as written, normalised,
    closest valid item or None) for each, the message says it in one line."""

    def __init__(self, message: str, items: list[tuple[str, str, str | None]]) -> None:
        super().__init__(message)
        self.items = items


def _unknown_items_error(instruct: str, unknown: list[tuple[str, str]]) -> ValueError:
    items: list[tuple[str, str, str | None]] = []
    parts = []
    for raw, item in unknown:
        close = difflib.get_close_matches(item, ALL_ITEMS, n=1, cutoff=0.6)
        suggestion = close[0] if close else None
        items.append((raw, item, suggestion))
        parts.append(f"'{raw}'" + (f" (did you mean '{suggestion}'?)" if suggestion else ""))
    noun = "item" if len(parts) == 1 else "items"
    return UnknownInstructItems(
        f"Unsupported instruct {noun} {', '.join(parts)} in {instruct!r}. "
        f"Valid English items: {', '.join(VALID_ENGLISH)}. "
        f"Valid Chinese items: {'，'.join(VALID_CHINESE)}. "
        "Use only English or only Chinese items, at most one per category (gender, age, "
        "pitch, style, accent, dialect), e.g. 'male, indian accent' or '男，河南话'.",
        items,
    )


def normalize_instruct(instruct: str | None, text: str = "") -> str | None:
    """Validate a voice-design instruct and normalise it for the prompt.

    ``text`` is the target text; a CJK ideograph in it selects Chinese items unless a
    dialect or an accent decides the language. Returns ``None`` for an empty instruct.
    Raises ``ValueError`` (with suggestions) for unknown items, a dialect mixed with an
    accent, or two items of one category.
    """
    if instruct is None:
        return None
    stripped = instruct.strip()
    if not stripped:
        return None

    raw_items = [piece for piece in _SEPARATOR.split(stripped) if piece]
    items: list[str] = []
    unknown: list[tuple[str, str]] = []
    for raw in raw_items:
        item = raw.strip().lower()
        if item in ALL_ITEMS:
            items.append(item)
        else:
            unknown.append((raw, item))
    if unknown:
        raise _unknown_items_error(stripped, unknown)

    has_dialect = any(item.endswith("话") for item in items)
    has_accent = any(" accent" in item for item in items)
    if has_dialect and has_accent:
        raise ValueError(
            "Cannot mix a Chinese dialect and an English accent in one instruct: "
            "dialects are for Chinese speech, accents for English speech."
        )
    if has_dialect:
        use_zh = True
    elif has_accent:
        use_zh = False
    else:
        use_zh = bool(text and _CJK.search(text))

    mapping = EN_TO_ZH if use_zh else ZH_TO_EN
    items = [mapping.get(item, item) for item in items]

    conflicts = []
    for cat in CATEGORIES:
        hits = [item for item in items if item in cat.items]
        if len(hits) > 1:
            conflicts.append(" vs ".join(f"'{hit}'" for hit in hits))
    if conflicts:
        raise ValueError(
            "Conflicting instruct items within the same category: "
            + "; ".join(conflicts)
            + ". Each category (gender, age, pitch, style, accent, dialect) allows at most "
            "one item."
        )

    separator = "，" if any(_CJK.search(item) for item in items) else ", "
    return separator.join(items)
