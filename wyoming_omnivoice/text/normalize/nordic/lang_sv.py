"""Swedish: "en timme", "ett år", "en lampa", "tjugoett komma fem grader Celsius",
"klockan fjorton och trettio", "den tredje december", "på andra våningen",
"nittonhundranittionio", "tjugotre kronor och femtio öre"."""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.nordic import shared as nordic
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("januari", "februari", "mars", "april", "maj", "juni", "juli", "augusti",
          "september", "oktober", "november", "december")

_n = nordic.noun  # (gender, singular, plural)

UNITS = {
    **nordic.SHARED_UNITS,  # kW, W, V, hPa, km, cm, mm, m, kg, g, ml, l, lx, ppm, °
    "°C": _n("c", "grad Celsius", "grader Celsius"),
    "°F": _n("c", "grad Fahrenheit", "grader Fahrenheit"),
    "%": _n("c", "procent", "procent"),
    "km/h": _n("c", "kilometer i timmen", "kilometer i timmen"),
    "mph": _n("c", "mile i timmen", "miles i timmen"),
    "m/s": _n("c", "meter per sekund", "meter per sekund"),
    "kWh": _n("c", "kilowattimme", "kilowattimmar"),
    "µg/m³": _n("n", "mikrogram per kubikmeter", "mikrogram per kubikmeter"),
    "dB": _n("c", "decibel", "decibel"), "h": _n("c", "timme", "timmar"),
    "min": _n("c", "minut", "minuter"), "s": _n("c", "sekund", "sekunder"),
}
CURRENCIES = {
    "SEK": (_n("c", "krona", "kronor"), _n("n", "öre", "öre")),
    "EUR": nordic.EURO,
    "USD": (_n("c", "dollar", "dollar"), _n("c", "cent", "cent")),
}
_NEUTER = ["år", "rum", "fönster", "ljus", "dygn", "larm", "uttag", "lås", "meddelande",
           "objekt", "fel", "program", "batteri", "kök", "hus", "element", "öre", "par",
           "ögonblick", "tillfälle", "schema", "rum", "kort", "spel", "läge", "steg",
           *nordic.neuter_units(UNITS)]
_CLOCK = frozenset({"klockan", "Klockan"})
_TENS_RE = re.compile(r"(tjugo|trettio|fyrtio|femtio|sextio|sjuttio|åttio|nittio)de\b")


def _cardinal(words: str) -> str:
    """num2words' "etttusen" is said "tusen", "etthundra" "hundra" ("hundra procent",
    "tusen femhundra kronor")."""
    words = words.replace("etttusen", "tusen")
    return re.sub(r"^etthundra", "hundra", words)


def _ordinal(value: int) -> str:
    return _TENS_RE.sub(r"\1nde", N.ordinal(value, "sv"))  # "tjugonde", not "tjugode"


def _year(value: int) -> str:
    if 1100 <= value <= 1999:
        hundreds, rest = divmod(value, 100)
        tail = N.cardinal(rest, "sv") if rest else ""
        return f"{N.cardinal(hundreds, 'sv')}hundra{tail}"  # "nittonhundranittionio"
    return _cardinal(N.cardinal(value, "sv"))


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{_ordinal(day)} {MONTHS[month - 1]}"
    return words + (f" {_year(year)}" if year is not None else "")


RULES = Language(
    code="sv", decimal_word="komma", minus_word="minus", plus_word="plus", and_word="och",
    range_word="till", months=MONTHS, space_thousands=True,
    abbreviations={
        "ca": "cirka", "ca.": "cirka", "t.ex.": "till exempel", "bl.a.": "bland annat",
        "osv.": "och så vidare", "dvs.": "det vill säga", "st.": "stycken", "st": "stycken",
        "kl.": "klockan", "max.": "max", "min.": "minst", "tel.": "telefon",
    },
    date_before=r"den|till|från|på|Den|Till|Från",
    per_words=r"per|i",
    number_abbreviations=(frozenset({"nr", "Nr", "nr.", "Nr."}), "nummer"),
    ordinal_suffix=r":(?:a|e)",
    year_before=r"år|sedan|från|till|i|byggt|byggd|byggdes|född|År|Sedan|Från",
    year_after=r"[ \t]*(?:[.,;:!?)]|$)",
    hour_abbr=r"h|tim", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases={"tim": "h", "sek": "s"},
    time_dot_before=_CLOCK,
    dotted_date=False,
    units=UNITS, currencies=CURRENCIES, currency_symbols={"kr": "SEK"},
    agree=nordic.one_agree("ett", "en", "ett", _NEUTER, ("ande", "ende", "eri", "um", "tt", "et"),
                           ("natt", "watt", "kilowatt", "toalett", "planet", "raket", "magnet",
                            "komet", "tablett", "kassett")),
    fix_cardinal=_cardinal,
    ordinal_words=lambda value, suffix, ctx: _ordinal(value),
    time_words=nordic.digital_time(lambda n: _cardinal(N.cardinal(n, "sv")), "noll",
                                   "midnatt", "tolv på natten", _CLOCK),
    date_words=_date,
    year_words=_year,
    prepare=nordic.clock_prepare("kl.", "klockan", r"klockan är"),
)
