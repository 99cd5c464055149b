"""Slovene: "ena lučka", "dve lučki" (the dual), "tri lučke", "pet lučk", "trije senzorji",
"enaindvajset stopinj", "enaindvajset celih pet stopinje", "na eno uro", "do petih minut",
"ob sedmih", "ob štirinajstih trideset", "tretjega decembra", "v drugem nadstropju".

Slovene numerals govern their noun by the last two digits (`slavic.dual_form`): 1 the
nominative singular, 2 the dual, 3 and 4 the nominative plural, 5 and up (and every
compound such as "enaindvajset") the genitive plural, a decimal the genitive singular
("1,5 litra"). The numeral agrees with the noun's gender ("en dan", "ena ura", "eno okno";
"dva dneva", "dve uri"; "trije dnevi", "tri ure") and with the preposition's case ("na eno
uro", "do petih minut"). num2words gives the cardinals ("enaindvajset", "dva tisoč") and
the nominative ordinals ("tretji"), which `ordinal` declines ("tretjega"). Clock hours are
said as the locative of the cardinal ("ob sedmih").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("januarja", "februarja", "marca", "aprila", "maja", "junija", "julija", "avgusta",
          "septembra", "oktobra", "novembra", "decembra")


def _n(gender: str, one: str, few: str, many: str, fraction: str, dual: str, acc: str = "",
       tail: str = "") -> Noun:
    return S.noun(gender, one, few, many, fraction, acc, tail, dual)


def _m(stem: str, tail: str = "", soft: str = "") -> Noun:
    """A regular masculine noun: "kilometer" -> kilometra, kilometri, kilometrov."""
    base = stem[:-2] + stem[-1] if stem.endswith("er") else stem
    base += soft
    return _n("m", stem, base + "i", base + ("ev" if soft else "ov"), base + "a",
              base + "a", tail=tail)


def _f(stem: str, tail: str = "") -> Noun:
    """A regular feminine noun in -a: "minuta" -> minuti, minute, minut, minuto."""
    base = stem[:-1]
    return _n("f", stem, base + "e", base, base + "e", base + "i", base + "o", tail)


UNITS = {
    "°C": _n("f", "stopinja", "stopinje", "stopinj", "stopinje", "stopinji", "stopinjo",
             "Celzija"),
    "°F": _n("f", "stopinja", "stopinje", "stopinj", "stopinje", "stopinji", "stopinjo",
             "Fahrenheita"),
    "°": _f("stopinja"),
    "%": _n("m", "odstotek", "odstotki", "odstotkov", "odstotka", "odstotka"),
    "km/h": _m("kilometer", "na uro"),
    "m/s": _m("meter", "na sekundo"),
    "mph": _f("milja", "na uro"),
    "kWh": _n("f", "kilovatna ura", "kilovatne ure", "kilovatnih ur", "kilovatne ure",
              "kilovatni uri", "kilovatno uro"),
    "kW": _m("kilovat"),
    "W": _m("vat"),
    "V": _m("volt"),
    "hPa": _m("hektopaskal"),
    "km": _m("kilometer"),
    "cm": _m("centimeter"),
    "mm": _m("milimeter"),
    "m": _m("meter"),
    "kg": _m("kilogram"),
    "g": _m("gram"),
    "ml": _m("mililiter"),
    "l": _m("liter"),
    "lx": _m("luks"),
    "ppm": _n("m", "ppm", "ppm", "ppm", "ppm", "ppm"),
    "µg/m³": _m("mikrogram", "na kubični meter"),
    "dB": _m("decibel"),
    "h": _f("ura"),
    "min": _f("minuta"),
    "s": _f("sekunda"),
}
CURRENCIES = {
    "EUR": (_n("m", "evro", "evri", "evrov", "evra", "evra"), _m("cent")),
    "USD": (_m("dolar", soft="j"), _m("cent")),
}
_UNIT_CASES = ("nom", "nom", "gen", "gen", "acc", "nom")
NOUNS = S.NounTable([
    "lučka f lučki:nom lučke:nom lučk:gen lučko:acc",
    "luč f luči:nom",
    "svetilka f svetilki:nom svetilke:nom svetilk:gen svetilko:acc",
    "žarnica f žarnici:nom žarnice:nom žarnic:gen žarnico:acc",
    "vtičnica f vtičnici:nom vtičnice:nom vtičnic:gen vtičnico:acc",
    "oseba f osebi:nom osebe:nom oseb:gen osebo:acc",
    "naprava f napravi:nom naprave:nom naprav:gen napravo:acc",
    "kamera f kameri:nom kamere:nom kamer:gen kamero:acc",
    "soba f sobi:nom sobe:nom sob:gen sobo:acc",
    "ura f uri:nom ure:nom ur:gen uro:acc",
    "minuta f minuti:nom minute:nom minut:gen minuto:acc",
    "sekunda f sekundi:nom sekunde:nom sekund:gen sekundo:acc",
    "posodobitev f posodobitvi:nom posodobitev:gen",
    "okno n okni:nom okna:nom oken:gen",
    "obvestilo n obvestili:nom obvestila:nom obvestil:gen",
    "sporočilo n sporočili:nom sporočila:nom sporočil:gen",
    "stikalo n stikali:nom stikala:nom stikal:gen",
    "nadstropje n nadstropji:nom nadstropja:gen nadstropju:loc",
    "senzor m senzorja:nom senzorji:nom senzorjev:gen",
    "dan m dneva:nom dnevi:nom dni:gen dnevu:loc",
    "teden m tedna:nom tedni:nom tednov:gen",
    "mesec m meseca:nom meseci:nom mesecev:gen",
    "ventilator m ventilatorja:nom ventilatorji:nom ventilatorjev:gen",
    "termostat m termostata:nom termostati:nom termostatov:gen",
    "zvočnik m zvočnika:nom zvočniki:nom zvočnikov:gen",
    "uporabnik m uporabnika:nom uporabniki:nom uporabnikov:gen",
    "računalnik m računalnika:nom računalniki:nom računalnikov:gen",
    "aparat m aparata:nom aparati:nom aparatov:gen",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)],
    unit_cases=_UNIT_CASES)

_ACCUSATIVE = frozenset({"na", "za", "čez"})
_GENITIVE = frozenset({"do", "od", "iz", "okoli", "med", "brez", "blizu", "pod"})
_HOUR = frozenset({"ob", "do", "od", "po", "okoli", "pred"})
_ONE = {("m", "nom"): "en", ("f", "nom"): "ena", ("n", "nom"): "eno",
        ("m", "acc"): "en", ("f", "acc"): "eno", ("n", "acc"): "eno",
        ("m", "gen"): "enega", ("f", "gen"): "ene", ("n", "gen"): "enega"}
_OBLIQUE = {"ena": "enih", "dva": "dveh", "dve": "dveh", "tri": "treh", "štiri": "štirih",
            "sedem": "sedmih", "osem": "osmih", "sto": "sto", "tisoč": "tisoč"}


def _oblique(words: str) -> str:
    """The genitive and locative plural of a cardinal: "petih", "dvaindvajsetih",
    "sedmih" ("do petih minut", "ob sedmih"); only the last word changes."""
    head, _, last = words.rpartition(" ")
    new = _OBLIQUE.get(last) or (last + "ih" if last.endswith(("t", "st")) else last)
    return f"{head} {new}" if head else new


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _form(num: Num, ctx: Context) -> int:
    form = S.dual_form(num)
    case = _case(ctx.before)
    if case == "gen" and form != S.FRACTION:
        return S.FRACTION if form == S.ONE else S.MANY  # "do ene ure", "do petih minut"
    return S.ACCUSATIVE if form == S.ONE and case == "acc" else form


def _decimal(num: Num) -> str:
    """"ena cela pet", "dve celi pet", "tri cele pet", "enaindvajset celih pet": the whole
    part counts "cela" (feminine)."""
    whole = Num(False, num.integer, "")
    celih = {S.ONE: "cela", S.DUAL: "celi", S.FEW: "cele"}.get(S.dual_form(whole), "celih")
    frac = num.fraction
    frac_words = N.cardinal(int(frac), "sl") if len(frac) <= 2 and not frac.startswith(
        "0") else N.digits(frac, "sl")
    whole_words = N.cardinal(int(num.integer), "sl") if int(num.integer) else "nič"
    return f"{whole_words} {celih} {frac_words}"


def _guess_gender(noun: str | None, last: str) -> str | None:
    """The gender of a noun not in the table, from the ending of the form the numeral
    governs: after 1 the nominative singular ("-a" feminine, "-o"/"-e" neuter), after 2 the
    dual ("dva uporabnika", "dve napravi"), after 3 and 4 the plural ("trije uporabniki",
    "tri naprave", "tri okna")."""
    if not noun or not noun[:1].isalpha():
        return None
    word = noun.split()[0].lower()
    if last in ("dva", "dve"):
        return "m" if word.endswith("a") else "f" if word.endswith("i") else None
    if last in ("tri", "štiri"):
        if word.endswith("i") and not word.endswith(("či", "ari", "osti")):
            return "m"  # "uporabniki", "grelci"; not the feminine "luči", "stvari"
        return "f" if word.endswith("e") else "n" if word.endswith("a") else None
    return NOUNS.singular_gender(noun, ("a",), ("o", "e"))


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"en dan", "eno uro", "dva senzorja", "trije senzorji", "do petih minut"."""
    known = NOUNS.get(noun)
    head, _, last = words.rpartition(" ")
    gender = known[0] if known else _guess_gender(noun, last)
    if gender is None:
        return words
    case = _case(ctx.before)
    if case == "gen":
        new = _ONE[(gender, "gen")] if last == "ena" else _oblique(last)
    elif last == "ena":
        new = _ONE.get((gender, case), last)
    elif last in ("dve", "dva"):
        new = "dva" if gender == "m" else "dve"
    elif last in ("tri", "štiri") and gender == "m" and case == "nom":
        new = {"tri": "trije", "štiri": "štirje"}[last]
    else:
        new = last
    return f"{head} {new}" if head else new


