"""Bulgarian: "една лампа", "две лампи", "два сензора", "пет градуса" (the counted form),
"двайсет и едно цяло и пет градуса", "в седем часа", "в четиринайсет и трийсет", "трети
декември", "на втория етаж", "през хиляда деветстотин деветдесет и девета година",
"двайсет и три лева и петдесет стотинки".

Bulgarian has no noun cases; a numeral agrees with the noun's gender ("един/една/едно",
"два/две"), and a masculine noun after a number above one takes its counted form
("два градуса", "пет процента"), which the unit nouns here hold. "и" joins the last part
of a number ("сто двайсет и пет", "хиляда и тринайсет"). We read the tens and teens as
they are said ("двайсет", "единайсет"), not as written in formal prose ("двадесет").
num2words has no Bulgarian, so `cardinal` and `ordinal` are ours; a year is a feminine
ordinal ("две хиляди двайсет и четвърта година").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("януари", "февруари", "март", "април", "май", "юни", "юли", "август", "септември",
          "октомври", "ноември", "декември")

_ONES = ("нула", "едно", "две", "три", "четири", "пет", "шест", "седем", "осем", "девет")
_TEENS = ("десет", "единайсет", "дванайсет", "тринайсет", "четиринайсет", "петнайсет",
          "шестнайсет", "седемнайсет", "осемнайсет", "деветнайсет")
_TENS = ("", "", "двайсет", "трийсет", "четирийсет", "петдесет", "шейсет", "седемдесет",
         "осемдесет", "деветдесет")
_HUNDREDS = ("", "сто", "двеста", "триста", "четиристотин", "петстотин", "шестстотин",
             "седемстотин", "осемстотин", "деветстотин")


def _parts(value: int) -> list[str]:
    """The parts of a number below 1000 that "и" may join: "сто", "двайсет", "пет"."""
    hundreds, rest = divmod(value, 100)
    parts = [_HUNDREDS[hundreds]] if hundreds else []
    if 10 <= rest < 20:
        parts.append(_TEENS[rest - 10])
    else:
        tens, unit = divmod(rest, 10)
        if tens:
            parts.append(_TENS[tens])
        if unit:
            parts.append(_ONES[unit])
    return parts


def _join(parts: list[str]) -> str:
    """"и" before the last part: "сто двайсет и пет", "две хиляди и четиристотин"."""
    if len(parts) < 2:
        return "".join(parts)
    return " ".join(parts[:-1]) + " и " + parts[-1]


def _components(value: int) -> list[str]:
    millions, rest = divmod(value, 10**6)
    thousands, rest = divmod(rest, 1000)
    parts: list[str] = []
    if millions:
        parts.append("милион" if millions == 1 else f"{_count(millions, 'm')} милиона")
    if thousands:
        parts.append("хиляда" if thousands == 1 else f"{_count(thousands, 'f')} хиляди")
    return parts + _parts(rest)


def _count(value: int, gender: str) -> str:
    """A number counting a noun of ``gender``: "две хиляди", "два милиона"."""
    return _gendered(_join(_parts(value)), gender)


def _gendered(words: str, gender: str) -> str:
    head, _, last = words.rpartition(" ")
    new = {("m", "едно"): "един", ("f", "едно"): "една", ("m", "две"): "два"}.get(
        (gender, last), last)
    return f"{head} {new}" if head else new


def cardinal(value: int) -> str:
    """The counting form (neuter): "двайсет и едно", "хиляда и тринайсет"."""
    if value == 0:
        return "нула"
    if value >= 10**9:
        return " ".join(_ONES[int(d)] for d in str(value))
    return _join(_components(value))


N.own_cardinals("bg", cardinal)

_ORD = {"едно": "първ", "две": "втор", "три": "трет", "четири": "четвърт", "седем": "седм",
        "осем": "осм", "сто": "стотн", "двеста": "двестотн", "триста": "тристотн",
        "хиляда": "хилядн", "милион": "милионн"}


def ordinal(value: int, ending: str = "и") -> str:
    """"трети", "втория", "двайсет и първи", "деветдесет и девета"; ``ending`` is the
    masculine "и", "ия" or "ият", the feminine "а"/"ата" or the neuter "о"/"ото"."""
    parts = _components(value) if value else ["нула"]
    last = parts[-1]
    if last.endswith(" хиляди"):
        stem = last.replace(" хиляди", "").replace(" ", "") + "хилядн"
    elif last.endswith("стотин"):
        stem = last[:-2] + "н"
    else:
        stem = _ORD.get(last, last)
    masculine_n = stem.endswith("н") and ending == "и"  # "стотен", "хиляден"
    word = stem[:-1] + "ен" if masculine_n else stem + ending
    return _join([*parts[:-1], word])


_n = S.noun  # (gender, one, few, many, fraction)


def _unit(gender: str, one: str, counted: str, tail: str = "") -> Noun:
    return _n(gender, one, counted, counted, counted, tail=tail)


UNITS = {
    "°C": _unit("m", "градус", "градуса"),
    "°F": _unit("m", "градус", "градуса", "по Фаренхайт"),
    "°": _unit("m", "градус", "градуса"),
    "%": _unit("m", "процент", "процента"),
    "km/h": _unit("m", "километър", "километра", "в час"),
    "m/s": _unit("m", "метър", "метра", "в секунда"),
    "mph": _unit("f", "миля", "мили", "в час"),
    "kWh": _unit("m", "киловатчас", "киловатчаса"),
    "kW": _unit("m", "киловат", "киловата"),
    "W": _unit("m", "ват", "вата"),
    "V": _unit("m", "волт", "волта"),
    "hPa": _unit("m", "хектопаскал", "хектопаскала"),
    "km": _unit("m", "километър", "километра"),
    "cm": _unit("m", "сантиметър", "сантиметра"),
    "mm": _unit("m", "милиметър", "милиметра"),
    "m": _unit("m", "метър", "метра"),
    "kg": _unit("m", "килограм", "килограма"),
    "g": _unit("m", "грам", "грама"),
    "ml": _unit("m", "милилитър", "милилитра"),
    "l": _unit("m", "литър", "литра"),
    "lx": _unit("m", "лукс", "лукса"),
    "ppm": _unit("m", "ppm", "ppm"),
    "µg/m³": _unit("m", "микрограм", "микрограма", "на кубичен метър"),
    "dB": _unit("m", "децибел", "децибела"),
    "h": _unit("m", "час", "часа"),
    "min": _unit("f", "минута", "минути"),
    "s": _unit("f", "секунда", "секунди"),
}
UNIT_ALIASES = {
    "°С": "°C", "ч": "h", "мин": "min", "сек": "s",
    "км/ч": "km/h", "м/с": "m/s", "кВтч": "kWh", "кВт.ч": "kWh", "кВт": "kW", "Вт": "W", "км": "km",
    "см": "cm", "мм": "mm", "кг": "kg", "л": "l", "м": "m",
}
CURRENCIES = {
    "EUR": (_unit("n", "евро", "евро"), _unit("m", "цент", "цента")),
    "BGN": (_unit("m", "лев", "лева"), _unit("f", "стотинка", "стотинки")),
    "USD": (_unit("m", "долар", "долара"), _unit("m", "цент", "цента")),
}
NOUNS = S.NounTable([
    "лампа f лампи:nom", "крушка f крушки:nom", "лампичка f лампички:nom",
    "стая f стаи:nom", "врата f врати:nom", "щора f щори:nom", "камера f камери:nom",
    "минута f минути:nom", "секунда f секунди:nom", "седмица f седмици:nom",
    "година f години:nom", "нощ f нощи:nom", "актуализация f актуализации:nom",
    "устройство n устройства:nom", "известие n известия:nom", "съобщение n съобщения:nom",
    "осветление n", "място n места:nom",
    "сензор m сензора:nom сензори:nom", "прозорец m прозореца:nom прозорци:nom",
    "контакт m контакта:nom", "ключ m ключа:nom", "уред m уреда:nom",
    "термостат m термостата:nom", "вентилатор m вентилатора:nom", "етаж m етажа:nom",
    "ден m дни:nom дена:nom", "месец m месеца:nom", "час m часа:nom",
    "високоговорител m високоговорителя:nom",
    "път m пъти:nom пъта:nom", "телефон m телефона:nom", "потребител m потребителя:nom",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])


#: Men counted: "двама души", "трима човека".
_PERSONS = frozenset({"души", "човека", "мъже", "мъжа"})
_PERSON_NUMERALS = {"две": "двама", "три": "трима", "четири": "четирима", "пет": "петима",
                    "шест": "шестима"}


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"един градус", "една лампа", "едно устройство", "два сензора", "две лампи",
    "двама души", "на втори етаж"."""
    if noun and noun.split()[0].lower() in _PERSONS and words in _PERSON_NUMERALS:
        return _PERSON_NUMERALS[words]
    if noun == "етаж" and not num.negative:
        return ordinal(int(num.integer))  # "на 2 етаж" is said "на втори етаж"
    known = NOUNS.get(noun)
    gender = known[0] if known else _guess_gender(noun, words.rpartition(" ")[2])
    return _gendered(words, gender) if gender else words


