"""French: "vingt et une heures", "une personne", "mille habitants", "dix heures trente",
"le vingt-quatre décembre", phone numbers in pairs ("zéro six, douze, trente-quatre")."""

from __future__ import annotations

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.lexicon import noun_gender
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août",
          "septembre", "octobre", "novembre", "décembre")


def _feminine(words: str) -> str:
    """"un" -> "une" at the end of a cardinal ("vingt et une", "cent une")."""
    return words + "e" if words.endswith("un") else words


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is None or not words.endswith("un"):
        return words
    return _feminine(words) if noun_gender(noun.split()[0], "fr") == "f" else words


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    if value == 1:
        return "première" if suffix in ("re", "ère") else "premier"
    return N.ordinal(value, "fr")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    hours = f"{_feminine(N.cardinal(hour, 'fr'))} {'heure' if hour < 2 else 'heures'}"
    return hours + (f" {N.cardinal(minute, 'fr')}" if minute > 0 else "")


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    day_words = "premier" if day == 1 else N.cardinal(day, "fr")
    year_words = f" {N.cardinal(year, 'fr')}" if year is not None else ""
    return f"{day_words} {MONTHS[month - 1]}{year_words}"


RULES = Language(
    code="fr", decimal_word="virgule", minus_word="moins", plus_word="plus", and_word="et",
    range_word="à", months=MONTHS, thousands=r"[\u00a0\u202f'’]", space_thousands=True,
    abbreviations={
        "MM.": "Messieurs", "Mme": "Madame", "Mmes": "Mesdames",
        "Mlle": "Mademoiselle", "Dr": "Docteur", "Pr": "Professeur", "etc.": "et cetera",
        "env.": "environ", "p. ex.": "par exemple",
        "c.-à-d.": "c'est-à-dire", "St": "Saint", "Ste": "Sainte", "av.": "avenue",
        "bd": "boulevard", "max.": "maximum", "min.": "minimum", "tél.": "téléphone",
    },
    titles_before_name={"M.": "Monsieur"},
    date_before=r"le|du|au|depuis|dès|Le|Du|Au|Depuis|Dès",
    per_words=r"le|la|par",
    number_abbreviations=(frozenset({"n°", "N°", "no", "No"}), "numéro"),
    ordinal_suffix=r"(?:er|re|ère|ème|eme|e|ᵉʳ|ᵉ)",
    hour_letter=True, duration_and=False,
    phone_pairs=True,
    agree=_agree,
    singular=lambda num: abs(num.value) < 2,  # "1,5 kilomètre"
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
)
