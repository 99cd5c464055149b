"""Norwegian Bokmål (``nb``; num2words calls it ``no``): "en time", "ett år", "ett
minutt", "tjueen komma fem grader celsius", "klokken fjorten tretti", "den tredje
desember", "i andre etasje", "nitten hundre og nittini", "tjuetre kroner og femti øre"."""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.nordic import shared as nordic
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("januar", "februar", "mars", "april", "mai", "juni", "juli", "august",
          "september", "oktober", "november", "desember")

_n = nordic.noun  # (gender, singular, plural)

UNITS = {
    **nordic.SHARED_UNITS,  # kW, W, V, hPa, km, cm, mm, m, kg, g, ml, l, lx, ppm, °
    "°C": _n("c", "grad celsius", "grader celsius"),
    "°F": _n("c", "grad fahrenheit", "grader fahrenheit"),
    "%": _n("c", "prosent", "prosent"),
    "km/h": _n("c", "kilometer i timen", "kilometer i timen"),
    "mph": _n("c", "mile i timen", "miles i timen"),
    "m/s": _n("c", "meter per sekund", "meter per sekund"),
    "kWh": _n("c", "kilowattime", "kilowattimer"),
    "µg/m³": _n("n", "mikrogram per kubikkmeter", "mikrogram per kubikkmeter"),
    "dB": _n("c", "desibel", "desibel"), "h": _n("c", "time", "timer"),
    "min": _n("n", "minutt", "minutter"), "s": _n("n", "sekund", "sekunder"),
}
CURRENCIES = {
    "NOK": (_n("c", "krone", "kroner"), _n("c", "øre", "øre")),
    "EUR": nordic.EURO,
    "USD": (_n("c", "dollar", "dollar"), _n("c", "cent", "cent")),
}
_NEUTER = ["år", "rom", "vindu", "lys", "døgn", "apparat", "kjøleskap", "kamera", "kjøkken",
           "bad", "batteri", "program", "hus", "sted", "barn", "par", "kvarter", "tall",
           "stykk", "minutt", "sekund", "vaskerom", "soverom", "bad", "varsel", "skritt",
           *nordic.neuter_units(UNITS)]
_CLOCK = frozenset({"klokken", "Klokken", "klokka", "Klokka"})


def _cardinal(words: str) -> str:
    """"en tusen" -> "ett tusen", "en hundre" -> "ett hundre", "to million" -> "to
    millioner" (num2words' slips)."""
    words = re.sub(r"\ben (?=tusen|hundre)", "ett ", words)
    return re.sub(r"\b(?!en )(\w+) million\b", r"\1 millioner", words)


def _cardinal_of(value: int) -> str:
    return _cardinal(N.cardinal(value, "no"))


def _year(value: int) -> str:
    if 1100 <= value <= 1999:
        return str(N.year(value, "no"))  # "nitten hundre og nittini"
    return _cardinal_of(value)


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{N.ordinal(day, 'no')} {MONTHS[month - 1]}"
    return words + (f" {_year(year)}" if year is not None else "")


RULES = Language(
    code="no", decimal_word="komma", minus_word="minus", plus_word="pluss", and_word="og",
    range_word="til", months=MONTHS, space_thousands=True,
    abbreviations={
        "ca.": "cirka", "f.eks.": "for eksempel", "bl.a.": "blant annet",
        "osv.": "og så videre", "dvs.": "det vil si", "stk.": "stykker",
        "kl.": "klokken", "tlf.": "telefon", "evt.": "eventuelt", "inkl.": "inkludert",
        "pr.": "per",
    },
    date_before=r"den|til|fra|på|Den|Til|Fra",
    per_words=r"per|pr\.|i",
    number_abbreviations=(frozenset({"nr.", "Nr.", "nr", "Nr"}), "nummer"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zæøå]",
    year_before=r"år|siden|fra|til|i|bygget|født|År|Siden|Fra",
    year_after=r"[ \t]*(?:[.,;:!?)]|$)",
    hour_abbr=r"t\.?|h|time|timer", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases={"t": "h", "t.": "h", "sek": "s", "sek.": "s"},
    time_dot_before=_CLOCK,
    units=UNITS, currencies=CURRENCIES, currency_symbols={"kr": "NOK", "kr.": "NOK"},
    fix_cardinal=_cardinal,
    agree=nordic.one_agree("en", "en", "ett", _NEUTER),
    ordinal_words=lambda value, suffix, ctx: N.ordinal(value, "no"),
    time_words=nordic.digital_time(lambda n: "ett" if n == 1 else _cardinal_of(n), "null",
                                   "midnatt", "tolv om natten", _CLOCK),
    date_words=_date,
    year_words=_year,
    prepare=nordic.clock_prepare("kl.", "klokken", r"klokk(?:en|a) er"),
)
