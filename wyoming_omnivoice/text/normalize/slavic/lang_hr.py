"""Croatian: "jedna lampa", "dvije lampe", "dva senzora", "pet lampi", "dvadeset jedan
stupanj", "dvadeset jedan zarez pet stupnjeva", "na jednu minutu", "u sedam sati", "u
četrnaest i trideset", "trećeg prosinca", "na drugom katu", "tisuću devetsto devedeset
devete godine".

The last digit decides the noun's form (`slavic.last_digit_form`): 1 (and 21, 31 ...) the
nominative singular, 2-4 the genitive singular ("dva stupnja", "dvije minute"), 5 and up,
11-14 the genitive plural ("pet stupnjeva"); after a decimal the noun follows the
last number said ("zarez pet stupnjeva", "zarez četiri kilovatsata"). The numeral agrees with the
noun's gender ("jedan/jedna/jedno", "dva/dvije") and, for 1, with the preposition's case
("na jednu minutu", "do jednog stupnja"). num2words has no Croatian, so `cardinal` and
`ordinal` are ours. Years are ordinals in Croatian ("1999. godine": "tisuću devetsto
devedeset devete godine"), as is a date's year ("petog ožujka dvije tisuće dvadeset
četvrte").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("siječnja", "veljače", "ožujka", "travnja", "svibnja", "lipnja", "srpnja",
          "kolovoza", "rujna", "listopada", "studenoga", "prosinca")

_ONES = ("nula", "jedan", "dva", "tri", "četiri", "pet", "šest", "sedam", "osam", "devet")
_TEENS = ("deset", "jedanaest", "dvanaest", "trinaest", "četrnaest", "petnaest", "šesnaest",
          "sedamnaest", "osamnaest", "devetnaest")
_TENS = ("", "", "dvadeset", "trideset", "četrdeset", "pedeset", "šezdeset", "sedamdeset",
         "osamdeset", "devedeset")
_HUNDREDS = ("", "sto", "dvjesto", "tristo", "četiristo", "petsto", "šeststo", "sedamsto",
             "osamsto", "devetsto")


def _below_thousand(value: int) -> list[str]:
    hundreds, rest = divmod(value, 100)
    words = [_HUNDREDS[hundreds]] if hundreds else []
    if 10 <= rest < 20:
        words.append(_TEENS[rest - 10])
    else:
        tens, unit = divmod(rest, 10)
        if tens:
            words.append(_TENS[tens])
        if unit:
            words.append(_ONES[unit])
    return words


def _scale(count: int, one: str, few: str, many: str, feminine: bool) -> list[str]:
    """"tisuću", "dvije tisuće", "pet tisuća", "dvadeset jedna tisuća"; "dva milijuna"."""
    if count == 1:
        return [one]
    words = _below_thousand(count)
    if feminine:
        words[-1] = {"jedan": "jedna", "dva": "dvije"}.get(words[-1], words[-1])
    form = S.last_digit_form(Num(False, str(count), ""))
    noun = {S.ONE: "tisuća" if feminine else one, S.FEW: few}.get(form, many)
    return [*words, noun]


def cardinal(value: int) -> str:
    """"dvadeset jedan", "tisuću trinaest", "dvije tisuće četiristo", "dva milijuna"."""
    if value == 0:
        return "nula"
    if value >= 10**9:
        return " ".join(_ONES[int(d)] for d in str(value))
    millions, rest = divmod(value, 10**6)
    thousands, rest = divmod(rest, 1000)
    words: list[str] = []
    if millions:
        words += _scale(millions, "milijun", "milijuna", "milijuna", False)
    if thousands:
        words += _scale(thousands, "tisuću", "tisuće", "tisuća", True)
    return " ".join(words + _below_thousand(rest))


N.own_cardinals("hr", cardinal)


_n = S.noun  # (gender, one, few, many, fraction, acc="", tail="")

UNITS = {
    "°C": _n("m", "stupanj", "stupnja", "stupnjeva", "stupnjeva", tail="Celzija"),
    "°F": _n("m", "stupanj", "stupnja", "stupnjeva", "stupnjeva", tail="Fahrenheita"),
    "°": _n("m", "stupanj", "stupnja", "stupnjeva", "stupnjeva"),
    "%": _n("m", "posto", "posto", "posto", "posto"),  # "jedan posto", "dva posto"
    "km/h": _n("m", "kilometar", "kilometra", "kilometara", "kilometara", tail="na sat"),
    "m/s": _n("m", "metar", "metra", "metara", "metara", tail="u sekundi"),
    "mph": _n("f", "milja", "milje", "milja", "milja", "milju", tail="na sat"),
    "kWh": _n("m", "kilovatsat", "kilovatsata", "kilovatsati", "kilovatsati"),
    "kW": _n("m", "kilovat", "kilovata", "kilovata", "kilovata"),
    "W": _n("m", "vat", "vata", "vata", "vata"),
    "V": _n("m", "volt", "volta", "volti", "volti"),
    "hPa": _n("m", "hektopaskal", "hektopaskala", "hektopaskala", "hektopaskala"),
    "km": _n("m", "kilometar", "kilometra", "kilometara", "kilometara"),
    "cm": _n("m", "centimetar", "centimetra", "centimetara", "centimetara"),
    "mm": _n("m", "milimetar", "milimetra", "milimetara", "milimetara"),
    "m": _n("m", "metar", "metra", "metara", "metara"),
    "kg": _n("m", "kilogram", "kilograma", "kilograma", "kilograma"),
    "g": _n("m", "gram", "grama", "grama", "grama"),
    "ml": _n("f", "mililitra", "mililitre", "mililitara", "mililitara", "mililitru"),
    "l": _n("f", "litra", "litre", "litara", "litara", "litru"),
    "lx": _n("m", "luks", "luksa", "luksa", "luksa"),
    "ppm": _n("m", "ppm", "ppm", "ppm", "ppm"),
    "µg/m³": _n("m", "mikrogram", "mikrograma", "mikrograma", "mikrograma",
                tail="po kubičnom metru"),
    "dB": _n("m", "decibel", "decibela", "decibela", "decibela"),
    "h": _n("m", "sat", "sata", "sati", "sati"),
    "min": _n("f", "minuta", "minute", "minuta", "minuta", "minutu"),
    "s": _n("f", "sekunda", "sekunde", "sekundi", "sekundi", "sekundu"),
}
CURRENCIES = {
    "EUR": (_n("m", "euro", "eura", "eura", "eura"), _n("m", "cent", "centa", "centi", "centi")),
    "USD": (_n("m", "dolar", "dolara", "dolara", "dolara"),
            _n("m", "cent", "centa", "centi", "centi")),
    "HRK": (_n("f", "kuna", "kune", "kuna", "kuna", "kunu"),
            _n("f", "lipa", "lipe", "lipa", "lipa", "lipu")),
}
NOUNS = S.NounTable([
    "lampa f lampu:acc lampe:nom lampi:gen",
    "žarulja f žarulju:acc žarulje:nom žarulja:gen",
    "utičnica f utičnicu:acc utičnice:nom utičnica:gen",
    "osoba f osobu:acc osobe:nom osoba:gen",
    "kamera f kameru:acc kamere:nom kamera:gen",
    "soba f sobu:acc sobe:nom soba:gen",
    "poruka f poruku:acc poruke:nom poruka:gen",
    "obavijest f obavijesti:gen",
    "minuta f minutu:acc minute:nom",
    "sekunda f sekundu:acc sekunde:nom sekundi:gen",
    "roleta f roletu:acc rolete:nom roleta:gen",
    "svjetlo n svjetla:nom svjetala:gen",
    "okno n okna:nom",
    "ažuriranje n ažuriranja:nom",
    "prozor m prozora:nom prozorima:loc",
    "senzor m senzora:nom",
    "uređaj m uređaja:nom",
    "dan m dana:nom",
    "tjedan m tjedna:nom tjedana:gen",
    "mjesec m mjeseca:nom mjeseci:gen",
    "sat m sata:nom sati:gen",
    "kat m katu:loc kata:nom",
    "prekidač m prekidača:nom",
    "termostat m termostata:nom",
    "zvučnik m zvučnika:nom",
    "korisnik m korisnika:nom korisnici:nom",
    "ventilator m ventilatora:nom",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])

_ACCUSATIVE = frozenset({"na", "za", "kroz"})
_GENITIVE = frozenset({"do", "od", "iz", "oko", "bez", "nakon", "tijekom", "preko"})
_ONE = {("m", "nom"): "jedan", ("f", "nom"): "jedna", ("n", "nom"): "jedno",
        ("m", "acc"): "jedan", ("f", "acc"): "jednu", ("n", "acc"): "jedno",
        ("m", "gen"): "jednog", ("f", "gen"): "jedne", ("n", "gen"): "jednog"}


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _form(num: Num, ctx: Context) -> int:
    if num.fraction:
        # the noun follows the last number said: "dvadeset jedan zarez pet stupnjeva",
        # "dvanaest zarez četiri kilovatsata"
        frac = num.fraction if len(num.fraction) <= 2 and not num.fraction.startswith(
            "0") else num.fraction[-1]
        last = S.last_digit_form(Num(False, frac, ""))
        return S.FEW if last == S.FEW else S.MANY
    form = S.last_digit_form(num)
    if form == S.ONE:  # 1, 21, 31 ...: the case of the preposition before it
        case = _case(ctx.before)
        if case == "gen":
            return S.FEW  # "do jednog stupnja": the genitive singular
        if case == "acc":
            return S.ACCUSATIVE
    return form


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"jedna lampa", "jednu minutu", "dvije lampe", "do jednog stupnja"."""
    known = NOUNS.get(noun)
    if known:
        gender = known[0]
    elif words.rpartition(" ")[2] == "dva" and noun and noun[:1].isalpha():
        # after 2-4 a feminine noun ends in "-e" ("dvije lampe"), a masculine or neuter
        # one in "-a" ("dva korisnika", "dva svjetla")
        gender = "f" if noun.split()[0].lower().endswith("e") else "m"
    else:
        gender = NOUNS.singular_gender(noun, ("a",), ("o", "e")) or "m"
    case = _case(ctx.before) if words.rpartition(" ")[2] == "jedan" else "nom"
    return S.replace_last(words, {"jedan": _ONE[(gender, case)],
                                  "dva": "dvije" if gender == "f" else "dva"})


