"""Slovak: "dve lampy", "jedna lampa", "na jednu hodinu", "päť stupňov", "dvadsaťdva
stupňov", "dvadsaťjeden celých päť stupňa", "o siedmej", "o štrnástej tridsať",
"tretieho decembra", "na druhom poschodí", "dvadsaťtri eur päťdesiat centov".

As in Czech (`slavic`): 1 takes the nominative singular, 2-4 the nominative plural, 5 and up
the genitive plural, a decimal the genitive singular; the numeral agrees with the noun's
gender ("dve lampy", "dva senzory") and the preposition's case ("na jednu hodinu").
Unlike Czech, a compound numeral written as one word ("dvadsaťdva") takes the genitive
plural whatever its last digit ("dvadsaťdva stupňov"). num2words writes the cardinals as
Slovak does, in one word; we only set "tisíc" and "milión" apart ("dvetisíc štyristo") so
long numbers stay readable. num2words has no Slovak ordinals, so `ordinal` builds them.
Clock hours after "o", "do", "od" are feminine ordinals, as Slovaks say them ("o siedmej").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("januára", "februára", "marca", "apríla", "mája", "júna", "júla", "augusta",
          "septembra", "októbra", "novembra", "decembra")

_n = S.noun  # (gender, one, few, many, fraction, acc="", tail="")

UNITS = {
    "°C": _n("m", "stupeň", "stupne", "stupňov", "stupňa", tail="Celzia"),
    "°F": _n("m", "stupeň", "stupne", "stupňov", "stupňa", tail="Fahrenheita"),
    "°": _n("m", "stupeň", "stupne", "stupňov", "stupňa"),
    "%": _n("n", "percento", "percentá", "percent", "percenta"),
    "km/h": _n("m", "kilometer", "kilometre", "kilometrov", "kilometra", tail="za hodinu"),
    "m/s": _n("m", "meter", "metre", "metrov", "metra", tail="za sekundu"),
    "mph": _n("f", "míľa", "míle", "míľ", "míle", "míľu", tail="za hodinu"),
    "kWh": _n("f", "kilowatthodina", "kilowatthodiny", "kilowatthodín", "kilowatthodiny",
              "kilowatthodinu"),
    "kW": _n("m", "kilowatt", "kilowatty", "kilowattov", "kilowattu"),
    "W": _n("m", "watt", "watty", "wattov", "wattu"),
    "V": _n("m", "volt", "volty", "voltov", "voltu"),
    "hPa": _n("m", "hektopascal", "hektopascaly", "hektopascalov", "hektopascalu"),
    "km": _n("m", "kilometer", "kilometre", "kilometrov", "kilometra"),
    "cm": _n("m", "centimeter", "centimetre", "centimetrov", "centimetra"),
    "mm": _n("m", "milimeter", "milimetre", "milimetrov", "milimetra"),
    "m": _n("m", "meter", "metre", "metrov", "metra"),
    "kg": _n("m", "kilogram", "kilogramy", "kilogramov", "kilogramu"),
    "g": _n("m", "gram", "gramy", "gramov", "gramu"),
    "ml": _n("m", "mililiter", "mililitre", "mililitrov", "mililitra"),
    "l": _n("m", "liter", "litre", "litrov", "litra"),
    "lx": _n("m", "lux", "luxy", "luxov", "luxu"),
    "ppm": _n("m", "ppm", "ppm", "ppm", "ppm"),
    "µg/m³": _n("m", "mikrogram", "mikrogramy", "mikrogramov", "mikrogramu",
                tail="na meter kubický"),
    "dB": _n("m", "decibel", "decibely", "decibelov", "decibelu"),
    "h": _n("f", "hodina", "hodiny", "hodín", "hodiny", "hodinu"),
    "min": _n("f", "minúta", "minúty", "minút", "minúty", "minútu"),
    "s": _n("f", "sekunda", "sekundy", "sekúnd", "sekundy", "sekundu"),
}
CURRENCIES = {
    "EUR": (_n("n", "euro", "eurá", "eur", "eura"), _n("m", "cent", "centy", "centov", "centa")),
    "USD": (_n("m", "dolár", "doláre", "dolárov", "dolára"),
            _n("m", "cent", "centy", "centov", "centa")),
    "CZK": (_n("f", "koruna", "koruny", "korún", "koruny", "korunu"),
            _n("m", "halier", "haliere", "halierov", "haliera")),
}
NOUNS = S.NounTable([
    "lampa f lampu:acc lámp:gen lampy:nom",
    "žiarovka f žiarovku:acc žiaroviek:gen žiarovky:nom",
    "zásuvka f zásuvku:acc zásuviek:gen zásuvky:nom",
    "roleta f roletu:acc roliet:gen rolety:nom",
    "osoba f osobu:acc osôb:gen osoby:nom",
    "správa f správu:acc správ:gen správy:nom",
    "kamera f kameru:acc kamier:gen kamery:nom",
    "miestnosť f miestností:gen miestnosti:nom",
    "batéria f batériu:acc batérií:gen batérie:nom",
    "hodina f hodinu:acc hodín:gen hodiny:nom hodine:loc",
    "minúta f minútu:acc minút:gen minúty:nom",
    "sekunda f sekundu:acc sekúnd:gen sekundy:nom",
    "práčka f práčku:acc práčok:gen práčky:nom",
    "scéna f scénu:acc scén:gen scény:nom",
    "zóna f zónu:acc zón:gen zóny:nom",
    "aktualizácia f aktualizáciu:acc aktualizácií:gen aktualizácie:nom",
    "kúpeľňa f kúpeľňu:acc kúpeľní:gen kúpeľne:nom",
    "spálňa f spálňu:acc spální:gen spálne:nom",
    "noc f nocí:gen noci:nom",
    "žalúzia f žalúziu:acc žalúzií:gen žalúzie:nom",
    "svetlo n svetiel:gen svetlá:nom",
    "okno n okien:gen okná:nom",
    "zariadenie n zariadení:gen zariadenia:nom",
    "oznámenie n oznámení:gen oznámenia:nom",
    "upozornenie n upozornení:gen upozornenia:nom",
    "poschodie n poschodí:gen poschodia:nom",
    "percento n percent:gen percentá:nom",
    "senzor m senzorov:gen senzory:nom",
    "snímač m snímačov:gen snímače:nom",
    "deň m dní:gen dni:nom dňa:gen",
    "týždeň m týždňov:gen týždne:nom",
    "mesiac m mesiacov:gen mesiace:nom",
    "rok m rokov:gen roky:nom roku:loc",
    "vypínač m vypínačov:gen vypínače:nom",
    "ventilátor m ventilátorov:gen ventilátory:nom",
    "termostat m termostatov:gen termostaty:nom",
    "reproduktor m reproduktorov:gen reproduktory:nom",
    "zámok m zámkov:gen zámky:nom",
    "budík m budíkov:gen budíky:nom",
    "jazyk m jazykov:gen jazyky:nom",
    "spotrebič m spotrebičov:gen spotrebiče:nom",
    "stupeň m stupňov:gen stupne:nom",
    "pokus m pokusov:gen pokusy:nom",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])

_ACCUSATIVE = frozenset({"na", "za", "cez", "o"})
_GENITIVE = frozenset({"do", "od", "z", "zo", "okolo", "počas", "bez", "u", "podľa", "vyše"})
_ONE = {("m", "nom"): "jeden", ("f", "nom"): "jedna", ("n", "nom"): "jedno",
        ("m", "acc"): "jeden", ("f", "acc"): "jednu", ("n", "acc"): "jedno",
        ("m", "gen"): "jedného", ("f", "gen"): "jednej", ("n", "gen"): "jedného"}
_GENITIVE_ONES = ("", "jeden", "dvoch", "troch", "štyroch", "piatich", "šiestich",
                  "siedmich", "ôsmich", "deviatich")
_GENITIVE_TEENS = ("desiatich", "jedenástich", "dvanástich", "trinástich", "štrnástich",
                   "pätnástich", "šestnástich", "sedemnástich", "osemnástich",
                   "devätnástich")
_GENITIVE_TENS = ("", "", "dvadsiatich", "tridsiatich", "štyridsiatich", "päťdesiatich",
                  "šesťdesiatich", "sedemdesiatich", "osemdesiatich", "deväťdesiatich")


def _genitive(value: int) -> str | None:
    """The genitive of a cardinal from 2 to 99, written apart as Slovak does in the oblique
    cases: "piatich", "dvadsiatich dvoch" ("do dvadsiatich dvoch stupňov"); None above and
    for 21, 31 ... (whose oblique forms we are not sure of: left in the nominative)."""
    if not 2 <= value < 100 or (value > 20 and value % 10 == 1):
        return None
    if value < 10:
        return _GENITIVE_ONES[value]
    if value < 20:
        return _GENITIVE_TEENS[value - 10]
    tens, unit = divmod(value, 10)
    return _GENITIVE_TENS[tens] + (f" {_GENITIVE_ONES[unit]}" if unit else "")
_APART_RE = re.compile(r"((?>tisíc|miliónov|milióny|milión))(?=\w)")


def _cardinal(value: int) -> str:
    """num2words' Slovak cardinal with "tisíc" and "milión" set apart: "dvetisíc štyristo"."""
    return _APART_RE.sub(r"\1 ", N.cardinal(value, "sk"))