_NOT_NOUNS = frozenset({"от", "в", "във", "и", "на", "за", "с", "със", "до", "по", "или"})


def _guess_gender(noun: str | None, last: str) -> str | None:
    """The gender of a noun not in the table, from the form the numeral governs: after 1
    the singular ("една задача", "едно място", "един телефон"), after 2 the masculine
    counted form in "-а/-я" ("два телефона") against the feminine plural in "-и" and the
    neuter plural in "-ия", "-ства", "-ета", "-ена" ("две задачи", "две съобщения")."""
    if not noun or not noun[:1].isalpha():
        return None
    word = noun.split()[0].lower()
    if word in _NOT_NOUNS:
        return None  # "1 от 3" keeps the counting form
    if last == "едно":
        if word.endswith(("а", "я")):
            return "f"
        return "n" if word.endswith(("о", "е")) else "m"
    if last == "две" and word.endswith(("а", "я")):
        return "n" if word.endswith(("ия", "ства", "ета", "ена")) else "m"
    return None


def _decimal(num: Num) -> str:
    """"двайсет и едно цяло и пет", "нула цяло и пет"."""
    frac = num.fraction
    frac_words = cardinal(int(frac)) if len(frac) <= 2 and not frac.startswith(
        "0") else N.digits(frac, "bg")
    return f"{cardinal(int(num.integer))} цяло и {frac_words}"


