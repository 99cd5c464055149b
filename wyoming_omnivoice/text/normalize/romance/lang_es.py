"""Spanish: "un día", "veintiún días", "una hora", "doscientas personas", "primer piso",
"diez y treinta", "el veinticuatro de diciembre", "una hora y treinta minutos"."""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.lexicon import noun_gender
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
          "septiembre", "octubre", "noviembre", "diciembre")

_UNO_RE = re.compile(r"(?<![\wá-ú])(veinti)?uno\b")
_HUNDREDS_RE = re.compile(r"ientos\b")
_APOCOPE = {"primero": "primer", "tercero": "tercer"}


def _masculine(words: str) -> str:
    """"uno" -> "un" before a masculine noun or "mil": "un día", "veintiún días"."""
    return _UNO_RE.sub(lambda m: "veintiún" if m.group(1) else "un", words)


def _feminine(words: str) -> str:
    """Feminine cardinal: "una", "veintiuna", "doscientas". Only the part after the last
    "millón"/"millones" agrees ("doscientos millones de personas"); before "mil" the
    masculine "veintiún mil" stays, as the RAE recommends."""
    head, sep, tail = words.rpartition("millón") if "millón" in words else words.rpartition(
        "millones")
    tail = _HUNDREDS_RE.sub("ientas", tail)
    tail = re.sub(r"\buno\b(?! mil)", "una", tail)
    tail = re.sub(r"\bveintiuno\b(?! mil)", "veintiuna", tail)
    return _masculine(head + sep + tail)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    gender = noun_gender(noun.split()[0], "es") if noun else None
    if gender == "f":
        return _feminine(words)
    return _masculine(words) if gender == "m" else _mil_only(words)


def _mil_only(words: str) -> str:
    """Without a known noun only "veintiuno mil" -> "veintiún mil" changes."""
    return re.sub(r"\b(veinti)?uno(?= mil\b)", lambda m: "veintiún" if m.group(1) else "un",
                  words)


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    words = N.ordinal(value, "es")
    if "ª" in suffix:
        return " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split())
    last = words.rsplit(" ", 1)[-1]
    if last in _APOCOPE and noun_gender(ctx.after, "es") == "m":
        words = words[: -len(last)] + _APOCOPE[last]  # "primer piso", "tercer piso"
    return words


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    hours = _feminine(N.cardinal(hour, "es"))  # la una, las veintiuna
    return f"{hours} en punto" if minute <= 0 else f"{hours} y {N.cardinal(minute, 'es')}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    year_words = f" de {N.cardinal(year, 'es')}" if year is not None else ""
    return f"{N.cardinal(day, 'es')} de {MONTHS[month - 1]}{year_words}"


RULES = Language(
    code="es", decimal_word="coma", minus_word="menos", plus_word="más", and_word="y",
    range_word="a", currency_and="con", months=MONTHS, space_thousands=True,
    abbreviations={
        "Sr.": "señor", "Sra.": "señora", "Srta.": "señorita", "Dr.": "doctor",
        "Dra.": "doctora", "etc.": "etcétera", "p. ej.": "por ejemplo",
        "aprox.": "aproximadamente", "Ud.": "usted", "Uds.": "ustedes", "Avda.": "avenida",
        "máx.": "máximo", "mín.": "mínimo", "tel.": "teléfono", "C/": "calle",
    },
    date_before=r"el|del|al|desde|hasta|El|Desde|Hasta",
    per_words=r"por|el|cada",
    number_abbreviations=(frozenset({"núm.", "nº", "n.º", "Nº", "N.º"}), "número"),
    ordinal_suffix=r"(?:\.?[ºª°])",
    phone_extra=r"[6789]\d\d(?: \d\d\d){2}|[6789]\d\d(?: \d\d){3}",
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
)