def _count(num: Num) -> int:
    """`slavic.count_form`, but a one-word compound from 21 up takes the genitive plural."""
    form = S.count_form(num)
    if form in (S.ONE, S.FEW) and int(num.integer) > 20:
        return S.MANY
    return form


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _form(num: Num, ctx: Context) -> int:
    form = _count(num)
    case = _case(ctx.before)
    if case == "gen" and form != S.FRACTION:
        return S.FRACTION if form == S.ONE else S.MANY  # "do jedného stupňa", "do piatich"
    return S.ACCUSATIVE if form == S.ONE and case == "acc" else form


def _decimal(num: Num) -> str:
    """"jedna celá päť", "dve celé päť", "päť celých päť", "dvadsaťjeden celých päť": the
    whole part counts "celá" (feminine)."""
    whole = int(num.integer)
    words = {1: "jedna", 2: "dve"}.get(whole) or _cardinal(whole)
    form = _count(Num(False, num.integer, ""))
    celá = "celá" if form == S.ONE or whole == 0 else "celé" if form == S.FEW else "celých"
    frac = num.fraction
    frac_words = _cardinal(int(frac)) if len(frac) <= 2 and not frac.startswith(
        "0") else N.digits(frac, "sk")
    return f"{words} {celá} {frac_words}"


