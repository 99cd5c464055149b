"""Catalan: "una hora", "dues hores", "vint-i-una persones", "dues-centes persones", "d'una
hora i trenta minuts", "vint-i-un coma cinc graus", "a les set", "a la una", "a les
catorze i trenta", "el tres de desembre", "l'u de gener", "cinc d'abril", "segon pis",
"tercera planta", "vint-i-tres euros amb cinquanta cèntims".

num2words gives the cardinals ("vint-i-un", "dos-cents") and the masculine ordinals
("segon", "cinquè"); we make them feminine before a feminine noun ("una", "dues",
"-centes"; "segona", "cinquena"), read clock hours as feminine (they count "hores"), and
elide "de" and "el" before a vowel as Catalan writes and says them ("d'una hora", "l'onze
de setembre", "d'abril"). The gender of the noun after a number comes from a small table
of the nouns Home Assistant replies use, then from its ending ("-a", "-ció": feminine).
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("gener", "febrer", "març", "abril", "maig", "juny", "juliol", "agost", "setembre",
          "octubre", "novembre", "desembre")


def _u(gender: str, one: str, many: str) -> Noun:
    return Noun(gender, (one, many))


UNITS = {
    "°C": _u("m", "grau", "graus"),
    "°F": _u("m", "grau Fahrenheit", "graus Fahrenheit"),
    "°": _u("m", "grau", "graus"),
    "%": _u("m", "per cent", "per cent"),
    "km/h": _u("m", "quilòmetre per hora", "quilòmetres per hora"),
    "m/s": _u("m", "metre per segon", "metres per segon"),
    "mph": _u("f", "milla per hora", "milles per hora"),
    "kWh": _u("m", "quilowatt hora", "quilowatts hora"),
    "kW": _u("m", "quilowatt", "quilowatts"),
    "W": _u("m", "watt", "watts"),
    "V": _u("m", "volt", "volts"),
    "hPa": _u("m", "hectopascal", "hectopascals"),
    "km": _u("m", "quilòmetre", "quilòmetres"),
    "cm": _u("m", "centímetre", "centímetres"),
    "mm": _u("m", "mil·límetre", "mil·límetres"),
    "m": _u("m", "metre", "metres"),
    "kg": _u("m", "quilogram", "quilograms"),
    "g": _u("m", "gram", "grams"),
    "ml": _u("m", "mil·lilitre", "mil·lilitres"),
    "l": _u("m", "litre", "litres"),
    "lx": _u("m", "lux", "lux"),
    "ppm": _u("f", "part per milió", "parts per milió"),
    "µg/m³": _u("m", "microgram per metre cúbic", "micrograms per metre cúbic"),
    "dB": _u("m", "decibel", "decibels"),
    "h": _u("f", "hora", "hores"),
    "min": _u("m", "minut", "minuts"),
    "s": _u("m", "segon", "segons"),
}
CURRENCIES = {
    "EUR": (_u("m", "euro", "euros"), _u("m", "cèntim", "cèntims")),
    "USD": (_u("m", "dòlar", "dòlars"), _u("m", "centau", "centaus")),
    "GBP": (_u("f", "lliura", "lliures"), _u("m", "penic", "penics")),
}
_FEMININE = frozenset((
    "hora", "hores", "persona", "persones", "finestra", "finestres", "porta", "portes",
    "persiana", "persianes", "làmpada", "làmpades", "bombeta", "bombetes", "habitació",
    "habitacions", "notificació", "notificacions", "actualització", "actualitzacions", "alarma",
    "alarmes", "setmana", "setmanes", "nit", "nits", "planta", "plantes", "càmera", "càmeres",
    "escena", "escenes", "zona", "zones", "presa", "preses", "bateria", "bateries", "vegada",
    "vegades", "rentadora", "rentadores", "tira", "tires", "unitat", "unitats"))
_MASCULINE = frozenset((
    "dia", "dies", "mes", "mesos", "any", "anys", "sensor", "sensors", "dispositiu",
    "dispositius", "endoll", "endolls", "interruptor", "interruptors", "termòstat",
    "termòstats", "ventilador", "ventiladors", "altaveu", "altaveus", "grau", "graus", "pis",
    "pisos", "missatge", "missatges", "avís", "avisos", "minut", "minuts", "segon", "segons",
    "euro", "euros", "cèntim", "cèntims", "llum", "llums", "watt", "watts", "programa",
    "programes", "sistema", "sistemes", "cotxe", "cotxes", "garatge", "garatges", "usuari",
    "usuaris"))


def _gender(noun: str | None) -> str | None:
    if not noun:
        return None
    word = noun.split()[0].lower()
    if word in _FEMININE:
        return "f"
    if word in _MASCULINE:
        return "m"
    return "f" if word.endswith(("a", "es", "ció", "cions")) else None


def _feminine(words: str) -> str:
    """"una", "vint-i-una", "dues", "dues-centes"; "un milió" keeps its masculine."""
    head, sep, tail = words.rpartition("mili")
    tail = re.sub(r"\bun\b(?!\s+mili)", "una", tail)
    tail = re.sub(r"(?<=-i-)un\b", "una", tail)
    tail = re.sub(r"\bdos\b", "dues", tail)
    tail = re.sub(r"(?<=-i-)dos\b", "dues", tail)
    tail = re.sub(r"\bcents\b", "centes", tail)
    return head + sep + tail


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if words == "un" and ctx.before.lower() in ("número", "num"):
        return "u"  # "el número u"
    return _feminine(words) if _gender(noun) == "f" else words


def _ordinal_words(value: int, feminine: bool) -> str:
    try:
        words = N.ordinal(value, "ca")
    except (KeyError, NotImplementedError, OverflowError):  # num2words fails on 30, 40 ...
        cardinal = N.cardinal(value, "ca")
        words = (cardinal[:-1] if cardinal.endswith("a") else cardinal) + "è"  # "trentè"
    if not feminine:
        return words
    return words[:-1] + "ena" if words.endswith("è") else words + "a"


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2n pis" -> "segon pis", "3a planta" -> "tercera planta"."""
    masculine = suffix.startswith(("r", "n", "t", "è", "º"))
    feminine = suffix.startswith(("a", "ª")) or (_gender(ctx.after) == "f" and not masculine)
    return _ordinal_words(value, feminine)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"a les set", "a la una", "a les catorze i trenta", "a les set i cinc"."""
    if hour == 0:
        return "zero hores" if minute <= 0 else f"zero i {N.cardinal(minute, 'ca')}"
    hours = _feminine(N.cardinal(hour, "ca"))
    return hours if minute <= 0 else f"{hours} i {N.cardinal(minute, 'ca')}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"tres de desembre", "u de gener", "cinc d'abril de dos mil vint-i-quatre"."""
    name = MONTHS[month - 1]
    of = "d'" if name[0] in "aeiou" else "de "
    words = f"{'u' if day == 1 else N.cardinal(day, 'ca')} {of}{name}"
    return words + (f" de {N.cardinal(year, 'ca')}" if year is not None else "")


