"""Romanian: "două lămpi", "o oră", "douăzeci și două de grade Celsius", "douăzeci și unu
virgulă cinci grade Celsius", "cincizeci la sută", "la ora paisprezece și treizeci",
"trei decembrie", "al doilea etaj", "doisprezece lei și cincizeci de bani".

A number agrees with the noun after it: one is "un" (masculine, neuter) or "o"
(feminine), two is "doi" (masculine) or "două" (feminine, and neuter plurals, which agree
as feminines: "două grade", "două minute"), also in "douăsprezece" and "douăzeci și
două"; past twenty a noun takes "de" ("douăzeci de minute", "o sută de lei", but "o sută
unu lei", "cincizeci la sută"). The gender comes from the noun's form (`gender`), with
the feminine plurals in -i Home Assistant replies meet listed by hand. Hours agree with
"ora" (feminine: "ora două"); a date's day is a plain cardinal ("doi decembrie").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("ianuarie", "februarie", "martie", "aprilie", "mai", "iunie", "iulie", "august",
          "septembrie", "octombrie", "noiembrie", "decembrie")

#: Feminine nouns whose plural ends in -i (other plurals in -i are masculine: "doi ani").
_FEMININE_I = frozenset({
    "lămpi", "uși", "lumini", "luni", "săptămâni", "mașini", "nopți", "țări", "cărți",
    "mâini", "pături", "perechi", "baterii", "grădini", "bucătării", "încăperi", "sarcini",
    "dimineți", "seri", "melodii", "draperii", "fotografii", "zi",
})
#: Neuter plurals in -ii (most plurals in -ii are feminine: "baterii", "funcții").
_NEUTER_I = frozenset({"servicii", "exerciții", "studii", "consilii", "premii"})
#: Endings of neuter plurals in -e ("minute", "grade", "termostate", "ventilatoare"): one
#: is "unu" after twenty ("douăzeci și unu de minute"); other plurals in -e are feminine
#: ("douăzeci și una de ore").
_NEUTER_E = ("ate", "ete", "ute", "ite", "ente", "ive", "oare", "aje", "grade", "grame",
             "programe", "sisteme", "obiecte")
#: Words after a number that are not its noun (no agreement, no "de").
_NOT_NOUNS = frozenset({
    "a", "al", "ale", "și", "sau", "ori", "la", "în", "pe", "de", "cu", "din", "spre",
    "este", "e", "sunt", "era", "au", "va", "vor", "a fost", "până", "pentru", "după",
    "înainte", "minus", "plus", "iar", "dar", "sub", "peste", "fără", "când", "dacă",
})
_MASCULINE_SINGULAR = frozenset({"tată", "papă"})


def gender(noun: str) -> str:
    """"m", "f" or "n" (neuter: one like a masculine, two like a feminine) for the word
    after a number; neuter and feminine only differ after one."""
    word = noun.split()[0].lower()
    if word in _FEMININE_I:
        return "f"
    if word.endswith("uri") or word in _NEUTER_I or word.endswith(_NEUTER_E):
        return "n"  # "două grade", "două becuri", "douăzeci și unu de minute"
    if word.endswith(("e", "ări", "ăți", "ii", "ei")):
        return "f"  # "două ore", "două lămpi", "douăzeci și una de ore"
    if word in _MASCULINE_SINGULAR:
        return "m"
    if word.endswith(("ă", "a", "ie")) or word == "zi":
        return "f"  # "o lampă", "o oră", "o zi"
    return "m"


_DOI_RE = re.compile(r"\bdoi(?=sprezece\b|$)")
_UNU_RE = re.compile(r"\bunu$")


def agreeing(words: str, value: int, gender_: str) -> str:
    """The cardinal ``words`` of ``value`` as it stands before a noun of ``gender_``."""
    if value == 1:
        return "o" if gender_ == "f" else "un"
    if gender_ in ("f", "n"):
        words = _DOI_RE.sub("două", words)
    if gender_ == "f":
        words = _UNU_RE.sub("una", words)
    return words


def takes_de(value: int) -> bool:
    """A noun after 20 and more takes "de", unless the number ends in 1-19
    ("douăzeci de lei", "o sută de lei", "o sută unu lei")."""
    return value >= 20 and (value % 100 == 0 or value % 100 >= 20)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is None or not noun[:1].isalpha() or noun[:1].isupper() or \
            noun.lower() in _NOT_NOUNS or noun.startswith("la "):
        return words
    value = int(num.integer)
    words = agreeing(words, value, gender(noun))
    return f"{words} de" if takes_de(value) else words


def _unit_agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is not None and noun.startswith("la "):
        return words  # "cincizeci la sută"
    return _agree(num, words, noun, ctx)


def _n(g: str, one: str, many: str) -> Noun:
    return Noun(g, (one, many))


UNITS = {
    "°C": _n("n", "grad Celsius", "grade Celsius"),
    "°F": _n("n", "grad Fahrenheit", "grade Fahrenheit"),
    "°": _n("n", "grad", "grade"), "%": _n("m", "la sută", "la sută"),
    "km/h": _n("m", "kilometru pe oră", "kilometri pe oră"),
    "mph": _n("f", "milă pe oră", "mile pe oră"),
    "m/s": _n("m", "metru pe secundă", "metri pe secundă"),
    "kWh": _n("m", "kilowatt-oră", "kilowați-oră"), "kW": _n("m", "kilowatt", "kilowați"),
    "W": _n("m", "watt", "wați"), "V": _n("m", "volt", "volți"),
    "hPa": _n("m", "hectopascal", "hectopascali"), "km": _n("m", "kilometru", "kilometri"),
    "cm": _n("m", "centimetru", "centimetri"), "mm": _n("m", "milimetru", "milimetri"),
    "m": _n("m", "metru", "metri"), "kg": _n("n", "kilogram", "kilograme"),
    "g": _n("n", "gram", "grame"), "ml": _n("m", "mililitru", "mililitri"),
    "l": _n("m", "litru", "litri"), "lx": _n("m", "lux", "lucși"),
    "ppm": _n("f", "parte pe milion", "părți pe milion"),
    "µg/m³": _n("n", "microgram pe metru cub", "micrograme pe metru cub"),
    "dB": _n("m", "decibel", "decibeli"), "h": _n("f", "oră", "ore"),
    "min": _n("n", "minut", "minute"), "s": _n("f", "secundă", "secunde"),
}
CURRENCIES = {
    "RON": (_n("m", "leu", "lei"), _n("m", "ban", "bani")),
    "EUR": (_n("m", "euro", "euro"), _n("m", "cent", "cenți")),
    "USD": (_n("m", "dolar", "dolari"), _n("m", "cent", "cenți")),
    "GBP": (_n("f", "liră", "lire"), _n("m", "penny", "pence")),
}


def _unit_gender_agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """Units and currencies: the gender is the table's, found by the noun's form."""
    if noun is None:
        return words
    for table in (UNITS.values(), (c for pair in CURRENCIES.values() for c in pair)):
        for unit in table:
            if noun in unit.forms:
                if unit.forms[0].startswith("la "):
                    return words
                value = int(num.integer)
                words = agreeing(words, value, unit.gender)
                return f"{words} de" if takes_de(value) else words
    return _agree(num, words, noun, ctx)


_MASCULINE_ORDINAL = {"unu": "unulea", "doi": "doilea", "trei": "treilea",
                      "patru": "patrulea", "cinci": "cincilea", "șase": "șaselea",
                      "șapte": "șaptelea", "opt": "optulea", "nouă": "nouălea",
                      "sută": "sutălea", "mie": "miilea", "sute": "sutelea",
                      "mii": "miilea"}
_FEMININE_ORDINAL = {"una": "una", "două": "doua", "trei": "treia", "patru": "patra",
                     "cinci": "cincea", "șase": "șasea", "șapte": "șaptea", "opt": "opta",
                     "nouă": "noua", "sută": "suta", "mie": "mia", "sute": "sutea",
                     "mii": "mia"}


def ordinal(value: int, feminine: bool) -> str:
    """"doilea", "treilea", "douăzeci și unulea" (after "al"); "doua", "treia",
    "douăzeci și una" (after "a"); one is "întâiul" / "întâia"."""
    if value == 1:
        return "întâia" if feminine else "întâiul"
    words = N.cardinal(value, "ro")
    if feminine:
        words = agreeing(words, value, "f")
    *head, last = words.split()
    table = _FEMININE_ORDINAL if feminine else _MASCULINE_ORDINAL
    if last in table:
        last = table[last]
    elif last.endswith(("zece", "zeci")):  # "zecea"/"zecelea", "douăzecea"/"douăzecilea"
        last = last + ("a" if feminine else "lea")
    return " ".join([*head, last])


def _ordinal_words(value: int, suffix: str, ctx: Context) -> str:
    return ordinal(value, suffix == "-a")


def _hour(hour: int) -> str:
    """An hour as it agrees with "ora": "două", "douăsprezece", "douăzeci și două"; one is
    "unu", also in "ora douăzeci și unu" (not "una")."""
    return "unu" if hour == 1 else agreeing(N.cardinal(hour, "ro"), hour, "n")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"ora șapte", "ora paisprezece și treizeci", "ora două" (hours agree with "ora"),
    "miezul nopții"; "ora" is added where the sentence does not have it."""
    if minute < 0:
        return None
    if hour == 0 and minute == 0:
        return "miezul nopții"
    hours = _hour(hour)
    if minute:
        # the minutes agree with "minute", a neuter: "și două", "și douăzeci și unu"
        minutes = agreeing(N.cardinal(minute, "ro"), minute, "n") if minute != 1 else "unu"
        hours = f"{hours} și {minutes}"
    return hours if ctx.before.lower() in ("ora", "orele") else f"ora {hours}"