#: Men counted in the nominative plural take "dvaja", "traja", "štyria" ("dvaja ľudia").
_ANIMATE = frozenset({"ľudia", "používatelia", "muži", "členovia", "hostia", "obyvatelia",
                      "návštevníci", "susedia", "chlapci"})
_ANIMATE_NUMERALS = {"dva": "dvaja", "tri": "traja", "štyri": "štyria"}


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"jedna lampa", "jednu hodinu", "dve svetlá", "do piatich minút", "dvaja ľudia"."""
    if noun and noun.split()[0].lower() in _ANIMATE and words in _ANIMATE_NUMERALS:
        return _ANIMATE_NUMERALS[words]
    known = NOUNS.get(noun)
    gender = known[0] if known else (
        NOUNS.singular_gender(noun, ("a", "ia"), ("o", "ie")) if words == "jeden" else None
    ) or "m"
    case = _case(ctx.before)
    if words == "jeden":
        return _ONE.get((gender, case), words)
    if case == "gen":
        return _genitive(int(num.integer)) or words
    if words == "dva" and (gender in ("f", "n") or (
            not known and _feminine_or_neuter_plural(noun))):
        return "dve"
    return words


def _feminine_or_neuter_plural(noun: str | None) -> bool:
    """Whether a noun outside the table, in the form after 2-4, is feminine or neuter:
    "-á", "-a" ("dve svietidlá", "dve zariadenia"), "-ky", "-ie", "-ce" ("dve čističky",
    "dve batérie"); masculine nouns in "-y" and "-e" ("dva senzory", "dva ohrievače")
    are most others."""
    if not noun or not noun[:1].isalpha():
        return False
    word = noun.split()[0].lower()
    return word.endswith(("á", "a", "ky", "ie", "ce")) and not word.endswith("ovia")


_UNITS_ORD = ("", "prvý", "druhý", "tretí", "štvrtý", "piaty", "šiesty", "siedmy", "ôsmy",
              "deviaty")
_TEENS_ORD = ("desiaty", "jedenásty", "dvanásty", "trinásty", "štrnásty", "pätnásty",
              "šestnásty", "sedemnásty", "osemnásty", "devätnásty")
_TENS_ORD = ("", "", "dvadsiaty", "tridsiaty", "štyridsiaty", "päťdesiaty", "šesťdesiaty",
             "sedemdesiaty", "osemdesiaty", "deväťdesiaty")
# (gender, case) -> ending after a long vowel ("prvý"), a short one ("piaty"), and "tretí"
_LONG = {("m", "nom"): "ý", ("m", "gen"): "ého", ("m", "loc"): "om", ("m", "acc"): "ý",
         ("f", "nom"): "á", ("f", "gen"): "ej", ("f", "loc"): "ej", ("f", "acc"): "ú",
         ("n", "nom"): "é", ("n", "gen"): "ého", ("n", "loc"): "om", ("n", "acc"): "é"}
_SHORT = {("m", "nom"): "y", ("m", "gen"): "eho", ("m", "loc"): "om", ("m", "acc"): "y",
          ("f", "nom"): "a", ("f", "gen"): "ej", ("f", "loc"): "ej", ("f", "acc"): "u",
          ("n", "nom"): "e", ("n", "gen"): "eho", ("n", "loc"): "om", ("n", "acc"): "e"}
_SOFT = {("m", "nom"): "í", ("m", "gen"): "ieho", ("m", "loc"): "ťom", ("m", "acc"): "í",
         ("f", "nom"): "ia", ("f", "gen"): "ej", ("f", "loc"): "ej", ("f", "acc"): "iu",
         ("n", "nom"): "ie", ("n", "gen"): "ieho", ("n", "loc"): "ťom", ("n", "acc"): "ie"}


def _ordinal_words(value: int) -> list[str]:
    """Nominative masculine ordinal words below 100: "dvadsiaty", "prvý"."""
    if 10 <= value < 20:
        return [_TEENS_ORD[value - 10]]
    tens, unit = divmod(value, 10)
    return [w for w in (_TENS_ORD[tens], _UNITS_ORD[unit]) if w]


def ordinal(value: int, gender: str, case: str) -> str:
    """"druhom", "tretieho", "dvadsiateho prvého", "siedmej"; every word takes the ending."""
    if not 0 < value < 100:
        return _cardinal(value)  # not met in replies; the number
    out = []
    for word in _ordinal_words(value):
        if word == "tretí":
            ending = _SOFT[(gender, case)]
            out.append("tre" + ending if ending.startswith("ť") else "tret" + ending)
        elif word.endswith("ý"):
            out.append(word[:-1] + _LONG[(gender, case)])
        else:
            out.append(word[:-1] + _SHORT[(gender, case)])
    return " ".join(out)


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. poschodie" -> "druhé poschodie", "na 2. poschodí" -> "na druhom poschodí"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    if ctx.before.lower() in ("na", "v", "vo", "po") and case == "gen":
        case = "loc"  # "poschodí" is also the locative
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"o siedmej", "do siedmej", "o štrnástej tridsať"; without a preposition "sedem
    hodín", "štrnásť tridsať"."""
    minutes = "" if minute <= 0 else (" nula " if minute < 10 else " ") + _cardinal(minute)
    if ctx.before.lower() in ("o", "do", "od", "po", "okolo", "pred"):
        if hour == 0:
            return "polnoci" if not minutes else "nula" + minutes
        return ("jednej" if hour == 1 else ordinal(hour, "f", "gen")) + minutes
    if minutes:
        return ("nula" if hour == 0 else _agree(
            Num(False, str(hour), ""), _cardinal(hour), "hodina", ctx)) + minutes
    num = Num(False, str(hour), "")
    noun = UNITS["h"].form(_form(num, ctx))
    return f"{_agree(num, _cardinal(hour), noun, ctx)} {noun}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"tretieho decembra" (Slovak says a date in the genitive), "... dvetisíc dvadsaťštyri"."""
    words = f"{ordinal(day, 'm', 'gen')} {MONTHS[month - 1]}"
    return words + (f" {_cardinal(year)}" if year is not None else "")


