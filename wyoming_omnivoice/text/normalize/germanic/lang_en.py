"""English: "ten thirty", "seven p.m.", "March fifth, twenty twenty-four", "Main Street"."""

from __future__ import annotations

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def _year(value: int) -> str:
    if 1100 <= value <= 1999 or 2010 <= value <= 2099:
        return N.year(value, "en")  # "nineteen ninety-nine", "twenty twenty-four"
    return N.cardinal(value, "en")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    ampm = ""
    if suffix and suffix[0] in "aApP":
        ampm = " a.m." if suffix[0] in "aA" else " p.m."
    elif suffix:
        return None
    h_words = N.cardinal(hour, "en")
    if minute <= 0:  # -1: an hour written without minutes ("7pm")
        if hour == 0 and not ampm:
            return "midnight"
        return f"{h_words}{ampm}" if ampm else f"{h_words} o'clock"
    m_words = N.cardinal(minute, "en")
    if minute < 10:
        m_words = f"oh {m_words}"
    return f"{h_words} {m_words}{ampm}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    year_words = f", {_year(year)}" if year is not None else ""
    return f"{MONTHS[month - 1]} {N.ordinal(day, 'en')}{year_words}"


RULES = Language(
    code="en", decimal_word="point", minus_word="minus", plus_word="plus", and_word="and",
    range_word="to", months=MONTHS,
    thousands=",", fraction=r"\.", grouped_fraction=False,
    abbreviations={
        "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Miz", "Dr.": "Doctor", "Prof.": "Professor",
        "St.": "Saint", "Jr.": "Junior", "Sr.": "Senior", "approx.": "approximately",
        "e.g.": "for example", "i.e.": "that is", "etc.": "et cetera", "vs.": "versus",
        "min.": "minimum", "max.": "maximum", "Ave.": "Avenue", "Rd.": "Road",
        "Jan.": "January", "Feb.": "February", "Mar.": "March", "Apr.": "April",
        "Aug.": "August", "Sep.": "September", "Sept.": "September", "Oct.": "October",
        "Nov.": "November", "Dec.": "December",
    },
    abbreviations_after_word={"St.": "Street", "Rd.": "Road", "Ave.": "Avenue"},
    date_before=r"on|by|until|till|from|since|before|after|is|for|On|By|Until|From|Since"
                r"|Before|After",
    per_words=r"per",
    number_abbreviations=(frozenset({"No.", "no.", "#"}), "number"),
    ordinal_suffix=r"(?i:st|nd|rd|th)",
    year_before=r"(?i:in|since|from|until|till|by|year|of|around|circa|before|after|during"
                r"|built|born|through)",
    time_suffix=r"[aApP]\.?\s?[mM]\.?(?!\w)", am_pm=True,
    day_first=False,
    phone_zero="oh",
    model_oh="oh",
    ordinal_words=lambda value, suffix, ctx: N.ordinal(value, "en"),
    time_words=_time,
    date_words=_date,
    year_words=_year,
)
