"""Turkish: "yirmi bir virgül beş derece", "üç ışık", "saat on dört otuz", "saat yedide",
"üç Aralık iki bin yirmi dört", "ikinci kat", "yüzde elli", "on iki lira elli kuruş".

A noun after a number stays singular ("üç ışık", "beş dakika"), so there is no agreement
to make; what Turkish has instead are endings written after the digits with an apostrophe
("3'te", "5'i", "10'da", "%50'ye", "14:30'da", "°C'ye"), read on the number word with
its own vowel harmony (`suffixes`). The percent sign comes first and is said first
("%50" -> "yüzde elli"); km/h is said "saatte ... kilometre". Clock times are said as
digital times ("on dört otuz"; a full hour is the hour alone: "yedi"). num2words writes
Turkish number words joined ("yirmibir"); Turkish writes them apart.
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun
from wyoming_omnivoice.text.normalize.turkic import suffixes

MONTHS = ("Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos",
          "Eylül", "Ekim", "Kasım", "Aralık")

_MORPHEMES = ("bir|iki|üç|dört|beş|altı|yedi|sekiz|dokuz|on|yirmi|otuz|kırk|elli|altmış"
              "|yetmiş|seksen|doksan|yüz|bin|milyon|milyar|trilyon|katrilyon")
# no number word ends in "y": the "on" of "milyon", "trilyon" is not ten
_SPLIT_RE = re.compile(rf"(?<=[a-zçğıöşü])(?<!y)(?=(?:{_MORPHEMES}))")


def spaced(words: str) -> str:
    """Turkish writes number words apart ("yirmi bir", "bin dokuz yüz"); num2words joins
    them ("yirmibir"). Only number words reach this, so every morpheme is split off."""
    return _SPLIT_RE.sub(" ", words)


def _n(noun: str) -> Noun:
    return Noun("", (noun,))


UNITS = {
    "°C": _n("derece"), "°F": _n("Fahrenheit derece"), "°": _n("derece"),
    "%": _n("yüzde"), "km/h": _n("kilometre"), "mph": _n("mil"),
    "m/s": _n("metre bölü saniye"), "kWh": _n("kilovatsaat"), "kW": _n("kilovat"),
    "W": _n("vat"), "V": _n("volt"), "hPa": _n("hektopaskal"), "km": _n("kilometre"),
    "cm": _n("santimetre"), "mm": _n("milimetre"), "m": _n("metre"), "kg": _n("kilogram"),
    "g": _n("gram"), "ml": _n("mililitre"), "l": _n("litre"), "lx": _n("lüks"),
    "ppm": _n("ppm"), "µg/m³": _n("mikrogram bölü metreküp"), "dB": _n("desibel"),
    "h": _n("saat"), "min": _n("dakika"), "s": _n("saniye"),
}
CURRENCIES = {
    "TRY": (_n("lira"), _n("kuruş")),
    "EUR": (_n("avro"), _n("sent")),
    "USD": (_n("dolar"), _n("sent")),
    "GBP": (_n("sterlin"), _n("peni")),
}

_NUM = r"[-−]?\d+(?:[.,]\d+)*"
# "%50", "50%", "% 50" -> "yüzde 50" (the digits are read by the passes)
_PERCENT_BEFORE_RE = re.compile(rf"(?<![\w%])%\s?(?P<n>{_NUM})")
_PERCENT_AFTER_RE = re.compile(rf"(?<![\w.,])(?P<n>{_NUM})\s?%")
_KMH_RE = re.compile(rf"(?<![\w.,])(?P<n>{_NUM})\s?(?:km/h|km/sa)(?!\w)")
# an apostrophe after digits, a time, a percent or a unit symbol: the ending is the number's
# (not a proper noun's: "1 Ocak'ta" keeps its apostrophe)
_ENDING_RE = re.compile(
    r"(?P<w>\d(?:[\d.,:]*\d)?\.?(?:\s?(?:°[CF]?|%|(?![A-Z][a-z]{2})[A-Za-zµ/²³]{1,5}))?)"
    r"['’](?=[a-zçğıöşü])")
_UNIT_SYMBOLS = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True)
                         if u[0].isalpha())
# a price per unit: "1,25 TL/kWh" -> "kilovatsaat başına 1,25 TL" (the unit comes first,
# before "başına", as Turkish says it); "kWh başına" -> "kilovatsaat başına"
_PER_UNIT_RE = re.compile(
    rf"(?<![\w.,])(?P<n>{_NUM}\s?(?:TL|₺|€|\$|£))\s?/\s?(?P<u>{_UNIT_SYMBOLS})(?![\w/])")
_UNIT_BASINA_RE = re.compile(rf"(?<![\w/])(?P<u>{_UNIT_SYMBOLS}) (?=başına\b)")


def _prepare(text: str) -> str:
    text = _PER_UNIT_RE.sub(
        lambda m: f"{UNITS[m.group('u')].forms[0]} başına {m.group('n')}", text)
    text = _UNIT_BASINA_RE.sub(lambda m: f"{UNITS[m.group('u')].forms[0]} ", text)
    text = _ENDING_RE.sub(lambda m: m.group("w") + suffixes.MARK, text)
    text = _KMH_RE.sub(lambda m: f"saatte {m.group('n')} kilometre", text)
    text = _PERCENT_BEFORE_RE.sub(lambda m: f"yüzde {m.group('n')}", text)
    return _PERCENT_AFTER_RE.sub(lambda m: f"yüzde {m.group('n')}", text)


def _cardinal(value: int) -> str:
    return spaced(N.cardinal(value, "tr"))


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    return spaced(N.ordinal(value, "tr"))


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"on dört otuz", "yedi" (a full hour), "on dört sıfır beş", "gece yarısı"."""
    if minute < 0:
        return None
    if hour == 0 and minute == 0:
        return "gece yarısı"
    words = _cardinal(hour)
    if minute == 0:
        return words
    minutes = _cardinal(minute) if minute >= 10 else f"sıfır {_cardinal(minute)}"
    return f"{words} {minutes}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{_cardinal(day)} {MONTHS[month - 1]}"
    return f"{words} {_cardinal(year)}" if year is not None else words


RULES = Language(
    code="tr", decimal_word="virgül", minus_word="eksi", plus_word="artı", and_word="ve",
    range_word="ile", months=MONTHS, currency_and=" ", duration_and=False,
    abbreviations={
        "vb.": "ve benzeri", "vs.": "vesaire", "örn.": "örneğin", "yak.": "yaklaşık",
        "Dr.": "Doktor", "Prof.": "Profesör", "Cad.": "Caddesi", "Sok.": "Sokağı",
        "Mah.": "Mahallesi", "Apt.": "Apartmanı", "No.": "numara", "no.": "numara",
        "bkz.": "bakınız", "dk.": "dakika", "sn.": "saniye", "Sn.": "Sayın",
    },
    per_words=r"başına",
    number_abbreviations=(frozenset({"No.", "No:", "no."}), "numara"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zçğıöşü]",
    year_before=r"[Yy]ıl|[Yy]ılı",
    year_after=r"\s+yıl|" + suffixes.MARK,
    hour_abbr=r"h|sa|saat", minute_abbr=r"min|dk|dakika", second_abbr=r"s|sn|saniye",
    unit_aliases={"sa": "h", "dk": "min", "sn": "s", "℃": "°C"},
    units=UNITS, currencies=CURRENCIES, currency_symbols={"TL": "TRY", "₺": "TRY"},
    time_dot_before=frozenset({"saat", "Saat"}),
    fix_cardinal=spaced,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=suffixes.join,
)
