"""Hungarian: "két lámpa", "huszonkét fok", "huszonegy egész öt tized fok", "hét órakor",
"tizennégy óra harmincig", "december harmadikán", "a második emeleten",
"ezerkilencszázkilencvenkilencben", "kétezer-ötszáz forint".

A noun after a number stays singular ("két lámpa", "öt fok"), and before a noun "kettő" is
"két" ("huszonkét fok", "két egész öt tized"). Case endings are written after a hyphen
("7:30-kor", "december 3-án", "1999-ben", "50%-ra"); the ending is kept on the spoken
word ("hét óra harminckor", "december harmadikán", "ötven százalékra"). Dates run year,
month, day ("2024. március 5." -> "kétezer-huszonnégy március ötödike").
"""

from __future__ import annotations

import re
from decimal import Decimal

from num2words import num2words

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("január", "február", "március", "április", "május", "június", "július",
          "augusztus", "szeptember", "október", "november", "december")


def _n(noun: str) -> Noun:
    return Noun("", (noun,))


UNITS = {
    "°C": _n("fok"), "°F": _n("Fahrenheit-fok"), "°": _n("fok"), "%": _n("százalék"),
    "km/h": _n("kilométer per óra"), "mph": _n("mérföld per óra"),
    "m/s": _n("méter per másodperc"), "kWh": _n("kilowattóra"), "kW": _n("kilowatt"),
    "W": _n("watt"), "V": _n("volt"), "hPa": _n("hektopascal"), "km": _n("kilométer"),
    "cm": _n("centiméter"), "mm": _n("milliméter"), "m": _n("méter"), "kg": _n("kilogramm"),
    "g": _n("gramm"), "ml": _n("milliliter"), "l": _n("liter"), "lx": _n("lux"),
    "ppm": _n("ppm"), "µg/m³": _n("mikrogramm per köbméter"), "dB": _n("decibel"),
    "h": _n("óra"), "min": _n("perc"), "s": _n("másodperc"),
}
CURRENCIES = {
    "HUF": (_n("forint"), _n("fillér")),
    "EUR": (_n("euró"), _n("cent")),
    "USD": (_n("dollár"), _n("cent")),
}
_KETTO_RE = re.compile(r"kettő(?= \w)")
_BACK = set("aáoóuú")
_FRONT = set("eéiíöőüű")


_KETTO_PREFIX_RE = re.compile(r"kettő(?=ezer|száz|milli)")


def _fix_cardinal(words: str) -> str:
    """num2words' "tizenkettőezer" is "tizenkétezer"."""
    return _KETTO_PREFIX_RE.sub("két", words)


