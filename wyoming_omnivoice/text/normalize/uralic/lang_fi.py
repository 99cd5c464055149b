"""Finnish: "yksi tunti", "viisi astetta", "kaksikymmentäyksi pilkku viisi astetta",
"kello neljätoista kolmekymmentä", "kolmas joulukuuta", "kolmantena joulukuuta",
"toisessa kerroksessa", "kaksikymmentäkolme euroa viisikymmentä senttiä".

After 1 a noun stays in the nominative singular, after any other number (decimals too)
it takes the partitive singular ("kaksi lamppua", "1,5 tuntia"); a unit `Noun` holds
both. Ordinals ("2.") take the case of the noun after them ("toisessa kerroksessa",
"toisen kerroksen"), and a date is said in the essive when it tells when something happens
("kolmantena joulukuuta"), in the nominative after "on" ("tänään on kolmas joulukuuta").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("tammikuuta", "helmikuuta", "maaliskuuta", "huhtikuuta", "toukokuuta",
          "kesäkuuta", "heinäkuuta", "elokuuta", "syyskuuta", "lokakuuta", "marraskuuta",
          "joulukuuta")


def _n(one: str, many: str) -> Noun:
    return Noun("", (one, many))


UNITS = {
    "°C": _n("aste", "astetta"), "°F": _n("fahrenheitaste", "fahrenheitastetta"),
    "°": _n("aste", "astetta"), "%": _n("prosentti", "prosenttia"),
    "km/h": _n("kilometri tunnissa", "kilometriä tunnissa"),
    "mph": _n("maili tunnissa", "mailia tunnissa"),
    "m/s": _n("metri sekunnissa", "metriä sekunnissa"),
    "kWh": _n("kilowattitunti", "kilowattituntia"), "kW": _n("kilowatti", "kilowattia"),
    "W": _n("watti", "wattia"), "V": _n("voltti", "volttia"),
    "hPa": _n("hehtopascal", "hehtopascalia"), "km": _n("kilometri", "kilometriä"),
    "cm": _n("senttimetri", "senttimetriä"), "mm": _n("millimetri", "millimetriä"),
    "m": _n("metri", "metriä"), "kg": _n("kilo", "kiloa"), "g": _n("gramma", "grammaa"),
    "ml": _n("millilitra", "millilitraa"), "l": _n("litra", "litraa"),
    "lx": _n("luksi", "luksia"), "ppm": _n("ppm", "ppm"),
    "µg/m³": _n("mikrogramma kuutiometrissä", "mikrogrammaa kuutiometrissä"),
    "dB": _n("desibeli", "desibeliä"), "h": _n("tunti", "tuntia"),
    "min": _n("minuutti", "minuuttia"), "s": _n("sekunti", "sekuntia"),
}
CURRENCIES = {
    "EUR": (_n("euro", "euroa"), _n("sentti", "senttiä")),
    "USD": (_n("dollari", "dollaria"), _n("sentti", "senttiä")),
    "SEK": (_n("kruunu", "kruunua"), _n("äyri", "äyriä")),
}

# Ordinal parts: nominative, oblique stem (genitive, inessive ...), essive.
_FIRST = {1: ("ensimmäinen", "ensimmäise", "ensimmäisenä"), 2: ("toinen", "toise", "toisena")}
_PARTS = {
    1: ("yhdes", "yhdenne", "yhdentenä"), 2: ("kahdes", "kahdenne", "kahdentena"),
    3: ("kolmas", "kolmanne", "kolmantena"), 4: ("neljäs", "neljänne", "neljäntenä"),
    5: ("viides", "viidenne", "viidentenä"), 6: ("kuudes", "kuudenne", "kuudentena"),
    7: ("seitsemäs", "seitsemänne", "seitsemäntenä"),
    8: ("kahdeksas", "kahdeksanne", "kahdeksantena"),
    9: ("yhdeksäs", "yhdeksänne", "yhdeksäntenä"),
    10: ("kymmenes", "kymmenenne", "kymmenentenä"),
}
_ENDINGS = {"gen": "n", "ine": "ssa", "ade": "lla", "ela": "sta"}


def _part(entry: tuple[str, str, str], case: str) -> str:
    nominative, stem, essive = entry
    if case == "nom":
        return nominative
    if case == "ess":
        return essive
    ending = _ENDINGS[case]
    if not any(v in stem for v in "aou"):
        ending = ending.replace("a", "ä")  # vowel harmony
    return stem + ending


def ordinal(value: int, case: str = "nom") -> str:
    """Finnish ordinals 1-99 in a case ("kolmantena", "toisessa",
    "kahdentenakymmenentenäensimmäisenä"); larger ones in num2words' nominative."""
    if not 1 <= value <= 99:
        return str(N.ordinal(value, "fi"))
    tens, unit = divmod(value, 10)
    if value <= 2:
        return _part(_FIRST[value], case)
    if value <= 10:
        return _part(_PARTS[value], case)
    if tens == 1:
        return _part(_PARTS[unit], case) + "toista"  # "kolmastoista", "kolmantenatoista"
    words = (_part(_PARTS[tens], case) + _part(_PARTS[10], case)) if tens > 1 else ""
    if unit:
        words += _part(_FIRST.get(unit) or _PARTS[unit], case)
    return words


