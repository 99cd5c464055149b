"""Dutch: "tien uur dertig", "op één december", "negentien negenennegentig", "dokter Jansen".

Dutch numerals do not agree with the noun ("één uur", "een dag"), so no gender is needed.
"""

from __future__ import annotations

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus",
          "september", "oktober", "november", "december")


def _year(value: int) -> str:
    """Years before 2000 in two halves, as they are said: "negentien negenennegentig"."""
    if 1100 <= value <= 1999:
        high, low = divmod(value, 100)
        return N.cardinal(high, "nl") + (f" {N.cardinal(low, 'nl')}" if low else "honderd")
    return N.cardinal(value, "nl")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    return f"{N.cardinal(hour, 'nl')} uur" + (f" {N.cardinal(minute, 'nl')}" if minute > 0
                                              else "")


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    year_words = f" {_year(year)}" if year is not None else ""
    return f"{N.cardinal(day, 'nl')} {MONTHS[month - 1]}{year_words}"


RULES = Language(
    code="nl", decimal_word="komma", minus_word="min", plus_word="plus", and_word="en",
    range_word="tot", months=MONTHS,
    abbreviations={
        "bijv.": "bijvoorbeeld", "bv.": "bijvoorbeeld", "d.w.z.": "dat wil zeggen",
        "ca.": "circa", "enz.": "enzovoort", "dhr.": "de heer", "Dhr.": "de heer",
        "mevr.": "mevrouw", "Mevr.": "mevrouw", "o.a.": "onder andere",
        "m.b.t.": "met betrekking tot", "max.": "maximaal", "min.": "minimaal",
        "incl.": "inclusief", "excl.": "exclusief", "Dr.": "dokter", "dr.": "dokter",
        "St.": "Sint", "mr.": "meester", "Mr.": "meester", "ir.": "ingenieur",
        "tel.": "telefoon",
    },
    per_words=r"per",
    number_abbreviations=(frozenset({"nr.", "Nr.", "nr"}), "nummer"),
    ordinal_suffix=r"(?:ste|de|e)",
    year_before=r"in|sinds|tot|vanaf|jaar|uit|rond|In|Sinds|Vanaf|Tot",
    time_suffix=r"uur\b|u\b",
    date_before=r"op|vanaf|sinds|per|tot|voor|na|Op|Vanaf|Per|Sinds", dash_date=True,
    ordinal_words=lambda value, suffix, ctx: N.ordinal(value, "nl"),
    time_words=_time,
    date_words=_date,
    year_words=_year,
)
