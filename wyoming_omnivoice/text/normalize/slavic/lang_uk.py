"""Ukrainian: "дві лампи", "одне вікно", "двадцять одна хвилина", "п'ять градусів", "до
двадцяти п'яти градусів", "о чотирнадцятій тридцять", "третього грудня", "на другому
поверсі", "у тисяча дев'ятсот дев'яносто дев'ятому році", "двадцять три гривні".

As in Russian, 1 (and 21, 31 ...) takes the singular, 2-4 the nominative plural ("дві
лампи", "два градуси"), 5 and up the genitive plural, a decimal the genitive singular;
the numeral agrees with the noun's gender and the preposition's case. The noun table is
our own (`slavic.NounTable`): the Ukrainian dictionary for pymorphy3 is GPL-licensed, so
it is not a dependency (docs/design.md). Clock hours are feminine ordinals, as Ukrainians
say them ("о сьомій", "до сьомої", "сьома тридцять").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("січня", "лютого", "березня", "квітня", "травня", "червня", "липня", "серпня",
          "вересня", "жовтня", "листопада", "грудня")

_n = S.noun  # (gender, one, few, many, fraction, acc="", tail="")

UNITS = {
    "°C": _n("m", "градус", "градуси", "градусів", "градуса", tail="Цельсія"),
    "°F": _n("m", "градус", "градуси", "градусів", "градуса", tail="Фаренгейта"),
    "°": _n("m", "градус", "градуси", "градусів", "градуса"),
    "%": _n("m", "відсоток", "відсотки", "відсотків", "відсотка"),
    "km/h": _n("m", "кілометр", "кілометри", "кілометрів", "кілометра", tail="на годину"),
    "m/s": _n("m", "метр", "метри", "метрів", "метра", tail="на секунду"),
    "mph": _n("f", "миля", "милі", "миль", "милі", "милю", tail="на годину"),
    "ppm": _n("f", "мільйонна частка", "мільйонні частки", "мільйонних часток",
              "мільйонної частки", "мільйонну частку"),
    "kWh": _n("f", "кіловат-година", "кіловат-години", "кіловат-годин", "кіловат-години",
              "кіловат-годину"),
    "kW": _n("m", "кіловат", "кіловати", "кіловатів", "кіловата"),
    "W": _n("m", "ват", "вати", "ватів", "вата"),
    "V": _n("m", "вольт", "вольти", "вольтів", "вольта"),
    "hPa": _n("m", "гектопаскаль", "гектопаскалі", "гектопаскалів", "гектопаскаля"),
    "km": _n("m", "кілометр", "кілометри", "кілометрів", "кілометра"),
    "cm": _n("m", "сантиметр", "сантиметри", "сантиметрів", "сантиметра"),
    "mm": _n("m", "міліметр", "міліметри", "міліметрів", "міліметра"),
    "m": _n("m", "метр", "метри", "метрів", "метра"),
    "kg": _n("m", "кілограм", "кілограми", "кілограмів", "кілограма"),
    "g": _n("m", "грам", "грами", "грамів", "грама"),
    "ml": _n("m", "мілілітр", "мілілітри", "мілілітрів", "мілілітра"),
    "l": _n("m", "літр", "літри", "літрів", "літра"),
    "lx": _n("m", "люкс", "люкси", "люксів", "люкса"),
    "µg/m³": _n("m", "мікрограм", "мікрограми", "мікрограмів", "мікрограма",
                tail="на кубічний метр"),
    "dB": _n("m", "децибел", "децибели", "децибелів", "децибела"),
    "h": _n("f", "година", "години", "годин", "години", "годину"),
    "min": _n("f", "хвилина", "хвилини", "хвилин", "хвилини", "хвилину"),
    "s": _n("f", "секунда", "секунди", "секунд", "секунди", "секунду"),
}
UNIT_ALIASES = {
    "°С": "°C", "год": "h", "хв": "min", "сек": "s", "кВт·год": "kWh", "кВт⋅год": "kWh",
    "кВт": "kW", "Вт": "W", "В": "V", "гПа": "hPa", "км/год": "km/h", "м/с": "m/s",
    "км": "km", "см": "cm", "мм": "mm", "м": "m", "кг": "kg", "г": "g", "л": "l",
    "мл": "ml", "лк": "lx", "дБ": "dB", "мкг/м³": "µg/m³",
}
CURRENCIES = {
    "UAH": (_n("f", "гривня", "гривні", "гривень", "гривні", "гривню"),
            _n("f", "копійка", "копійки", "копійок", "копійки", "копійку")),
    "EUR": (_n("m", "євро", "євро", "євро", "євро"),
            _n("m", "цент", "центи", "центів", "цента")),
    "USD": (_n("m", "долар", "долари", "доларів", "долара"),
            _n("m", "цент", "центи", "центів", "цента")),
}
NOUNS = S.NounTable([
    "лампа f лампу:acc ламп:gen лампи:nom",
    "розетка f розетку:acc розеток:gen розетки:nom",
    "людина f людину:acc людини:nom",
    "особа f особу:acc осіб:gen особи:nom",
    "кімната f кімнату:acc кімнат:gen кімнати:nom кімнаті:loc",
    "камера f камеру:acc камер:gen камери:nom",
    "штора f штору:acc штор:gen штори:nom",
    "автоматизація f автоматизацію:acc автоматизацій:gen автоматизації:nom",
    "година f годину:acc годин:gen години:nom годині:loc",
    "хвилина f хвилину:acc хвилин:gen хвилини:nom",
    "секунда f секунду:acc секунд:gen секунди:nom",
    "ніч f ночі:nom ночей:gen",
    "світло n світел:gen світла:nom",
    "вікно n вікон:gen вікна:nom",
    "повідомлення n повідомлень:gen",
    "сповіщення n сповіщень:gen",
    "місце n місць:gen місця:nom",
    "пристрій m пристроїв:gen пристрої:nom",
    "датчик m датчиків:gen датчики:nom",
    "поверх m поверхів:gen поверхи:nom поверсі:loc поверху:gen",
    "день m днів:gen дні:nom дня:gen",
    "тиждень m тижнів:gen тижні:nom",
    "місяць m місяців:gen місяці:nom",
    "рік m років:gen роки:nom році:loc року:gen",
    "вимикач m вимикачів:gen вимикачі:nom",
    "вентилятор m вентиляторів:gen вентилятори:nom",
    "термостат m термостатів:gen термостати:nom",
    "замок m замків:gen замки:nom",
    "під'їзд m під'їздів:gen під'їзди:nom під'їзді:loc",
    "батарея f батарею:acc батарей:gen батареї:nom",
    "зона f зону:acc зон:gen зони:nom",
    "сцена f сцену:acc сцен:gen сцени:nom",
    "подія f подію:acc подій:gen події:nom",
    "ванна f ванну:acc ванн:gen ванни:nom",
    "кухня f кухню:acc кухонь:gen кухні:nom",
    "спальня f спальню:acc спалень:gen спальні:nom",
    "жалюзі n",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])

_ACCUSATIVE = frozenset({"на", "через", "за", "в", "у"})
_GENITIVE = frozenset({"до", "від", "з", "із", "зі", "біля", "близько", "понад", "після",
                       "без", "для", "нижче", "вище", "більше", "менше"})
_LOCATIVE = frozenset({"о", "об", "по", "при"})
_NOMINATIVE_DATE = frozenset({"сьогодні", "завтра", "вчора", "це", "на", "по"})
_ONE = {("m", "nom"): "один", ("f", "nom"): "одна", ("n", "nom"): "одне",
        ("m", "acc"): "один", ("f", "acc"): "одну", ("n", "acc"): "одне",
        ("m", "gen"): "одного", ("f", "gen"): "однієї", ("n", "gen"): "одного"}
_GENITIVE_WORDS = {
    "два": "двох", "дві": "двох", "три": "трьох", "чотири": "чотирьох", "п'ять": "п'яти",
    "шість": "шести", "сім": "семи", "вісім": "восьми", "дев'ять": "дев'яти",
    "сорок": "сорока", "дев'яносто": "дев'яноста", "сто": "ста", "двісті": "двохсот",
    "триста": "трьохсот", "чотириста": "чотирьохсот", "п'ятсот": "п'ятисот",
    "шістсот": "шестисот", "сімсот": "семисот", "вісімсот": "восьмисот",
    "дев'ятсот": "дев'ятисот", "п'ятдесят": "п'ятдесяти", "шістдесят": "шістдесяти",
    "сімдесят": "сімдесяти", "вісімдесят": "вісімдесяти", "тисяча": "тисячі", "тисячі": "тисяч",
}


def _fix_cardinal(words: str) -> str:
    return re.sub(r"^одна тисяча", "тисяча", words)  # "тисяча дев'ятсот", as it is said


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    if before in _GENITIVE:
        return "gen"
    return "loc" if before in _LOCATIVE else "nom"


def _one(value: int) -> bool:
    return value % 10 == 1 and value % 100 != 11


def _form(num: Num, ctx: Context) -> int:
    if num.fraction:
        return S.FRACTION
    value = int(num.integer)
    case = _case(ctx.before)
    if case == "gen":
        return S.FRACTION if _one(value) else S.MANY  # "до одного градуса", "до п'яти"
    if _one(value):
        return S.ACCUSATIVE if case == "acc" else S.ONE
    return S.FEW if value % 10 in (2, 3, 4) and value % 100 not in (12, 13, 14) else S.MANY


def genitive(words: str, gender: str = "m") -> str:
    """"двадцять два" -> "двадцяти двох"."""
    out = []
    for word in words.split():
        if word in ("один", "одна", "одне"):
            out.append(_ONE[(gender, "gen")])
        elif word in _GENITIVE_WORDS:
            out.append(_GENITIVE_WORDS[word])
        elif word.endswith("ять"):
            out.append(word[:-1] + "и")  # десять -> десяти, двадцять -> двадцяти
        else:
            out.append(word)
    return " ".join(out)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    known = NOUNS.get(noun)
    one = words.rpartition(" ")[2] == "один"
    gender = known[0] if known else (
        NOUNS.singular_gender(noun, ("а", "я"), ("о", "ння", "ття", "тво")) if one
        else None) or "m"
    case = _case(ctx.before)
    if case == "gen":
        return genitive(words, gender)
    head, _, last = words.rpartition(" ")
    if last == "один":
        last = _ONE.get((gender, "acc" if case == "acc" else "nom"), last)
    elif last == "два" and gender == "f":
        last = "дві"
    return f"{head} {last}" if head else last


_HARD = {  # (gender, case) -> ending of an ordinal in -ий
    ("m", "gen"): "ого", ("m", "dat"): "ому", ("m", "loc"): "ому", ("m", "ins"): "им",
    ("f", "nom"): "а", ("f", "gen"): "ої", ("f", "dat"): "ій", ("f", "acc"): "у",
    ("f", "loc"): "ій", ("f", "ins"): "ою", ("n", "nom"): "е", ("n", "acc"): "е",
    ("n", "gen"): "ого", ("n", "loc"): "ому", ("n", "ins"): "им",
}
_THIRD = {
    ("m", "gen"): "третього", ("m", "loc"): "третьому", ("m", "ins"): "третім",
    ("f", "nom"): "третя", ("f", "gen"): "третьої", ("f", "acc"): "третю",
    ("f", "loc"): "третій", ("n", "nom"): "третє", ("n", "acc"): "третє",
    ("n", "gen"): "третього", ("n", "loc"): "третьому",
}


def ordinal(value: int, gender: str, case: str) -> str:
    """"другому", "двадцять третього", "тисяча дев'ятсот дев'яносто дев'ятому"."""
    words = _fix_cardinal(N.ordinal(value, "uk"))
    head, _, last = words.rpartition(" ")
    if last == "третій":
        last = _THIRD.get((gender, case), last)
    elif last.endswith("ий") and (gender, case) in _HARD:
        last = last[:-2] + _HARD[(gender, case)]
    return f"{head} {last}" if head else last


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"на 2-му поверсі" -> "на другому поверсі", "3-й під'їзд" -> "третій під'їзд"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"о сьомій", "о чотирнадцятій тридцять", "до сьомої", "зараз сьома"."""
    case = _case(ctx.before)
    if hour == 0 and minute <= 0:
        return {"gen": "півночі", "loc": "півночі"}.get(case, "північ")
    hours = ordinal(hour, "f", case) if hour else "нуль"
    if minute <= 0:
        return hours
    return f"{hours} {'нуль ' if minute < 10 else ''}{N.cardinal(minute, 'uk')}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    case = "nom" if ctx.before.lower() in _NOMINATIVE_DATE else "gen"
    words = f"{ordinal(day, 'n', case)} {MONTHS[month - 1]}"
    if year is not None:
        words += f" {ordinal(year, 'm', 'gen')}"
        if ctx.after not in ("року", "році"):
            words += " року"
    return words