def _noun_case(word: str) -> str:
    """The case of the noun after an ordinal, from its ending."""
    word = word.lower()
    if word.endswith(("ssa", "ssä")):
        return "ine"
    if word.endswith(("lla", "llä")):
        return "ade"
    if word.endswith(("sta", "stä")):
        return "ela"
    if word.endswith(("na", "nä")):
        return "ess"
    return "gen" if word.endswith("n") else "nom"


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. kerroksessa" -> "toisessa kerroksessa", "2. kerros" -> "toinen kerros"."""
    return ordinal(value, _noun_case(ctx.after))


# Cardinal parts: the oblique stem that case endings join ("kahde-n", "kolme-ssa").
_CARDINAL_STEMS = {
    "yksi": "yhde", "kaksi": "kahde", "kolme": "kolme", "neljä": "neljä", "viisi": "viide",
    "kuusi": "kuude", "seitsemän": "seitsemä", "kahdeksan": "kahdeksa",
    "yhdeksän": "yhdeksä", "kymmenen": "kymmene", "kymmentä": "kymmene", "sata": "sada",
    "sataa": "sada", "tuhat": "tuhanne", "tuhatta": "tuhanne", "toista": "toista",
}
# ... and the illative, whose stem is strong ("kahteen", "viiteen", "tuhanteen").
_ILLATIVE = {
    "yksi": "yhteen", "kaksi": "kahteen", "kolme": "kolmeen", "neljä": "neljään",
    "viisi": "viiteen", "kuusi": "kuuteen", "seitsemän": "seitsemään",
    "kahdeksan": "kahdeksaan", "yhdeksän": "yhdeksään", "kymmenen": "kymmeneen",
    "kymmentä": "kymmeneen", "sata": "sataan", "sataa": "sataan", "tuhat": "tuhanteen",
    "tuhatta": "tuhanteen", "toista": "toista",
}
_CARDINAL_PART_RE = re.compile("|".join(sorted(_CARDINAL_STEMS, key=len, reverse=True)))
_CASE_ENDINGS = {"gen": "n", "ine": "ssa", "ade": "lla", "tra": "ksi"}
#: Nouns whose nominative ends like a genitive ("1 puhelin" is not "yhden puhelin").
_NOMINATIVE_IN_N = frozenset({"puhelin", "kytkin", "säädin", "ohjain", "avain", "sydän",
                              "laidun", "kaiutin", "jäähdytin", "lämmitin", "imurin"})


def _noun_case_after_number(word: str) -> str:
    """The case of the noun after a cardinal, from its ending ("tunnin" genitive,
    "tunnissa" inessive); "nom" for the nominative/partitive of a count."""
    word = word.lower()
    for case, endings in (("ine", ("ssa", "ssä")), ("ade", ("lla", "llä")),
                          ("tra", ("ksi",)), ("ill", ("seen", "iin"))):
        if word.endswith(endings):
            return case  # not "-sta": "asukasta" is a partitive, not an elative
    if re.search(r"(aa|ää|oo|uu|yy|öö)n$", word):
        return "nom"  # "päivään" (illative) or "asukkaan" (genitive): left as it is
    if word.endswith("n") and word not in _NOMINATIVE_IN_N:
        return "gen"
    return "nom"


