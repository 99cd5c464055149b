"""Other languages that num2words knows: numbers, decimals, ordinals, times, percentages.

A language here has a small `Other` table (decimal word, percent word, how a clock time and
an ordinal are written and said). Its rules are on by default (`ENABLED`) only where
Home Assistant-style replies pass their tests (``tests/normalize_cases/``); every other
num2words language gets plain numbers when a voice asks for normalisation, and none by
default, as upstream does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from num2words import CONVERTER_CLASSES, num2words

from wyoming_omnivoice.text.normalize import numbers as N

_TR_MORPHEMES = ("bir|iki|üç|dört|beş|altı|yedi|sekiz|dokuz|on|yirmi|otuz|kırk|elli|altmış"
                 "|yetmiş|seksen|doksan|yüz|bin|milyon|milyar")
_TR_SPLIT_RE = re.compile(rf"(?<=[a-zçğıöşü])(?=(?:{_TR_MORPHEMES}))")


def _turkish_spacing(words: str) -> str:
    """Turkish writes number words apart ("yirmi bir", "bin dokuz yüz"); num2words joins
    them ("yirmibir"). Only number words reach this, so every morpheme is split off."""
    return _TR_SPLIT_RE.sub(" ", words).replace("mily on", "milyon")


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
    percent_first: bool = False
    """The percent sign is written before the number ("%85", Turkish)."""
    hour_word: str = ""
    """Word after the hour of a clock time ("mười giờ ba mươi")."""
    grouped_fraction: bool = False
    """Read a short fraction as a number ("virgül kırk beş") instead of digit by digit."""
    ordinal_pattern: str = r"(?!x)x"
    """Regex of a written ordinal with a group ``n`` ("ke-2", "2.")."""
    fix: Callable[[str], str] = lambda words: words

    def cardinal(self, value: int) -> str:
        return self.fix(N.cardinal(value, self.code))

    def number(self, negative: bool, integer: str, fraction: str) -> str:
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
    "tr": Other("tr", decimal_word="virgül", minus_word="eksi", percent_word="yüzde",
                percent_first=True, grouped_fraction=True,
                ordinal_pattern=r"(?<![\w.,])(?P<n>\d{1,3})\.(?= \w)", fix=_turkish_spacing),
}
#: Languages whose rules here are on by default.
ENABLED: frozenset[str] = frozenset(LANGUAGES)

_NUM = r"(?P<sign>[-−](?=\d))?(?P<int>\d{1,3}(?:\.\d{3})+(?![\d])|\d+)(?:,(?P<frac>\d+))?"
_PLAIN_NUMBER_RE = re.compile(
    r"(?<![0-9A-Za-zÀ-ÿ.,])(?P<sign>[-−](?=\d))?(?P<int>\d+)(?:\.(?P<frac>\d+))?"
    r"(?![0-9A-Za-zÀ-ÿ]|[.,:]\d)"
)
_TIME_RE = re.compile(r"(?<![\w.:,])(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)(?![\d:])")
_NUMBER_RE = re.compile(rf"(?<![\w.,]){_NUM}(?![\w]|[.,:]\d)")
_PERCENT_AFTER_RE = re.compile(rf"(?<![\w.,]){_NUM}\s?%")
_PERCENT_BEFORE_RE = re.compile(rf"%\s?{_NUM}(?![\d])")


def rules(code: str) -> Callable[[str], str] | None:
    """The rewrite for ``code``: its `Other` table, or plain numbers, or None."""
    table = LANGUAGES.get(code)
    if table is not None:
        return lambda segment: _rewrite(segment, table)
    if code not in CONVERTER_CLASSES:
        return None
    from wyoming_omnivoice.text.normalize.passes import sub

    def words(match: re.Match[str]) -> str | None:
        text = match.group(0).replace("−", "-")
        try:
            return num2words(Decimal(text) if "." in text else int(text), lang=code)
        except (InvalidOperation, NotImplementedError, OverflowError, ValueError):
            return None

    return lambda segment: sub(_PLAIN_NUMBER_RE, words, segment)


def _rewrite(text: str, lang: Other) -> str:
    from wyoming_omnivoice.text.normalize.passes import sub

    def number(match: re.Match[str]) -> str:
        integer = match.group("int").replace(".", "")
        return lang.number(bool(match.group("sign")), integer, match.group("frac") or "")

    def percent(match: re.Match[str]) -> str:
        return f"{lang.percent_word} {number(match)}" if lang.percent_first else \
            f"{number(match)} {lang.percent_word}"

    text = sub(_TIME_RE, lambda m: lang.time(int(m.group("h")), int(m.group("m"))), text)
    text = sub(_PERCENT_BEFORE_RE if lang.percent_first else _PERCENT_AFTER_RE, percent, text)
    text = sub(re.compile(lang.ordinal_pattern),
               lambda m: lang.fix(N.ordinal(int(m.group("n")), lang.code)), text)
    return sub(_NUMBER_RE, number, text)
