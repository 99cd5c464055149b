"""Other languages that num2words knows: numbers, decimals, ordinals, times, percentages.

A language here has a small `Other` table (decimal word, percent word, how a clock time and
an ordinal are written and said). Indonesian and Vietnamese have hand-made tables
and are on by default (`ENABLED`): their Home Assistant-style replies pass their tests
(``tests/text/normalize_cases/``). Every other language that num2words knows gets a table made
from num2words itself (its decimal and minus words, ``to="ordinal"``) plus the percent word
where it does not change with the number; those are off by default, as upstream has no
normalisation, and run only when a voice asks for it (``normalize_text: true``). Languages
with a full `table.Language` (Polish, Russian, Portuguese, the Nordic languages, Czech,
Ukrainian, Finnish, Hungarian, Turkish, Romanian, Greek, Japanese, Korean, ...) never
reach this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from num2words import CONVERTER_CLASSES, num2words

from wyoming_omnivoice.text.normalize import numbers as N

_VI_TENS_RE = re.compile(r"\b(nghìn|triệu|tỷ) lẻ (?=mười\b|\S+ mươi\b)")
_VI_UNITS_RE = re.compile(r"\b(nghìn|triệu|tỷ) lẻ ")


def _vietnamese_zero_hundreds(words: str) -> str:
    """An empty hundreds place after nghìn/triệu is said "không trăm": 1013 is "một nghìn
    không trăm mười ba", 1005 "một nghìn không trăm lẻ năm" (num2words: "một nghìn lẻ
    mười ba")."""
    words = _VI_TENS_RE.sub(r"\1 không trăm ", words)
    return _VI_UNITS_RE.sub(r"\1 không trăm lẻ ", words)


@dataclass(frozen=True)
class Other:
    """What differs between the simple languages."""

    code: str
    decimal_word: str
    minus_word: str
    percent_word: str
    hour_word: str = ""
    """Word after the hour of a clock time ("mười giờ ba mươi")."""
    grouped_fraction: bool = False
    """Read a short fraction as a number ("phẩy bốn mươi lăm") instead of digit by digit."""
    ordinal_pattern: str = r"(?!x)x"
    """Regex of a written ordinal with a group ``n`` ("ke-2", "2.")."""
    spaced: bool = True
    """Words are separated by spaces (False: Thai)."""
    decimal_point: bool = False
    """The decimal separator is "." and "," groups thousands (Hebrew, Thai ...)."""
    fix: Callable[[str], str] = lambda words: words

    def cardinal(self, value: int) -> str:
        return self.fix(N.cardinal(value, self.code))

    def number(self, negative: bool, integer: str, fraction: str) -> str:
        if not self.decimal_word:  # num2words says decimals and signs in its own grammar
            text = ("-" if negative else "") + integer + (f".{fraction}" if fraction else "")
            return self.fix(num2words(Decimal(text) if fraction else int(text), lang=self.code))
        words = self.cardinal(int(integer))
        if fraction:
            if self.grouped_fraction and len(fraction) <= 2 and not fraction.startswith("0"):
                digits = self.cardinal(int(fraction))
            else:
                digits = " ".join(self.cardinal(int(d)) for d in fraction)
            words = f"{words} {self.decimal_word} {digits}"
        return f"{self.minus_word} {words}" if negative else words

    def time(self, hour: int, minute: int) -> str:
        words = self.cardinal(hour) + (f" {self.hour_word}" if self.hour_word else "")
        return words + (f" {self.cardinal(minute)}" if minute else "")


LANGUAGES = {
    "id": Other("id", decimal_word="koma", minus_word="minus", percent_word="persen",
                ordinal_pattern=r"\bke-(?P<n>\d+)\b"),
    "vi": Other("vi", decimal_word="phẩy", minus_word="âm", percent_word="phần trăm",
                hour_word="giờ", grouped_fraction=True, fix=_vietnamese_zero_hundreds),
}
#: Languages whose rules here are on by default.
ENABLED: frozenset[str] = frozenset(LANGUAGES)

# Percent words that do not change with the number, for the languages that are off. A
# language with a full table (`FULL_LANGUAGES`, and "no", read as "nb") never gets here.
_PERCENT = {"is": "prósent", "sr": "posto",
            "th": "เปอร์เซ็นต์", "az": "faiz", "fa": "درصد", "cy": "y cant"}
_DOT_DECIMAL = frozenset({"am", "bn", "cy", "fa", "he", "kn", "te", "th"})
_DOT_ORDINAL = frozenset({"is", "lv", "sr"})


def _from_num2words(code: str) -> Other:
    ordinal = (r"(?<![\w.,])(?P<n>\d{1,3})\.(?= \w)" if code in _DOT_ORDINAL
               else r"(?!x)x")
    return Other(code, decimal_word="", minus_word="", percent_word=_PERCENT.get(code, ""),
                 ordinal_pattern=ordinal, decimal_point=code in _DOT_DECIMAL,
                 spaced=code != "th")


def _number_re(dot: bool) -> str:
    thousands, fraction = (",", r"\.") if dot else (r"\.", ",")
    return (rf"(?P<sign>[-−](?=\d))?(?P<int>\d{{1,3}}(?:{thousands}\d{{3}})+(?![\d])|\d+)"
            rf"(?:{fraction}(?P<frac>\d+))?")


_TIME_RE = re.compile(r"(?<![\w.:,])(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)(?![\d:])")
# Latin letters and digits end a number; CJK and other scripts may touch it ("5日").
_LATIN = "0-9A-Za-zÀ-ÿ"
_PATTERNS = {
    dot: (re.compile(rf"(?<![{_LATIN}.,]){_number_re(dot)}(?![{_LATIN}]|[.,:]\d)"),
          re.compile(rf"(?<![{_LATIN}.,]){_number_re(dot)}\s?[%％]"))
    for dot in (False, True)
}


def rules(code: str) -> Callable[[str], str] | None:
    """The rewrite for ``code``: its `Other` table, one made from num2words, or None."""
    table = LANGUAGES.get(code)
    if table is None:
        if code not in CONVERTER_CLASSES:
            return None
        table = _from_num2words(code)
    return lambda segment: _rewrite(segment, table)


def _rewrite(text: str, lang: Other) -> str:
    from wyoming_omnivoice.text.normalize.regex import sub

    number_re, percent_re = _PATTERNS[lang.decimal_point]
    group = "," if lang.decimal_point else "."

    def number(match: re.Match[str]) -> str | None:
        integer = match.group("int").replace(group, "")
        try:
            return lang.number(bool(match.group("sign")), integer, match.group("frac") or "")
        except (InvalidOperation, NotImplementedError, OverflowError, ValueError):
            return None

    def percent(match: re.Match[str]) -> str | None:
        words = number(match)
        if words is None or not lang.percent_word:
            return None
        space = " " if lang.spaced else ""
        return f"{words}{space}{lang.percent_word}"

    def ordinal(match: re.Match[str]) -> str | None:
        try:
            return lang.fix(N.ordinal(int(match.group("n")), lang.code))
        except (NotImplementedError, OverflowError, ValueError):
            return None

    text = sub(_TIME_RE, lambda m: lang.time(int(m.group("h")), int(m.group("m"))), text)
    text = sub(percent_re, percent, text)
    text = sub(re.compile(lang.ordinal_pattern), ordinal, text)
    return sub(number_re, number, text)