_WRITTEN_DE_RE = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:[.\u00a0\u202f ]\d{3})*|\d+) de "
                            r"(?=[^\W\d])")


# Home Assistant's "what time is it" reply: "14 și 30 de minute", "7 fix"
_HOUR_RE = re.compile(r"(?<![\w.,:])(?P<h>[01]?\d|2[0-3])(?= fix\b| și \d{1,2} (?:de )?minut)")


def _prepare(text: str) -> str:
    """"22 de lămpi" -> "22 lămpi": the "de" is put back by the agreement, which needs the
    noun after the number to say "două"; an hour before "fix" or "și ... minute" agrees
    with "ora" ("2 fix" -> "două fix")."""
    def drop(m: re.Match[str]) -> str:
        keep = not takes_de(int(re.sub(r"\D", "", m.group("n"))))
        return m.group(0) if keep else m.group("n") + " "

    text = _HOUR_RE.sub(lambda m: _hour(int(m.group("h"))), text)
    return _WRITTEN_DE_RE.sub(drop, text)


_ORA_ESTE_RE = re.compile(r"\b([Oo]ra (?:este|e) )ora ")


def _finish(text: str) -> str:
    """"temperaturi de de la 20" -> "de la"; "Ora este ora cincisprezece" -> "Ora este
    cincisprezece" (the hour's "ora" where the sentence already said it)."""
    return _ORA_ESTE_RE.sub(r"\1", text.replace("de de la ", "de la "))


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{'întâi' if day == 1 else N.cardinal(day, 'ro')} {MONTHS[month - 1]}"
    return f"{words} {N.cardinal(year, 'ro')}" if year is not None else words


