"""OmniVoice's 646-language table and the rules that resolve a user's language.

The table (``data/languages.tsv``, generated from upstream's ``lang_map`` by
``tools/make_languages_tsv.py``) has one row per language: the id the model was trained
with (125 ISO 639-1 two-letter ids, 521 ISO 639-3 three-letter ids), upstream's lowercase
lookup name, and its display name.

``resolve_language`` follows upstream ``_resolve_language`` exactly: ``None`` or any case
of ``"none"`` means language-agnostic (``None``); an id matches case-sensitively; otherwise
the lowercased string is looked up as a name; anything else logs a warning and gives
``None``.

``advertised_language_code`` gives the tag to advertise to Home Assistant: the id itself
(an ISO 639-1 code, or an ISO 639-3 code, which is a valid BCP 47 primary language subtag)
except for a few three-letter ids whose usual tag is a two-letter code that is not itself
in the table (``arb`` -> ``ar``, ``npi`` -> ``ne``, ``kmr`` -> ``ku``), and Cantonese
(``yue`` -> ``zh-HK``, the tag Home Assistant users pick for Cantonese).
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from functools import cache
from importlib import resources

_LOGGER = logging.getLogger(__name__)

# Three-letter ids advertised under another tag. Only ids whose usual two-letter code is
# not a table id of its own are mapped, so no two languages share an advertised tag.
_ADVERTISED_ALIASES: dict[str, str] = {
    "arb": "ar",  # Standard Arabic
    "npi": "ne",  # Nepali (individual language of the "ne" macrolanguage)
    "kmr": "ku",  # Northern Kurdish (Kurmanji), the usual "ku"
    "yue": "zh-HK",  # Cantonese
}


@dataclass(frozen=True)
class LanguageInfo:
    """One row of the language table."""

    id: str
    """Id used in the prompt, e.g. ``"en"``, ``"yue"``."""
    key: str
    """Upstream's lowercase lookup name, e.g. ``"min nan chinese"``."""
    name: str
    """Display name, e.g. ``"Min Nan Chinese"``."""


@dataclass(frozen=True)
class _Table:
    by_id: dict[str, LanguageInfo]
    by_key: dict[str, LanguageInfo]
    rows: tuple[LanguageInfo, ...]


@cache
def _table() -> _Table:
    text = resources.files("wyoming_omnivoice.data").joinpath("languages.tsv").read_text("utf-8")
    lines = text.splitlines()
    if not lines or lines[0].split("\t") != ["id", "key", "display"]:
        raise RuntimeError("languages.tsv: unexpected header")
    rows = []
    for line_no, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != 3:
            raise RuntimeError(f"languages.tsv line {line_no}: expected 3 fields")
        rows.append(LanguageInfo(id=fields[0], key=fields[1], name=fields[2]))
    by_id = {row.id: row for row in rows}
    by_key = {row.key: row for row in rows}
    if len(by_id) != len(rows) or len(by_key) != len(rows):
        raise RuntimeError("languages.tsv: duplicate id or name")
    return _Table(by_id=by_id, by_key=by_key, rows=tuple(rows))


def all_languages() -> tuple[LanguageInfo, ...]:
    """Every language, sorted by lookup name (upstream's order)."""
    return _table().rows


def all_language_ids() -> tuple[str, ...]:
    """Every language id, in table order."""
    return tuple(row.id for row in _table().rows)


def language_info(language_id: str) -> LanguageInfo | None:
    """The row for an exact id, or ``None``."""
    return _table().by_id.get(language_id)


def language_name(language_id: str) -> str | None:
    """Display name of an exact id (``"en"`` -> ``"English"``), or ``None``."""
    info = _table().by_id.get(language_id)
    return info.name if info is not None else None


def _lookup(value: str) -> str | None:
    table = _table()
    if value in table.by_id:
        return value
    info = table.by_key.get(value.lower())
    return info.id if info is not None else None


def _is_none(value: str | None) -> bool:
    return value is None or value.lower() == "none"


def resolve_language(name_or_id: str | None) -> str | None:
    """Resolve a language id or name to the id used in the prompt, as upstream does.

    ``None``/``"none"`` (any case) and unknown values give ``None`` (language-agnostic);
    unknown values also log a warning.
    """
    if _is_none(name_or_id):
        return None
    assert name_or_id is not None
    resolved = _lookup(name_or_id)
    if resolved is None:
        _LOGGER.warning(
            "Language %r is not recognized (use an id such as 'en', 'zh', 'yue' or a name "
            "such as 'English'); falling back to language-agnostic mode",
            name_or_id,
        )
    return resolved


def suggest_languages(value: str, limit: int = 3) -> list[str]:
    """Close matches for an unknown language, as ``"id (Name)"`` strings."""
    table = _table()
    lowered = value.strip().lower()
    ids = {row.id: row for row in table.rows}
    candidates: list[LanguageInfo] = []
    if lowered in ids:  # wrong case of an id, e.g. "EN"
        candidates.append(ids[lowered])
    for match in difflib.get_close_matches(lowered, list(table.by_key), n=limit, cutoff=0.6):
        candidates.append(table.by_key[match])
    for match in difflib.get_close_matches(lowered, list(ids), n=limit, cutoff=0.6):
        candidates.append(ids[match])
    seen: list[str] = []
    for info in candidates:
        text = f"{info.id} ({info.name})"
        if text not in seen:
            seen.append(text)
    return seen[:limit]


def strict_language(value: str | None) -> str | None:
    """Like ``resolve_language`` but raise ``ValueError`` for unknown values.

    For validating user configuration: ``None``/``"none"`` still mean language-agnostic.
    """
    if _is_none(value):
        return None
    assert value is not None
    resolved = _lookup(value)
    if resolved is not None:
        return resolved
    suggestions = suggest_languages(value)
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    raise ValueError(
        f"Unknown language {value!r}. Use a language id (case-sensitive, e.g. 'en', 'zh', "
        f"'yue'), a language name (e.g. 'English', 'Cantonese') or 'none' for "
        f"language-agnostic mode.{hint}"
    )


def advertised_language_code(language_id: str) -> str | None:
    """Tag to advertise to Home Assistant for an id, or ``None`` for an unknown id."""
    if language_id not in _table().by_id:
        return None
    return _ADVERTISED_ALIASES.get(language_id, language_id)
