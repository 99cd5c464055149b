"""Danish: "en time", "et år", "et minut", "enogtyve komma fem grader celsius", "klokken
fjorten tredive", "den tredje december", "på anden sal", "nitten hundrede og
nioghalvfems", "treogtyve kroner og halvtreds øre".

num2words writes Danish hundreds and thousands as one word with a stray "og"
("ettusinde og nihundrede og nioghalvfems"); `cardinal` says them as Danes do: "et tusind
ni hundrede og nioghalvfems", "to tusind og fireogtyve".
"""

from __future__ import annotations

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.nordic import shared as nordic
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("januar", "februar", "marts", "april", "maj", "juni", "juli", "august",
          "september", "oktober", "november", "december")

_n = nordic.noun  # (gender, singular, plural)

UNITS = {
    **nordic.SHARED_UNITS,  # kW, W, V, hPa, km, cm, mm, m, kg, g, ml, l, lx, ppm, °
    "°C": _n("c", "grad celsius", "grader celsius"),
    "°F": _n("c", "grad fahrenheit", "grader fahrenheit"),
    "%": _n("c", "procent", "procent"),
    "km/h": _n("c", "kilometer i timen", "kilometer i timen"),
    "mph": _n("c", "mile i timen", "miles i timen"),
    "m/s": _n("c", "meter i sekundet", "meter i sekundet"),
    "kWh": _n("c", "kilowatttime", "kilowatttimer"),
    "µg/m³": _n("n", "mikrogram per kubikmeter", "mikrogram per kubikmeter"),
    "dB": _n("c", "decibel", "decibel"), "h": _n("c", "time", "timer"),
    "min": _n("n", "minut", "minutter"), "s": _n("n", "sekund", "sekunder"),
}
CURRENCIES = {
    "DKK": (_n("c", "krone", "kroner"), _n("c", "øre", "øre")),
    "EUR": nordic.EURO,
    "USD": (_n("c", "dollar", "dollars"), _n("c", "cent", "cent")),
}
_NEUTER = ["år", "rum", "vindue", "lys", "døgn", "stik", "apparat", "køleskab", "kamera",
           "værelse", "hus", "køkken", "badeværelse", "batteri", "program", "alarm", "minut",
           "sekund", "kvarter", "styk", "tal", "sted", "skridt", "barn", "par",
           *nordic.neuter_units(UNITS)]
_CLOCK = frozenset({"klokken", "Klokken"})
_ONES = {1: "et"}


def _below_hundred(value: int) -> str:
    """"enogtyve", "nioghalvfems"; 1 is counted "en" ("en komma fem", "hundrede og en")."""
    return "en" if value == 1 else str(N.cardinal(value, "da"))


def _below_thousand(value: int) -> str:
    hundreds, rest = divmod(value, 100)
    if not hundreds:
        return _below_hundred(rest)
    words = f"{_ONES.get(hundreds) or _below_hundred(hundreds)} hundrede"
    return f"{words} og {_below_hundred(rest)}" if rest else words


def cardinal(value: int) -> str:
    """Danish cardinals below a million: "et tusind ni hundrede og nioghalvfems"."""
    if value >= 1_000_000:
        return str(N.cardinal(value, "da"))
    if value < 100:
        return _below_hundred(value)
    thousands, rest = divmod(value, 1000)
    if not thousands:
        return _below_thousand(rest)
    words = f"{_ONES.get(thousands) or _below_thousand(thousands)} tusind"
    if not rest:
        return words
    if rest < 100:
        return f"{words} og {_below_hundred(rest)}"
    return f"{words} {_below_thousand(rest)}"


def _year(value: int) -> str:
    """"nitten hundrede og nioghalvfems"; from 2000 the plain number ("to tusind og
    fireogtyve")."""
    if 1100 <= value <= 1999:
        hundreds, rest = divmod(value, 100)
        words = f"{_below_hundred(hundreds)} hundrede"
        return f"{words} og {_below_hundred(rest)}" if rest else words
    return cardinal(value)


def _ordinal(value: int) -> str:
    return N.ordinal(value, "da").replace("tredivete", "tredivte")  # "enogtredivte"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{_ordinal(day)} {MONTHS[month - 1]}"
    return words + (f" {_year(year)}" if year is not None else "")


RULES = Language(
    code="da", decimal_word="komma", minus_word="minus", plus_word="plus", and_word="og",
    range_word="til", months=MONTHS, space_thousands=True,
    abbreviations={
        "ca.": "cirka", "f.eks.": "for eksempel", "bl.a.": "blandt andet",
        "osv.": "og så videre", "dvs.": "det vil sige", "stk.": "stykker",
        "kl.": "klokken", "tlf.": "telefon", "evt.": "eventuelt", "inkl.": "inklusive",
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
    units=UNITS, currencies=CURRENCIES, currency_symbols={"kr.": "DKK", "kr": "DKK"},
    cardinal_words=cardinal,
    agree=nordic.one_agree("en", "en", "et", _NEUTER),
    ordinal_words=lambda value, suffix, ctx: _ordinal(value),
    time_words=nordic.digital_time(lambda n: "et" if n == 1 else cardinal(n), "nul", "midnat",
                                   "tolv om natten", _CLOCK),
    date_words=_date,
    year_words=_year,
    prepare=nordic.clock_prepare("kl.", "klokken", r"klokken er"),
)