def ordinal(value: int, gender: str, case: str) -> str:
    """num2words' ordinal declined: "tretjega", "drugem", "prva"; the last word takes the
    ending ("enaindvajsetega")."""
    words = N.ordinal(value, "sl")
    ending = {("m", "nom"): "i", ("m", "acc"): "i", ("m", "gen"): "ega", ("m", "loc"): "em",
              ("n", "nom"): "o", ("n", "acc"): "o", ("n", "gen"): "ega", ("n", "loc"): "em",
              ("f", "nom"): "a", ("f", "acc"): "o", ("f", "gen"): "e", ("f", "loc"): "i"}
    if not words.endswith("i"):
        return words
    end = ending[(gender, case)]
    if gender == "n" and end == "o" and words.endswith(("ji", "či", "ši", "ži", "ci")):
        end = "e"  # "tretje nadstropje", as after every soft consonant
    return words[:-1] + end


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. nadstropje" -> "drugo nadstropje", "v 2. nadstropju" -> "v drugem nadstropju"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"ob sedmih", "do sedmih", "ob štirinajstih trideset"; without a preposition
    "sedem", "štirinajst trideset"."""
    minutes = "" if minute <= 0 else (" nič " if minute < 10 else " ") + N.cardinal(
        minute, "sl")
    if ctx.before.lower() in _HOUR:
        if hour == 0:
            return "polnoči" if not minutes else "nič" + minutes
        return _oblique(N.cardinal(hour, "sl")) + minutes
    return ("nič" if hour == 0 else N.cardinal(hour, "sl")) + minutes


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"tretjega decembra" (a date is said in the genitive), "... dva tisoč štiriindvajset"."""
    words = f"{ordinal(day, 'm', 'gen')} {MONTHS[month - 1]}"
    return words + (f" {N.cardinal(year, 'sl')}" if year is not None else "")


