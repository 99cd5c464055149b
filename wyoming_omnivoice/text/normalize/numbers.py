"""Written numbers and the words for them, shared by every alphabetic language.

``num2words`` does the number words for us: cardinals (``to="cardinal"``), ordinals
(``to="ordinal"``) and years (``to="year"``: "nineteen ninety-nine",
"neunzehnhundertneunundneunzig") in every language it knows. This module parses the
written forms (sign, thousands groups, decimal fraction) and adds what num2words leaves to
the caller: digit-by-digit reading, pairs for model numbers, and very large values.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from num2words import num2words

_TOO_LARGE = 10**15  # read digit by digit beyond this
#: Cardinals of languages num2words does not know (Croatian, Bulgarian), set by their
#: ``lang_*.py`` with `own_cardinals`, so digits, pairs and phone numbers read there too.
_OWN: dict[str, Callable[[int], str]] = {}


def own_cardinals(lang: str, words: Callable[[int], str]) -> Callable[[int], str]:
    """Use ``words`` for ``lang``'s cardinals here (num2words has none); returns it."""
    _OWN[lang] = words
    return words


@dataclass(frozen=True)
class Num:
    """A parsed written number: sign, integer digits, fraction digits."""

    negative: bool
    integer: str
    fraction: str

    @property
    def value(self) -> Decimal:
        text = self.integer + (f".{self.fraction}" if self.fraction else "")
        return -Decimal(text) if self.negative else Decimal(text)

    @property
    def is_one(self) -> bool:
        """Exactly 1 (or -1): the only value whose noun is singular in most languages."""
        return not self.fraction and self.integer.lstrip("0") == "1"


def number_pattern(thousands: str, fraction: str) -> str:
    """Regex source of a written number with groups sign/int/frac (no boundaries).

    ``thousands`` is the regex of one separator between digit groups ("," or "\\.");
    ``fraction`` the regex of the decimal separator.
    """
    integer = rf"\d{{1,3}}(?:{thousands}\d{{3}})+(?!\d)|\d+"
    return rf"(?P<sign>[-−](?=\d))?(?P<int>{integer})(?:{fraction}(?P<frac>\d+))?"


def parse(match: re.Match[str]) -> Num:
    integer = re.sub(r"\D", "", match.group("int"))
    return Num(bool(match.group("sign")), integer, match.group("frac") or "")


def cardinal(value: int, lang: str) -> str:
    if value >= _TOO_LARGE:
        return digits(str(value), lang)
    if lang in _OWN:
        return _OWN[lang](value)
    words = str(num2words(value, lang=lang))
    return words.replace(",", "") if lang == "en" else words


#: A language's own number words, where num2words has none (Greek).
Words = Callable[[int], str]


def digits(text: str, lang: str, zero: str | None = None, words: Words | None = None) -> str:
    """Digit by digit: "030" -> "null drei null"."""
    own = _OWN.get(lang)

    def word(d: int) -> str:
        if words is not None:
            return words(d)
        return own(d) if own is not None else str(num2words(d, lang=lang))

    return " ".join(zero if d == "0" and zero else word(int(d)) for d in text)


def ordinal(value: int, lang: str) -> str:
    return str(num2words(value, lang=lang, to="ordinal"))


def year(value: int, lang: str) -> str:
    return str(num2words(value, lang=lang, to="year"))


def pairs(text: str, lang: str, oh: str | None = None, words: Words | None = None) -> str:
    """A model number in pairs, as it is said: "4090" -> "forty ninety", "970" -> "nine
    seventy". A pair with a leading zero is read "oh five" where the language says so
    (``oh``), digit by digit elsewhere."""
    def number(value: int) -> str:
        return words(value) if words is not None else cardinal(value, lang)

    groups = [text[:-2], text[-2:]] if len(text) in (3, 4) else [text]
    said = []
    for group in groups:
        if len(group) == 2 and group[0] == "0":
            said.append(f"{oh} {number(int(group[1]))}" if oh
                        else digits(group, lang, words=words))
        else:
            said.append(number(int(group)))
    return " ".join(said)