_ORD_ONES = ("", "prvi", "drugi", "treći", "četvrti", "peti", "šesti", "sedmi", "osmi",
             "deveti")
_ORD_TEENS = ("deseti", "jedanaesti", "dvanaesti", "trinaesti", "četrnaesti", "petnaesti",
              "šesnaesti", "sedamnaesti", "osamnaesti", "devetnaesti")
_ENDINGS = {("m", "nom"): "i", ("m", "acc"): "i", ("m", "gen"): "og", ("m", "loc"): "om",
            ("n", "nom"): "o", ("n", "acc"): "o", ("n", "gen"): "og", ("n", "loc"): "om",
            ("f", "nom"): "a", ("f", "acc"): "u", ("f", "gen"): "e", ("f", "loc"): "oj"}


def ordinal(value: int, gender: str, case: str) -> str:
    """"trećeg", "drugom", "dvadeset prvog", "tisuću devetsto devedeset devete": the
    cardinal with its last word made an ordinal and declined."""
    rest = value % 100
    if rest == 0:
        words = cardinal(value)
        head, _, last = words.rpartition(" ")
        if last.startswith("tisuć"):
            head, last = "", head.replace(" ", "") + "tisuć"  # "dvijetisućiti"
        word = last + ("ti" if last.endswith(("o", "ć")) else "i")
        word = word.replace("ćti", "ćiti")
    else:
        head = cardinal(value - rest) if value >= 100 else ""
        if rest < 10:
            word = _ORD_ONES[rest]
        elif rest < 20:
            word = _ORD_TEENS[rest - 10]
        else:
            tens, unit = divmod(rest, 10)
            word = _TENS[tens] + "i" if not unit else f"{_TENS[tens]} {_ORD_ONES[unit]}"
    ending = _ENDINGS[(gender, case)]
    if word.endswith("ći") and ending[0] == "o" and ending != "oj":
        ending = "e" + ending[1:]  # "trećem", "treće"
    word = word[:-1] + ending
    return f"{head} {word}".strip()


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. kat" -> "drugi kat", "na 2. katu" -> "na drugom katu"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"u sedam sati", "u jedan sat", "u dva sata", "u četrnaest i trideset", "u ponoć"."""
    if minute > 0:
        return f"{cardinal(hour)} i {cardinal(minute)}"
    if hour == 0:
        return "ponoć"
    num = Num(False, str(hour), "")
    noun = UNITS["h"].form(S.last_digit_form(num))
    return f"{cardinal(hour)} {noun}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"trećeg prosinca" (the genitive), "... dvije tisuće dvadeset četvrte" (the year too
    is an ordinal in the genitive)."""
    words = f"{ordinal(day, 'm', 'gen')} {MONTHS[month - 1]}"
    return words + (f" {ordinal(year, 'f', 'gen')}" if year is not None else "")


def _today(day: int, month: int, year: int | None) -> str:
    """"Danas je peti ožujka (dvije tisuće dvadeset četvrte)": which day it is."""
    words = f"{ordinal(day, 'm', 'nom')} {MONTHS[month - 1]}"
    return words + (f" {ordinal(year, 'f', 'gen')}" if year is not None else "")


_TODAY = S.today_date("[Dd]anas|[Ss]utra|[Jj]učer", MONTHS, _today)
_YEAR_RE = re.compile(
    r"(?<![\w.,])(?P<y>1[1-9]\d\d|20\d\d)\.? (?P<g>godine|godini|godina|godinu)\b")
_YEAR_CASE = {"godine": "gen", "godini": "loc", "godina": "nom", "godinu": "acc"}
_SPACED_DATE_RE = re.compile(r"(?<![\w.])(\d{1,2})\. ?(\d{1,2})\. ?(\d{4})\.?(?!\d)")
_DAY_RANGE = S.day_range("[oO]d", "do", MONTHS, lambda d: ordinal(d, "m", "gen"))


def _prepare(text: str) -> str:
    """"1999. godine" -> the ordinal year; "5. 3. 2024." -> "5.3.2024" for the date pass;
    "od 1. do 3. prosinca"."""
    text = _TODAY(text)
    text = _YEAR_RE.sub(lambda m: f"{ordinal(int(m.group('y')), 'f', _YEAR_CASE[m.group('g')])}"
                        f" {m.group('g')}", text)
    text = _SPACED_DATE_RE.sub(
        lambda m: f"{m.group(1)}.{m.group(2)}.{m.group(3)}"
        + ("." if m.group(0).endswith(".") and not text[m.end():].strip() else ""), text)
    return _DAY_RANGE(text)


RULES = Language(
    code="hr", decimal_word="zarez", minus_word="minus", plus_word="plus", and_word="i",
    range_word="do", range_before="od", months=MONTHS, space_thousands=True,
    abbreviations={
        "npr.": "na primjer", "tj.": "to jest", "itd.": "i tako dalje", "tzv.": "takozvani",
        "cca": "cirka", "ul.": "ulica", "tel.": "telefon", "maks.": "maksimalno",
        "sl.": "slično", "god.": "godine",
    },
    date_before=r"do|od|dana|Do|Od",
    per_words=r"na|po|za",
    number_abbreviations=(frozenset({"br.", "Br."}), "broj"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zčćđšž]",
    hour_abbr=r"h|sat|sata|sati", minute_abbr=r"min", second_abbr=r"s|sek",
    units=UNITS, currencies=CURRENCIES, currency_symbols={"kn": "HRK"},
    cardinal_words=cardinal,
    form=_form,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
)
