"""Russian: "одна дверь, две лампы", "двадцать один градус", "пять процентов", "до двадцати
двух градусов", "в семь тридцать", "третьего декабря", "на втором этаже", "в тысяча
девятьсот девяносто девятом году", "двадцать три рубля девяносто девять копеек".

The gender of the noun after a number comes from pymorphy3 and its OpenCorpora dictionary
(any noun, in any form: "дверь", "розетки", "устройства"); the case a preposition governs
turns the numeral into the genitive ("до пяти минут") or the accusative ("на одну
минуту"). Units are read in the form the number governs (`slavic.count_form`, with 21 and
31 taking the singular). Ordinals, days and years are adjectives whose ending follows the
noun ("на втором этаже", "в ... девятом году"); only the last word of a compound ordinal
changes. Decimals are read as num2words reads them ("двадцать одна целая пять десятых"),
with the genitive singular after them.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache
from typing import Any

from num2words import num2words

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа",
          "сентября", "октября", "ноября", "декабря")


def _n(gender: str, one: str, few: str, many: str, acc: str = "", tail: str = "") -> Noun:
    return S.noun(gender, one, few, many, few, acc, tail)  # after a decimal: genitive sg.


UNITS = {
    "°C": _n("m", "градус", "градуса", "градусов", tail="Цельсия"),
    "°F": _n("m", "градус", "градуса", "градусов", tail="Фаренгейта"),
    "°": _n("m", "градус", "градуса", "градусов"),
    "%": _n("m", "процент", "процента", "процентов"),
    "km/h": _n("m", "километр", "километра", "километров", tail="в час"),
    "mph": _n("f", "миля", "мили", "миль", "милю", tail="в час"),
    "m/s": _n("m", "метр", "метра", "метров", tail="в секунду"),
    "kWh": _n("m", "киловатт-час", "киловатт-часа", "киловатт-часов"),
    "kW": _n("m", "киловатт", "киловатта", "киловатт"),
    "W": _n("m", "ватт", "ватта", "ватт"),
    "V": _n("m", "вольт", "вольта", "вольт"),
    "hPa": _n("m", "гектопаскаль", "гектопаскаля", "гектопаскалей"),
    "km": _n("m", "километр", "километра", "километров"),
    "cm": _n("m", "сантиметр", "сантиметра", "сантиметров"),
    "mm": _n("m", "миллиметр", "миллиметра", "миллиметров"),
    "m": _n("m", "метр", "метра", "метров"),
    "kg": _n("m", "килограмм", "килограмма", "килограммов"),
    "g": _n("m", "грамм", "грамма", "граммов"),
    "ml": _n("m", "миллилитр", "миллилитра", "миллилитров"),
    "l": _n("m", "литр", "литра", "литров"),
    "lx": _n("m", "люкс", "люкса", "люксов"),
    "ppm": _n("f", "миллионная доля", "миллионные доли", "миллионных долей",
              "миллионную долю"),
    "µg/m³": _n("m", "микрограмм", "микрограмма", "микрограммов", tail="на кубический метр"),
    "dB": _n("m", "децибел", "децибела", "децибел"),
    "h": _n("m", "час", "часа", "часов"),
    "min": _n("f", "минута", "минуты", "минут", "минуту"),
    "s": _n("f", "секунда", "секунды", "секунд", "секунду"),
}
UNIT_ALIASES = {
    "°С": "°C", "ч": "h", "мин": "min", "сек": "s", "кВт·ч": "kWh", "кВтч": "kWh",
    "кВт": "kW", "Вт": "W", "В": "V", "гПа": "hPa", "км/ч": "km/h", "м/с": "m/s",
    "км": "km", "см": "cm", "мм": "mm", "м": "m", "кг": "kg", "г": "g", "л": "l",
    "мл": "ml", "лк": "lx", "дБ": "dB", "мкг/м³": "µg/m³",
}
CURRENCIES = {
    "RUB": (_n("m", "рубль", "рубля", "рублей"), _n("f", "копейка", "копейки", "копеек",
                                                    "копейку")),
    "EUR": (_n("m", "евро", "евро", "евро"), _n("m", "цент", "цента", "центов")),
    "USD": (_n("m", "доллар", "доллара", "долларов"), _n("m", "цент", "цента", "центов")),
}
_UNIT_GENDER = {noun.forms[i].split()[0]: noun.gender for noun in [
    *UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)] for i in range(5)}

_ACCUSATIVE = frozenset({"на", "через", "за", "в", "На", "Через", "За", "В"})
_GENITIVE = frozenset({"до", "от", "около", "с", "со", "из", "без", "более", "менее",
                       "свыше", "после", "ниже", "выше", "для", "До", "От", "Около", "С",
                       "Из", "Без", "Более", "Менее", "Свыше", "После"})
_NOMINATIVE_DATE = frozenset({"Сегодня", "сегодня", "Завтра", "завтра", "Вчера", "вчера",
                              "это", "Это", "на", "На", "по"})

_ONE = {("m", "nom"): "один", ("f", "nom"): "одна", ("n", "nom"): "одно",
        ("m", "acc"): "один", ("f", "acc"): "одну", ("n", "acc"): "одно",
        ("m", "gen"): "одного", ("f", "gen"): "одной", ("n", "gen"): "одного"}
_GENITIVE_WORDS = {
    "два": "двух", "две": "двух", "три": "трёх", "четыре": "четырёх", "восемь": "восьми",
    "сорок": "сорока", "девяносто": "девяноста", "сто": "ста", "двести": "двухсот",
    "триста": "трёхсот", "четыреста": "четырёхсот", "пятьсот": "пятисот",
    "шестьсот": "шестисот", "семьсот": "семисот", "восемьсот": "восьмисот",
    "девятьсот": "девятисот", "пятьдесят": "пятидесяти", "шестьдесят": "шестидесяти",
    "семьдесят": "семидесяти", "восемьдесят": "восьмидесяти", "тысяча": "тысячи",
    "тысячи": "тысяч", "миллион": "миллиона", "миллиона": "миллионов",
}
_MORPH_GENDER = {"masc": "m", "femn": "f", "neut": "n"}


@cache
def _morph() -> Any:
    import pymorphy3  # loaded on the first Russian number (0.4 s, about 15 MB)

    return pymorphy3.MorphAnalyzer(lang="ru")


@cache
def noun_gender(word: str) -> str | None:
    """"m", "f" or "n" for a Russian noun in any form, from the unit table or pymorphy3."""
    lowered = word.lower()
    if lowered in _UNIT_GENDER:
        return _UNIT_GENDER[lowered]
    if not re.fullmatch(r"[а-яё-]+", lowered):
        return None
    for parse in _morph().parse(lowered):
        if "NOUN" in parse.tag and parse.tag.gender in _MORPH_GENDER:
            return _MORPH_GENDER[parse.tag.gender]
    return None


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _one(value: int) -> bool:
    return value % 10 == 1 and value % 100 != 11


def _form(num: Num, ctx: Context) -> int:
    if num.fraction:
        return S.FRACTION
    value = int(num.integer)
    case = _case(ctx.before)
    if case == "gen":
        return S.FRACTION if _one(value) else S.MANY  # "до одного градуса", "до пяти"
    if _one(value):
        return S.ACCUSATIVE if case == "acc" else S.ONE
    return S.FEW if value % 10 in (2, 3, 4) and value % 100 not in (12, 13, 14) else S.MANY


def genitive(words: str, gender: str = "m") -> str:
    """A cardinal in the genitive: "двадцать два" -> "двадцати двух"."""
    out = []
    for word in words.split():
        if word == "один":
            out.append(_ONE[(gender, "gen")])
        elif word in _GENITIVE_WORDS:
            out.append(_GENITIVE_WORDS[word])
        elif word.endswith("ь"):
            out.append(word[:-1] + "и")  # пять -> пяти, двадцать -> двадцати
        else:
            out.append(word)
    return " ".join(out)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    gender = (noun_gender(noun.split()[0]) if noun else None) or "m"
    case = _case(ctx.before)
    if case == "gen":
        return genitive(words, gender)
    head, _, last = words.rpartition(" ")
    if last == "один":
        last = _ONE[(gender, case)]
    elif last == "два" and gender == "f":
        last = "две"
    return f"{head} {last}" if head else last


def _fix_cardinal(words: str) -> str:
    return re.sub(r"^одна тысяча", "тысяча", words)  # "тысяча девятьсот", as it is said


def _decimal(num: Num) -> str:
    return _fix_cardinal(str(num2words(Decimal(f"{num.integer}.{num.fraction}"), lang="ru")))


_HARD = {  # (gender, case) -> ending of an ordinal in -ый/-ой
    ("m", "gen"): "ого", ("m", "dat"): "ому", ("m", "ins"): "ым", ("m", "loc"): "ом",
    ("f", "nom"): "ая", ("f", "gen"): "ой", ("f", "dat"): "ой", ("f", "acc"): "ую",
    ("f", "ins"): "ой", ("f", "loc"): "ой", ("n", "nom"): "ое", ("n", "acc"): "ое",
    ("n", "gen"): "ого", ("n", "dat"): "ому", ("n", "ins"): "ым", ("n", "loc"): "ом",
    ("p", "nom"): "ые", ("p", "gen"): "ых", ("p", "loc"): "ых",
}
_THIRD = {  # "третий"
    ("m", "gen"): "третьего", ("m", "dat"): "третьему", ("m", "ins"): "третьим",
    ("m", "loc"): "третьем", ("f", "nom"): "третья", ("f", "gen"): "третьей",
    ("f", "dat"): "третьей", ("f", "acc"): "третью", ("f", "ins"): "третьей",
    ("f", "loc"): "третьей", ("n", "nom"): "третье", ("n", "acc"): "третье",
    ("n", "gen"): "третьего", ("n", "dat"): "третьему", ("n", "ins"): "третьим",
    ("n", "loc"): "третьем", ("p", "nom"): "третьи", ("p", "gen"): "третьих",
}
_MORPH_CASE = {"nomn": "nom", "gent": "gen", "datv": "dat", "accs": "acc", "ablt": "ins",
               "loct": "loc", "loc2": "loc", "gen2": "gen"}


def ordinal(value: int, gender: str, case: str) -> str:
    """"втором", "двадцать третьего", "тысяча девятьсот девяносто девятом"."""
    words = _fix_cardinal(N.ordinal(value, "ru"))
    head, _, last = words.rpartition(" ")
    if last == "третий":
        last = _THIRD.get((gender, case), last)
    elif (gender, case) in _HARD:
        last = last[:-2] + _HARD[(gender, case)]
    return f"{head} {last}" if head else last


def _noun_gender_case(word: str) -> tuple[str, str] | None:
    if not re.fullmatch(r"[а-яёА-ЯЁ-]+", word):
        return None
    for parse in _morph().parse(word.lower()):
        if "NOUN" in parse.tag and parse.tag.case in _MORPH_CASE:
            gender = "p" if parse.tag.number == "plur" else _MORPH_GENDER.get(
                parse.tag.gender or "", "m")
            return gender, _MORPH_CASE[parse.tag.case]
    return None


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"на 2-м этаже" -> "на втором этаже", "3-й подъезд" -> "третий подъезд"."""
    known = _noun_gender_case(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _hours(hour: int, case: str) -> str:
    words = N.cardinal(hour, "ru")
    return genitive(words) if case == "gen" else words


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"в семь тридцать", "в семь часов", "в час", "до семи часов", "с девяти пятнадцати"."""
    case = _case(ctx.before)
    if hour == 0 and minute <= 0:
        return "полуночи" if case == "gen" else "полночь"
    if minute <= 0:
        if hour == 1 and case != "gen":
            return "час"
        num = Num(False, str(hour), "")
        noun = UNITS["h"].form(_form(num, Context(before=ctx.before)))
        return f"{_hours(hour, case)} {noun}"
    hours = _hours(hour, case) if hour else "ноль"
    if hour == 1 and case != "gen":
        hours = "час"  # "в час тридцать"
    minutes = N.cardinal(minute, "ru")
    if case == "gen":
        minutes = genitive(minutes, "f")
    return f"{hours} {'ноль ' if minute < 10 else ''}{minutes}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"третьего декабря" (when), "сегодня третье декабря", "... двадцать четвёртого года"."""
    case = "nom" if ctx.before in _NOMINATIVE_DATE else "gen"
    words = f"{ordinal(day, 'n', case)} {MONTHS[month - 1]}"
    if year is not None:
        words += f" {ordinal(year, 'm', 'gen')}"
        if ctx.after not in ("года", "году"):
            words += " года"
    return words


def _year(value: int, ctx: Context) -> str:
    """"в 1999 году" (locative), "с 1999 года" (genitive), "1999 год" (nominative)."""
    case = {"году": "loc", "года": "gen", "год": "nom"}.get(ctx.after)
    if case is None:
        return _fix_cardinal(N.cardinal(value, "ru"))
    return ordinal(value, "m", case)


_YEAR_ABBREVIATION = S.year_abbreviation("[вВ]", "г", "году", "года")


def _prepare(text: str) -> str:
    """"в 1999 г." -> "в 1999 году", "2024 г." -> "2024 года"."""
    return _DAY_RANGE(_YEAR_ABBREVIATION(text))


_DAY_RANGE = S.day_range("[сС]|[оО]т", "по|до", MONTHS, lambda d: ordinal(d, "n", "gen"))

RULES = Language(
    code="ru", decimal_word="целых", minus_word="минус", plus_word="плюс", and_word="и",
    range_word="до", range_before="от", months=MONTHS, space_thousands=True,
    abbreviations={
        "т.е.": "то есть", "т. е.": "то есть", "т.д.": "так далее", "т. д.": "так далее",
        "т.к.": "так как", "т. к.": "так как", "напр.": "например", "ул.": "улица",
        "тыс.": "тысяч", "млн": "миллионов", "ок.": "около", "мин.": "минимум",
        "макс.": "максимум",
    },
    date_before=r"на|до|с|по|к|это|Сегодня|сегодня|На|До|С",
    per_words=r"за|в|на",
    number_abbreviations=(frozenset({"№"}), "номер"),
    ordinal_suffix=r"-(?:й|я|е|м|го|му|ой|ий|ый|ая|ое|ом|ем|ье|ю)",
    year_before=r"(?!x)x",
    year_after=r"[ \t]+(?:году|года|год)\b",
    hour_abbr=r"ч", minute_abbr=r"мин", second_abbr=r"сек|с",
    duration_and=False, currency_and=" ",
    unit_aliases=UNIT_ALIASES, units=UNITS, currencies=CURRENCIES,
    currency_symbols={"₽": "RUB", "руб.": "RUB", "руб": "RUB", "€": "EUR", "$": "USD"},
    form=_form,
    agree=_agree,
    decimal_words=_decimal,
    fix_cardinal=_fix_cardinal,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    year_in_context=_year,
    prepare=_prepare,
)