def cardinal_case(words: str, case: str) -> str:
    """"kolme" -> "kolmen", "kaksikymmentäviisi" -> "kahdenkymmenenviiden": every part of
    a Finnish cardinal takes the case ending."""
    if case == "nom":
        return words

    def part(m: re.Match[str]) -> str:
        if case == "ill":
            return _ILLATIVE[m.group(0)]
        stem = _CARDINAL_STEMS[m.group(0)]
        if stem == "toista":
            return stem
        ending = _CASE_ENDINGS[case]
        if not any(v in stem for v in "aou"):
            ending = ending.replace("a", "ä")
        return stem + ending

    return _CARDINAL_PART_RE.sub(part, words)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"3 tunnin kuluttua" -> "kolmen tunnin kuluttua", "2 tunnissa" -> "kahdessa
    tunnissa": a cardinal takes the case of the noun after it."""
    if noun is None or not noun[:1].isalpha():
        return words
    return cardinal_case(words, _noun_case_after_number(noun.split()[0]))


_NOMINATIVE_DATE = frozenset({"on", "oli", "tänään", "huomenna", "eilen", "päivämäärä"})


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    case = "nom" if ctx.before.lower() in _NOMINATIVE_DATE or not ctx.before else "ess"
    words = f"{ordinal(day, case)} {MONTHS[month - 1]}"
    return words + (f" {N.cardinal(year, 'fi')}" if year is not None else "")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"kello seitsemän", "kello neljätoista kolmekymmentä", "seitsemän nolla viisi"."""
    hours = N.cardinal(hour, "fi")
    if minute <= 0:
        return hours
    minutes = N.cardinal(minute, "fi")
    return f"{hours} nolla {minutes}" if minute < 10 else f"{hours} {minutes}"


_KLO_RE = re.compile(r"\b([kK])lo\.?(?=\s?\d)")


_KELLO_ON_RE = re.compile(r"\b(?P<is>[kK]ello on)\s+(?P<h>[01]?\d|2[0-3])\.(?P<m>[0-5]\d)\b")


def _prepare(text: str) -> str:
    """"klo 7.30" -> "kello 7.30" (also marks "7.30" as a clock time); "kello on 7.30" ->
    "kello on 7:30"."""
    text = _KLO_RE.sub(lambda m: m.group(1) + "ello", text)
    return _KELLO_ON_RE.sub(lambda m: f"{m.group('is')} {m.group('h')}:{m.group('m')}", text)


RULES = Language(
    code="fi", decimal_word="pilkku", minus_word="miinus", plus_word="plus", and_word="ja",
    range_word="–", months=MONTHS, space_thousands=True, currency_and=" ",
    duration_and=False,
    abbreviations={
        "esim.": "esimerkiksi", "Esim.": "Esimerkiksi", "jne.": "ja niin edelleen",
        "yms.": "ynnä muuta sellaista", "mm.": "muun muassa", "ns.": "niin sanottu",
        "n.": "noin", "noin.": "noin", "ks.": "katso", "puh.": "puhelin", "krs": "kerros",
        "klo": "kello",
    },
    # "21.12." is a date after any word but "kello" (a decimal is written "21,12")
    date_before=r"(?![kK]ello\b)\w+",
    per_words=r"per",
    number_abbreviations=(frozenset({"nro", "Nro", "n:o", "N:o"}), "numero"),
    ordinal_dot=True, ordinal_dot_next=r"[a-zäöå]", dotted_date=True,
    hour_abbr=r"h|t", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases={"t": "h", "sek": "s"},
    time_dot_before=frozenset({"kello", "Kello"}),
    units=UNITS, currencies=CURRENCIES,
    agree=_agree, unit_agree=lambda num, words, noun, ctx: words,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
)