_ENDINGS = (("ият", "ият"), ("ия", "ия"), ("ата", "ата"), ("ото", "ото"), ("а", "а"),
            ("о", "о"))


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2-ри етаж" -> "втори етаж", "на 2-рия етаж" -> "на втория етаж", "3-та" ->
    "третата"."""
    for end, ending in _ENDINGS:
        if suffix.endswith(end):
            return ordinal(value, ending)
    return ordinal(value)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"в седем часа", "в един часа", "в четиринайсет и трийсет"."""
    hours = _gendered(cardinal(hour), "m")
    if minute <= 0 and hour == 0:
        return "полунощ"
    if minute <= 0:
        return f"{hours} часа"
    return f"{hours} и {cardinal(minute)}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"трети декември", "пети март две хиляди двайсет и четвърта година"."""
    words = f"{ordinal(day)} {MONTHS[month - 1]}"
    if year is None:
        return words
    return f"{words} {ordinal(year, 'а')}" + ("" if ctx.after == "година" else " година")


def _year(value: int, ctx: Context) -> str:
    return ordinal(value, "а")


_YEAR_ABBR_RE = re.compile(r"(?<=\d) ?г\.(?P<end>\s*$)?")
_VAV_RE = re.compile(r"(?<!\w)([вВ]) (?=[вфВФ])")


def _prepare(text: str) -> str:
    """"2024 г." -> "2024 година" (a sentence-final abbreviation keeps its full stop)."""
    return _YEAR_ABBR_RE.sub(lambda m: " година" + ("." if m.group("end") is not None else "")
                             + (m.group("end") or ""), text)


def _finish(text: str) -> str:
    """"в втори" -> "във втори": the preposition as it is said."""
    return _VAV_RE.sub(lambda m: m.group(1) + "ъв ", text)


RULES = Language(
    code="bg", decimal_word="цяло и", minus_word="минус", plus_word="плюс", and_word="и",
    range_word="до", range_before="от", months=MONTHS, space_thousands=True,
    abbreviations={
        "напр.": "например", "т.е.": "тоест", "т. е.": "тоест", "и т.н.": "и така нататък",
        "ул.": "улица", "тел.": "телефон", "бл.": "блок", "гр.": "град", "ок.": "около",
        "макс.": "максимум", "прибл.": "приблизително",
    },
    date_before=r"на|до|от|На|До|От",
    year_before=r"през|През",
    year_after=r"[ \t]+година\b",
    per_words=r"на|за",
    number_abbreviations=(frozenset({"№"}), "номер"),
    ordinal_suffix=r"-[врмт]?(?:ият|ия|ата|ото|а|о|и)",
    time_suffix=r"ч(?:\.(?=\s+[а-я]))?(?!\w)",  # "в 8:30 ч." is said "в осем и трийсет"
    hour_abbr=r"h|ч\.?", minute_abbr=r"min|мин\.?", second_abbr=r"s|сек\.?|с",
    unit_aliases=UNIT_ALIASES, units=UNITS, currencies=CURRENCIES,
    currency_symbols={"лв.": "BGN", "лв": "BGN"},
    cardinal_words=cardinal,
    decimal_words=_decimal,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    year_in_context=_year,
    prepare=_prepare,
    finish=_finish,
)
