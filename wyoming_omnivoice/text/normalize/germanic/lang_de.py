"""German: "noch eine Stunde", "seit einer Stunde", "im zweiten Stock", "am vierundzwanzigsten
Dezember", "neunzehnhundertneunundneunzig gebaut", "zehn Uhr dreißig".

"ein" agrees with the gender of the noun after it (from `lexicon`) and with the case the
preposition before it governs; ordinals written "2." take the adjective ending the article
before them asks for (weak after "der", "im", "am"; strong by the noun's gender otherwise).
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.lexicon import noun_gender
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August",
          "September", "Oktober", "November", "Dezember")

_DATIVE = frozenset({"mit", "nach", "aus", "bei", "seit", "von", "zu", "vor", "in", "an", "ab",
                     "binnen", "gegenüber", "unter", "hinter", "neben", "zwischen", "Mit",
                     "Nach", "Seit", "Vor", "In", "Von", "Bei", "Ab"})
_ACCUSATIVE = frozenset({"für", "durch", "ohne", "um", "gegen", "über", "auf", "Für", "Um",
                         "Über", "Auf"})
_GENITIVE = frozenset({"während", "innerhalb", "außerhalb", "wegen", "trotz", "statt",
                       "anstatt", "Während", "Innerhalb"})
_EIN = {  # (case, gender) -> indefinite "ein"
    ("nom", "m"): "ein", ("nom", "f"): "eine", ("nom", "n"): "ein",
    ("acc", "m"): "einen", ("acc", "f"): "eine", ("acc", "n"): "ein",
    ("dat", "m"): "einem", ("dat", "f"): "einer", ("dat", "n"): "einem",
    ("gen", "m"): "eines", ("gen", "f"): "einer", ("gen", "n"): "eines",
}
# Articles and contractions after which an ordinal takes the weak "-e" / "-en" ending.
_WEAK_E = frozenset({"der", "die", "das", "ins", "aufs", "Der", "Die", "Das"})
_WEAK_EN = frozenset({"den", "dem", "des", "im", "am", "zum", "zur", "vom", "beim", "Im", "Am",
                      "Zum", "Zur", "Vom", "Beim", "bis", "ab", "seit"})
_STRONG = {"m": "r", "f": "", "n": "s"}
_WEEKDAYS = {"Mo.": "Montag", "Di.": "Dienstag", "Mi.": "Mittwoch", "Do.": "Donnerstag",
             "Fr.": "Freitag", "Sa.": "Samstag", "So.": "Sonntag"}
# A weekday abbreviation before a date, a time or "bis", or after "am"/"ab"/"bis"/"-".
_WEEKDAY_RE = re.compile(
    r"(?:(?<=\bam )|(?<=\bab )|(?<=\bbis )|(?<=\bjeden )|(?<=[-–] )|(?<=[-–]))"
    r"(?P<d>Mo|Di|Mi|Do|Fr|Sa|So)\.(?!\w)"
    r"|\b(?P<e>Mo|Di|Mi|Do|Fr|Sa|So)\.(?=,? *(?:\d|bis\b|[-–]))"
)


def _case(before: str) -> str:
    if before in _DATIVE:
        return "dat"
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"eins" before a noun: "ein Grad", "eine Stunde", "seit einer Stunde"."""
    if not words.endswith("eins") or noun is None or not noun[:1].isupper():
        return words
    head = noun.split()[0]
    if words != "eins" or head == "Uhr":
        return words[:-1]  # "hundertein Euro", "ein Uhr"
    gender = noun_gender(head, "de")
    if gender is None:
        return "ein"
    return _EIN[(_case(ctx.before), gender)]


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2." as an adjective: "der zweite", "im zweiten", "zweiter Stock"."""
    stem = N.ordinal(value, "de")  # "zweite"
    if ctx.before in _WEAK_E:
        return stem
    if ctx.before in _WEAK_EN:
        return stem + "n"
    gender = noun_gender(ctx.after, "de") if ctx.after[:1].isupper() else None
    return stem + _STRONG.get(gender or "m", "r") if ctx.after != "bis" else stem + "n"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    ordinal = N.ordinal(day, "de")
    if ctx.before in _WEAK_EN or ctx.before in _WEEKDAYS.values():
        ordinal += "n"
    elif ctx.before not in _WEAK_E:
        ordinal += "r"
    year_words = f" {_year(year)}" if year is not None else ""
    return f"{ordinal} {MONTHS[month - 1]}{year_words}"


def _year(value: int) -> str:
    if 1100 <= value <= 1999:
        return N.year(value, "de")  # "neunzehnhundertneunundneunzig"
    return N.cardinal(value, "de")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    h_words = N.cardinal(hour, "de")
    if h_words.endswith("eins"):
        h_words = h_words[:-1]  # "ein Uhr"
    return f"{h_words} Uhr" + (f" {N.cardinal(minute, 'de')}" if minute > 0 else "")


def _weekdays(text: str) -> str:
    return _WEEKDAY_RE.sub(lambda m: _WEEKDAYS[(m.group("d") or m.group("e")) + "."], text)


RULES = Language(
    code="de", decimal_word="Komma", minus_word="minus", plus_word="plus", and_word="und",
    range_word="bis", months=MONTHS, grouped_fraction=False,
    abbreviations={
        "z.B.": "zum Beispiel", "z. B.": "zum Beispiel", "d.h.": "das heißt",
        "d. h.": "das heißt", "u.a.": "unter anderem", "u. a.": "unter anderem",
        "bzw.": "beziehungsweise", "ca.": "circa", "usw.": "und so weiter",
        "Dr.": "Doktor", "Prof.": "Professor", "Hr.": "Herr", "Fr.": "Frau",
        "inkl.": "inklusive", "evtl.": "eventuell", "ggf.": "gegebenenfalls", "max.": "maximal",
        "min.": "minimal", "Str.": "Straße", "St.": "Sankt", "vgl.": "vergleiche",
        "etc.": "et cetera", "Std.": "Stunden", "Tel.": "Telefon", "Nr.": "Nummer",
    },
    abbreviations_after_word={"str.": "straße"},
    date_before=r"am|vom|bis|zum|ab|seit|den|dem|der|Am|Vom|Bis|Ab|Seit|"
                + "|".join(_WEEKDAYS.values()),
    per_words=r"pro|je",
    number_abbreviations=(frozenset({"Nr.", "Nr"}), "Nummer"),
    year_before=r"im Jahre?|Jahr|seit|bis|ab|von|aus|vor|nach|Baujahr|Anfang|Ende|Mitte"
                r"|Im Jahre?|Seit|Ab|Von|Bis",
    year_after=r"[ \t]+[a-zäöüß]|[ \t]*(?:[.,;:!?)]|$)",
    time_suffix=r"Uhr\b|h\b",
    dotted_date=True, ordinal_dot=True,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    year_words=_year,
    prepare=_weekdays,
)