NOMINATIVE_MONTHS = ("januar", "februar", "marec", "april", "maj", "junij", "julij",
                     "avgust", "september", "oktober", "november", "december")


def _today(day: int, month: int, year: int | None) -> str:
    """"Danes je peti marec (dva tisoč štiriindvajset)": which day it is, in the nominative."""
    words = f"{ordinal(day, 'm', 'nom')} {NOMINATIVE_MONTHS[month - 1]}"
    return words + (f" {N.cardinal(year, 'sl')}" if year is not None else "")


_TODAY = S.today_date("[Dd]anes|[Jj]utri|[Vv]čeraj", NOMINATIVE_MONTHS, _today)
_DAY_RANGE = S.day_range("[oO]d", "do", MONTHS, lambda d: ordinal(d, "m", "gen"))
_SPACED_DATE_RE = re.compile(r"(?<![\w.])(\d{1,2})\. (\d{1,2})\. (\d{4})(?!\d)")


def _prepare(text: str) -> str:
    """"5. 3. 2024" (as Slovenes write it) -> "5.3.2024" for the date pass; then the day
    ranges ("od 1. do 3. decembra"); first the date that says which day it is ("Danes je
    peti marec")."""
    return _DAY_RANGE(_SPACED_DATE_RE.sub(r"\1.\2.\3", _TODAY(text)))


RULES = Language(
    code="sl", decimal_word="vejica", minus_word="minus", plus_word="plus", and_word="in",
    range_word="do", range_before="od", months=MONTHS, space_thousands=True,
    currency_and="in",
    abbreviations={
        "npr.": "na primer", "itd.": "in tako dalje", "oz.": "oziroma",
        "t. i.": "tako imenovani", "pribl.": "približno", "ul.": "ulica", "tel.": "telefon",
        "ca.": "cirka", "maks.": "največ",
    },
    date_before=r"do|od|z|dne|Do|Od",
    year_before=r"leta|leto|Leta|letu",
    per_words=r"na|za",
    number_abbreviations=(frozenset({"št.", "Št."}), "številka"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zčšž]",
    hour_abbr=r"h|ur\.?", minute_abbr=r"min", second_abbr=r"s|sek",
    units=UNITS, currencies=CURRENCIES,
    decimal_words=_decimal,
    form=_form,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
)