def _year(value: int, ctx: Context) -> str:
    """"у 1999 році" (locative), "з 1999 року" (genitive), "1999 рік" (nominative)."""
    case = {"році": "loc", "року": "gen", "рік": "nom"}.get(ctx.after)
    if case is None:
        return _fix_cardinal(N.cardinal(value, "uk"))
    return ordinal(value, "m", case)


_YEAR_ABBREVIATION = S.year_abbreviation("[уУвВ]", "р", "році", "року")


def _prepare(text: str) -> str:
    """"у 1999 р." -> "у 1999 році", "2024 р." -> "2024 року"."""
    return _DAY_RANGE(_YEAR_ABBREVIATION(text))


_DAY_RANGE = S.day_range("[зЗ]|[вВ]ід", "по|до", MONTHS, lambda d: ordinal(d, "n", "gen"))

RULES = Language(
    code="uk", decimal_word="кома", minus_word="мінус", plus_word="плюс", and_word="і",
    range_word="до", range_before="від", months=MONTHS, space_thousands=True,
    currency_and=" ",
    abbreviations={
        "т.д.": "так далі", "т. д.": "так далі", "т.ч.": "тому числі",
        "напр.": "наприклад", "вул.": "вулиця", "тис.": "тисяч", "млн": "мільйонів",
        "макс.": "максимум", "мін.": "мінімум", "прибл.": "приблизно",
    },
    date_before=r"на|до|з|по|це|Сьогодні|сьогодні|На|До|З",
    per_words=r"за|на",
    number_abbreviations=(frozenset({"№"}), "номер"),
    ordinal_suffix=r"-(?:й|а|е|го|му|ій|ий|им|ою|ої|і|я|є|ю|у|ша|ге|тє)",
    year_after=r"[ \t]+(?:році|року|рік)\b",
    hour_abbr=r"год", minute_abbr=r"хв", second_abbr=r"сек|с",
    duration_and=False,
    unit_aliases=UNIT_ALIASES, units=UNITS, currencies=CURRENCIES,
    currency_symbols={"₴": "UAH", "грн": "UAH", "грн.": "UAH", "€": "EUR", "$": "USD"},
    form=_form,
    agree=_agree,
    fix_cardinal=_fix_cardinal,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    year_in_context=_year,
    prepare=_prepare,
)