_OF_RE = re.compile(r"(?<=\d) d['’](?=(?:abril|agost|octubre)\b)")
_ELIDE_RE = re.compile(r"\b([dD])e (?=(?:un|una|u|onze|uns|unes)\b)")
_ARTICLE_RE = re.compile(r"\b([eE])l (?=(?:u|onze)\b)")
_ONE_HOUR_RE = re.compile(r"\b([aA]) les una\b")


_FIRST_DAY_RE = re.compile(
    rf"\b([lL]['’])1 (?=(?:al|i|i el|fins al) \d{{1,2}} de (?:{'|'.join(MONTHS)})\b)")
_DECIMAL_RE = re.compile(r"\b(?P<int>[\w·-]+) coma (?P<frac>[\w·-]+) (?P<noun>\w+)")


def _prepare(text: str) -> str:
    """"5 d'abril" -> "5 de abril", for the date pass ("de" before the month); "de l'1 al 3
    de maig" -> "de l'u al 3 de maig" (the first day of a range is a day too)."""
    return _FIRST_DAY_RE.sub(lambda m: m.group(1) + "u ", _OF_RE.sub(" de ", text))


def _decimal_gender(match: re.Match[str]) -> str:
    """"dos coma cinc hores" -> "dues coma cinc hores": the whole part agrees with a
    feminine noun, as it does without the fraction."""
    if _gender(match.group("noun")) != "f":
        return match.group(0)
    return f"{_feminine(match.group('int'))} coma {match.group('frac')} {match.group('noun')}"


def _finish(text: str) -> str:
    """"de una" -> "d'una", "el onze" -> "l'onze", "a les una" -> "a la una", "dos coma
    cinc hores" -> "dues coma cinc hores"."""
    text = _DECIMAL_RE.sub(_decimal_gender, text)
    text = _ELIDE_RE.sub(lambda m: m.group(1) + "'", text)
    text = _ARTICLE_RE.sub(lambda m: "l'" if m.group(1) == "e" else "L'", text)
    return _ONE_HOUR_RE.sub(lambda m: m.group(1) + " la una", text)


RULES = Language(
    code="ca", decimal_word="coma", minus_word="menys", plus_word="més", and_word="i",
    range_word="a", currency_and="amb", months=MONTHS, space_thousands=True,
    abbreviations={
        "Sr.": "senyor", "Sra.": "senyora", "Dr.": "doctor", "Dra.": "doctora",
        "etc.": "etcètera", "p. ex.": "per exemple", "aprox.": "aproximadament",
        "tel.": "telèfon", "màx.": "màxim", "mín.": "mínim", "c/": "carrer",
        "Av.": "avinguda", "Pl.": "plaça",
    },
    date_before=r"el|del|al|des del|fins al|El|Des del",
    year_before=r"any|l'any|de l'any|L'any",
    per_words=r"per|el|cada",
    number_abbreviations=(frozenset({"núm.", "nº", "n.º", "Núm."}), "número"),
    ordinal_suffix=r"(?:r|n|t|è|a|ª|º)",
    units=UNITS, currencies=CURRENCIES,
    agree=_agree,
    form=lambda num, ctx: 0 if num.is_one else 1,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