def _cardinal(value: int) -> str:
    return _fix_cardinal(str(N.cardinal(value, "hu")))


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"kettő" before a noun is "két" ("két lámpa", "huszonkét fok", "kétezer-két")."""
    if noun is None or not noun[:1].isalpha():
        return words
    return words[:-5] + "két" if words.endswith("kettő") else words


#: num2words names a fraction's denominator up to thousandths ("tized", "század", "ezred").
_NAMED_FRACTION_DIGITS = 3


def _decimal(num: Num) -> str:
    """"huszonegy egész öt tized"; "két egész két tized" ("egész" and "tized" are nouns).
    A longer fraction is read digit by digit after "egész" ("három egész egy négy egy öt
    kilenc"), as it is said (and num2words has no denominator beyond thousandths)."""
    if len(num.fraction) > _NAMED_FRACTION_DIGITS:
        whole = _KETTO_RE.sub("két", _cardinal(int(num.integer)) + " egész")
        return f"{whole} {N.digits(num.fraction, 'hu')}"
    words = str(num2words(Decimal(f"{num.integer}.{num.fraction}"), lang="hu"))
    return _KETTO_RE.sub("két", _fix_cardinal(words))


def _is_back(word: str) -> bool:
    for char in reversed(word):
        if char in _BACK:
            return True
        if char in _FRONT and char not in "ií":
            return False
    return False


def day_form(day: int) -> str:
    """The day of a month: "elseje", "harmadika", "negyedike", "huszadika"."""
    if day == 1:
        return "elseje"
    word = N.ordinal(day, "hu")
    return word + ("a" if _is_back(word[:-2]) else "e")


_SUFFIX_CORE = re.compile(r"^(?:j?[áéae])?(?P<core>n|ig|t[óő]l|r[ae]|i|b[ae]n|h[oe]z)$")


def _with_ending(form: str, written: str | None) -> str | None:
    """"harmadika" + "-án" -> "harmadikán", + "-ig" -> "harmadikáig", + "-tól" ->
    "harmadikától"; None for an ending we do not know (left as written)."""
    if not written:
        return form
    match = _SUFFIX_CORE.match(written)
    if match is None:
        return None
    core = match.group("core")
    back = form.endswith("a") or form.endswith("á")
    core = core.translate(str.maketrans("óőae", "óóaa" if back else "őőee"))
    if core == "i":
        return form + "i"
    long = form[:-1] + ("á" if back else "é")
    return long + core


def _date(day: int, month: int, year: int | None, ctx: Context, ending: str | None = None
          ) -> str:
    words = f"{MONTHS[month - 1]} {_with_ending(day_form(day), ending) or day_form(day)}"
    return f"{_cardinal(year)} {words}" if year is not None else words


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"hét óra", "tizennégy óra harminc", "éjfél"."""
    if hour == 0 and minute <= 0:
        return "éjfél"
    hours = _agree(Num(False, str(hour), ""), _cardinal(hour), "óra", ctx)
    words = f"{hours} óra"
    return words + (f" {_cardinal(minute)}" if minute > 0 else "")


_ENDING = r"(?:-(?P<end>[a-zéáíóöőúüű]+))"
_MONTH_ALT = "|".join(MONTHS)
_DATE_RE = re.compile(
    rf"(?<!\w)(?:(?P<y>\d{{4}})\.\s+)?(?P<m>(?i:{_MONTH_ALT}))\s+(?P<d>\d{{1,2}})"
    rf"(?:{_ENDING}|\.)(?!\w)")
_NUMERIC_DATE_RE = re.compile(
    rf"(?<![\w.])(?P<y>\d{{4}})\.\s?(?P<m>\d{{1,2}})\.\s?(?P<d>\d{{1,2}})(?:{_ENDING}|\.)(?!\w)")
_TIME_RE = re.compile(rf"(?<![\w.:])(?P<h>[01]?\d|2[0-3])[:.](?P<mi>[0-5]\d){_ENDING}")
_PERCENT_RE = re.compile(r"\s?%-(?P<end>[a-zéáíóöőúüű]+)")
_NUMBER_ENDING_RE = re.compile(
    r"(?<![\w.,:])(?P<n>\d{1,4})-(?P<end>kor|ig|ban|ben|ból|ből|ra|re|tól|től|ról|ről|nál"
    r"|nél|hoz|hez|höz|ért|ként)(?!\w)")


_UNIT_ENDING_RE = re.compile(
    r"\b(?P<w>" + "|".join(sorted({n.forms[0].split()[-1] for n in [
        *UNITS.values(), *(c for pair in CURRENCIES.values() for c in pair)]}, key=len,
        reverse=True)) + r")-(?P<end>[a-zéáíóöőúüű]+)")


def _finish(text: str) -> str:
    """"watt-ot" -> "wattot", "fok-kal" -> "fokkal": a unit written "2400 W-ot" keeps its
    ending on the spoken word."""
    def join(m: re.Match[str]) -> str:
        word = m.group("w")
        if word[-1] in "ae":  # "óra" + "t" -> "órát"
            word = word[:-1] + {"a": "á", "e": "é"}[word[-1]]
        return word + m.group("end")

    return _UNIT_ENDING_RE.sub(join, text)


def _prepare(text: str) -> str:
    """Dates, times and numbers with a written case ending; "%-ra" -> " százalékra"."""

    def date(m: re.Match[str]) -> str:
        written = m.group("m")
        month = int(written) if written.isdigit() else MONTHS.index(written.lower()) + 1
        day = int(m.group("d"))
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return m.group(0)
        ending = m.group("end")
        if ending and _with_ending(day_form(day), ending) is None:
            return m.group(0)
        year = int(m.group("y")) if m.group("y") else None
        words = _date(day, month, year, Context(), ending)
        return words[0].upper() + words[1:] if written[0].isupper() else words

    def time(m: re.Match[str]) -> str:
        words = _time(int(m.group("h")), int(m.group("mi")), "", Context()) or ""
        return words + m.group("end")

    def number(m: re.Match[str]) -> str:
        return _cardinal(int(m.group("n"))) + m.group("end")

    text = _NUMERIC_DATE_RE.sub(date, text)
    text = _DATE_RE.sub(date, text)
    text = _TIME_RE.sub(time, text)
    text = _PERCENT_RE.sub(lambda m: " százalék" + m.group("end"), text)
    return _NUMBER_ENDING_RE.sub(number, text)


RULES = Language(
    code="hu", decimal_word="egész", minus_word="mínusz", plus_word="plusz", and_word="és",
    range_word="–", months=MONTHS, space_thousands=True, currency_and=" ",
    duration_and=False,
    abbreviations={
        "kb.": "körülbelül", "pl.": "például", "stb.": "és a többi", "ill.": "illetve",
        "db": "darab", "u.": "utca", "ún.": "úgynevezett", "dr.": "doktor", "Dr.": "doktor",
        "max.": "maximum", "min.": "minimum", "tel.": "telefon",
    },
    per_words=r"per",
    number_abbreviations=(frozenset({"sz.", "Sz."}), "szám"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zéáíóöőúüű]",
    hour_abbr=r"h|ó|óra", minute_abbr=r"min|p|perc", second_abbr=r"s|mp",
    unit_aliases={"ó": "h", "p": "min", "mp": "s"},
    units=UNITS, currencies=CURRENCIES, currency_symbols={"Ft": "HUF", "Ft.": "HUF"},
    agree=_agree,
    fix_cardinal=_fix_cardinal,
    decimal_words=_decimal,
    ordinal_words=lambda value, suffix, ctx: N.ordinal(value, "hu"),
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
