"""Italian: "un'ora", "un giorno", "una persona", "ventun giorni", "alle ventuno e trenta",
"centoventitré", "il primo dicembre", "secondo piano"."""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.lexicon import noun_gender
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
          "settembre", "ottobre", "novembre", "dicembre")

# Compounds ending in "tre" carry the accent: ventitré, centotré, milletré.
_TRE_RE = re.compile(r"(?<=\w)(?<!\bal)(?<!\bnos)(?<!\bvos)tre\b")
# "uno" before s + consonant, z, gn, ps, pn, x, y; "un'" before a vowel (feminine).
_UNO_ONSET_RE = re.compile(r"^(?:s[^aeiouàèéìòù]|z|gn|ps|pn|x|y)", re.IGNORECASE)
_VOWEL_RE = re.compile(r"^[aeiouàèéìòùh]", re.IGNORECASE)


def _accent(words: str) -> str:
    return _TRE_RE.sub("tré", words)


def _cardinal(value: int) -> str:
    return _accent(N.cardinal(value, "it"))


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is None or not words.endswith("uno"):
        return words
    head = noun.split()[0]
    gender = noun_gender(head, "it")
    if gender is None:
        return words
    if words != "uno":  # ventuno, trentuno: "ventun giorni", "ventuno ore"
        return words[:-1] if gender == "m" else words
    if gender == "f":
        return "un'" if _VOWEL_RE.match(head) else "una"
    return "uno" if _UNO_ONSET_RE.match(head) else "un"


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    words = N.ordinal(value, "it")
    if "ª" in suffix:
        return " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split())
    return words


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    hours = "una" if hour == 1 else _cardinal(hour)
    return hours if minute <= 0 else f"{hours} e {_cardinal(minute)}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    day_words = "primo" if day == 1 else _cardinal(day)
    year_words = f" {_cardinal(year)}" if year is not None else ""
    return f"{day_words} {MONTHS[month - 1]}{year_words}"


def _elide(text: str) -> str:
    return text.replace("un' ", "un'")


RULES = Language(
    code="it", decimal_word="virgola", minus_word="meno", plus_word="più", and_word="e",
    range_word="a", months=MONTHS, space_thousands=True,
    abbreviations={
        "Sig.ra": "signora", "Sig.": "signor", "Sigg.": "signori", "Dott.ssa": "dottoressa",
        "Dott.": "dottor", "Prof.ssa": "professoressa", "Prof.": "professor",
        "ecc.": "eccetera", "ca.": "circa", "pag.": "pagina", "max.": "massimo",
        "min.": "minimo", "p.es.": "per esempio", "ad es.": "ad esempio", "tel.": "telefono",
    },
    date_before=r"il|dal|al|entro|Il|Dal|Entro",
    per_words=r"al|per|ogni",
    number_abbreviations=(frozenset({"n.", "N.", "nº", "n°"}), "numero"),
    ordinal_suffix=r"(?:[ºª°])",
    phone_extra=r"3\d\d[ ]\d{6,7}",
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    fix_cardinal=_accent,
    finish=_elide,
)