RULES = Language(
    code="ro", decimal_word="virgulă", minus_word="minus", plus_word="plus", and_word="și",
    range_word="la", range_before="de la", months=MONTHS, space_thousands=True,
    abbreviations={
        "nr.": "numărul", "Nr.": "numărul", "str.": "strada", "Str.": "strada",
        "etc.": "etcetera", "aprox.": "aproximativ", "de ex.": "de exemplu",
        "ex.": "exemplu", "dl.": "domnul", "Dl.": "domnul", "dna.": "doamna",
        "Dna.": "doamna", "max.": "maxim", "tel.": "telefon", "bl.": "blocul",
        "ap.": "apartamentul", "sc.": "scara", "et.": "etajul", "Bd.": "bulevardul",
        "Dr.": "doctor",
    },
    per_words=r"pe",
    ordinal_suffix=r"-lea|-a",
    year_before=r"anul|Anul|în|În|din|din anul|până în",
    date_before=r"pe|din|până pe|Pe",
    hour_abbr=r"h|ore|oră", minute_abbr=r"min|minute", second_abbr=r"s|sec",
    unit_aliases={"sec": "s"},
    units=UNITS, currencies=CURRENCIES,
    currency_symbols={"lei": "RON", "leu": "RON", "RON": "RON"},
    time_dot_before=frozenset({"ora", "Ora", "orele", "Orele"}),
    agree=_agree, unit_agree=_unit_gender_agree,
    ordinal_words=_ordinal_words,
    time_words=_time,
    date_words=_date,
    prepare=_prepare, finish=_finish,
)