_VO_RE = re.compile(r"\b([vV]) (?=v|f|štvrt)")


_TIMES_RE = re.compile(r"(?<![\w.,])(\d{1,3})-?krát\b")


def _finish(text: str) -> str:
    """"v štvrtom" -> "vo štvrtom": the preposition as it is said."""
    return _VO_RE.sub(lambda m: m.group(1) + "o ", text)


_DAY_RANGE = S.day_range("[oO]d", "do", MONTHS, lambda d: ordinal(d, "m", "gen"))


_SPACED_DATE_RE = re.compile(r"(?<![\w.])(\d{1,2})\. ?(\d{1,2})\. ?(\d{4})(?!\d)")


def _prepare(text: str) -> str:
    """"3-krát" -> "trikrát"; "1. 1. 2025" (as Slovak writes a date) -> "1.1.2025" for the
    date pass; then the day ranges ("od 1. do 3. mája")."""
    text = _TIMES_RE.sub(lambda m: _cardinal(int(m.group(1))) + "krát", text)
    text = _SPACED_DATE_RE.sub(lambda m: f"{m.group(1)}.{m.group(2)}.{m.group(3)}", text)
    return _DAY_RANGE(text)

RULES = Language(
    code="sk", decimal_word="celá", minus_word="mínus", plus_word="plus", and_word="a",
    range_word="do", range_before="od", months=MONTHS, space_thousands=True,
    currency_and=" ",
    abbreviations={
        "napr.": "napríklad", "t. j.": "to jest", "tj.": "to jest", "atď.": "a tak ďalej",
        "tzv.": "takzvaný", "cca": "cirka", "ul.": "ulica", "max.": "maximálne",
        "min.": "minimálne", "tel.": "telefón", "hod.": "hodín", "resp.": "respektíve",
    },
    date_before=r"do|od|z|dňa|k|Do|Od",
    year_before=r"roku|rok|Rok",
    per_words=r"za|na",
    number_abbreviations=(frozenset({"č.", "Č."}), "číslo"),
    ordinal_dot=True, ordinal_dot_next=r"[a-záäčďéíĺľňóôŕšťúýž]",
    hour_abbr=r"h|hod\.?", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases={"hod.": "h", "hod": "h", "sek": "s"},
    units=UNITS, currencies=CURRENCIES, currency_symbols={"Kč": "CZK"},
    cardinal_words=_cardinal,
    decimal_words=_decimal,
    form=_form,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
