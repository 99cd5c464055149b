"""Czech: "dvě světla", "jedna lampa", "na jednu hodinu", "pět stupňů", "dvacet jedna
celá pět stupně", "ve čtrnáct třicet", "v sedm hodin", "třetího prosince", "ve druhém
patře", "dvacet tři koruny padesát haléřů".

Like Polish (`slavic`): the numeral agrees with the noun's gender and the case the
preposition governs, units take the form the number governs, and ordinals ("2.") are
adjectives whose ending follows the noun ("ve druhém patře", "druhé patro"). num2words has
no Czech ordinals, so `ordinal` builds them; it writes "čtyřista" and "devětset", which
Czech writes and says as two words.
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("ledna", "února", "března", "dubna", "května", "června", "července", "srpna",
          "září", "října", "listopadu", "prosince")

_n = S.noun  # (gender, one, few, many, fraction, acc="", tail="")

UNITS = {
    "°C": _n("m", "stupeň", "stupně", "stupňů", "stupně", tail="Celsia"),
    "°F": _n("m", "stupeň", "stupně", "stupňů", "stupně", tail="Fahrenheita"),
    "°": _n("m", "stupeň", "stupně", "stupňů", "stupně"),
    "%": _n("n", "procento", "procenta", "procent", "procenta"),
    "km/h": _n("m", "kilometr", "kilometry", "kilometrů", "kilometru", tail="za hodinu"),
    "mph": _n("f", "míle", "míle", "mil", "míle", tail="za hodinu"),
    "m/s": _n("m", "metr", "metry", "metrů", "metru", tail="za sekundu"),
    "kWh": _n("f", "kilowatthodina", "kilowatthodiny", "kilowatthodin", "kilowatthodiny",
              "kilowatthodinu"),
    "kW": _n("m", "kilowatt", "kilowatty", "kilowattů", "kilowattu"),
    "W": _n("m", "watt", "watty", "wattů", "wattu"),
    "V": _n("m", "volt", "volty", "voltů", "voltu"),
    "hPa": _n("m", "hektopascal", "hektopascaly", "hektopascalů", "hektopascalu"),
    "km": _n("m", "kilometr", "kilometry", "kilometrů", "kilometru"),
    "cm": _n("m", "centimetr", "centimetry", "centimetrů", "centimetru"),
    "mm": _n("m", "milimetr", "milimetry", "milimetrů", "milimetru"),
    "m": _n("m", "metr", "metry", "metrů", "metru"),
    "kg": _n("m", "kilogram", "kilogramy", "kilogramů", "kilogramu"),
    "g": _n("m", "gram", "gramy", "gramů", "gramu"),
    "ml": _n("m", "mililitr", "mililitry", "mililitrů", "mililitru"),
    "l": _n("m", "litr", "litry", "litrů", "litru"),
    "lx": _n("m", "lux", "luxy", "luxů", "luxu"),
    "ppm": _n("m", "ppm", "ppm", "ppm", "ppm"),
    "µg/m³": _n("m", "mikrogram", "mikrogramy", "mikrogramů", "mikrogramu",
                tail="na metr krychlový"),
    "dB": _n("m", "decibel", "decibely", "decibelů", "decibelu"),
    "h": _n("f", "hodina", "hodiny", "hodin", "hodiny", "hodinu"),
    "min": _n("f", "minuta", "minuty", "minut", "minuty", "minutu"),
    "s": _n("f", "sekunda", "sekundy", "sekund", "sekundy", "sekundu"),
}
CURRENCIES = {
    "CZK": (_n("f", "koruna", "koruny", "korun", "koruny", "korunu"),
            _n("m", "haléř", "haléře", "haléřů", "haléře")),
    "EUR": (_n("n", "euro", "eura", "eur", "eura"), _n("m", "cent", "centy", "centů", "centu")),
    "USD": (_n("m", "dolar", "dolary", "dolarů", "dolaru"),
            _n("m", "cent", "centy", "centů", "centu")),
}
NOUNS = S.NounTable([
    "lampa f lampu:acc lamp:gen lampy:nom",
    "žárovka f žárovku:acc žárovek:gen žárovky:nom",
    "zásuvka f zásuvku:acc zásuvek:gen zásuvky:nom",
    "roleta f roletu:acc rolet:gen rolety:nom",
    "osoba f osobu:acc osob:gen osoby:nom",
    "zpráva f zprávu:acc zpráv:gen zprávy:nom",
    "kamera f kameru:acc kamer:gen kamery:nom",
    "místnost f místností:gen místnosti:nom",
    "baterie f",
    "hodina f hodinu:acc hodin:gen hodiny:nom hodině:loc",
    "minuta f minutu:acc minut:gen minuty:nom",
    "sekunda f sekundu:acc sekund:gen sekundy:nom",
    "světlo n světel:gen světla:nom",
    "okno n oken:gen okna:nom",
    "zařízení n",
    "oznámení n",
    "upozornění n",
    "patro n pater:gen patra:gen patře:loc",
    "místo n míst:gen místa:nom místě:loc",
    "procento n procent:gen procenta:nom",
    "senzor m senzorů:gen senzory:nom",
    "pokoj m pokojů:gen pokoje:nom pokoji:loc",
    "den m dní:gen dnů:gen dny:nom dne:gen",
    "týden m týdnů:gen týdny:nom",
    "měsíc m měsíců:gen měsíce:nom",
    "rok m let:gen roky:nom roce:loc",
    "vypínač m vypínačů:gen vypínače:nom",
    "ventilátor m ventilátorů:gen ventilátory:nom",
    "termostat m termostatů:gen termostaty:nom",
    "reproduktor m reproduktorů:gen reproduktory:nom",
    "zámek m zámků:gen zámky:nom",
    "spotřebič m spotřebičů:gen spotřebiče:nom",
    "stupeň m stupňů:gen stupně:nom",
    "pokus m pokusů:gen pokusy:nom",
    "pračka f pračku:acc praček:gen pračky:nom",
    "myčka f myčku:acc myček:gen myčky:nom",
    "lednice f lednici:acc lednic:gen",
    "žaluzie f",
    "scéna f scénu:acc scén:gen scény:nom",
    "zóna f zónu:acc zón:gen zóny:nom",
    "aktualizace f",
    "koupelna f koupelnu:acc koupelen:gen koupelny:nom",
    "ložnice f ložnici:acc ložnic:gen",
    "kuchyně f kuchyni:acc kuchyní:gen",
    "noc f noci:gen",
    "zásuvka f",
    "čidlo n čidel:gen čidla:nom",
    "dítě n",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])

_ACCUSATIVE = frozenset({"na", "za", "přes", "o", "v", "ve"})
_GENITIVE = frozenset({"do", "od", "ode", "z", "ze", "kolem", "okolo", "během", "bez",
                       "u", "místo", "podle", "nad"})
_ONE = {("m", "nom"): "jeden", ("f", "nom"): "jedna", ("n", "nom"): "jedno",
        ("m", "acc"): "jeden", ("f", "acc"): "jednu", ("n", "acc"): "jedno",
        ("m", "gen"): "jednoho", ("f", "gen"): "jedné", ("n", "gen"): "jednoho"}
_GENITIVE_WORDS = {
    "dva": "dvou", "dvě": "dvou", "tři": "tří", "čtyři": "čtyř", "pět": "pěti",
    "šest": "šesti", "sedm": "sedmi", "osm": "osmi", "devět": "devíti", "deset": "deseti",
    "jedenáct": "jedenácti", "dvanáct": "dvanácti", "třináct": "třinácti",
    "čtrnáct": "čtrnácti", "patnáct": "patnácti", "šestnáct": "šestnácti",
    "sedmnáct": "sedmnácti", "osmnáct": "osmnácti", "devatenáct": "devatenácti",
    "dvacet": "dvaceti", "třicet": "třiceti", "čtyřicet": "čtyřiceti", "padesát": "padesáti",
    "šedesát": "šedesáti", "sedmdesát": "sedmdesáti", "osmdesát": "osmdesáti",
    "devadesát": "devadesáti", "sto": "sta", "stě": "set", "sta": "set", "set": "set",
    "tisíc": "tisíc", "tisíce": "tisíc", "jedna": "jedné",
}
_HUNDREDS_RE = re.compile(r"\b(dvě|tři|čtyři|pět|šest|sedm|osm|devět)(stě|sta|set)\b")


def _fix_cardinal(words: str) -> str:
    return _HUNDREDS_RE.sub(r"\1 \2", words)  # "čtyřista" -> "čtyři sta"


def _decimal(num: Num) -> str:
    """"jedna celá pět", "dvě celé pět", "pět celých dvacet pět": the whole part agrees
    with "celá" (feminine)."""
    whole = int(num.integer)
    words = S.replace_last(_fix_cardinal(N.cardinal(whole, "cs")), {"dva": "dvě"})
    last = whole % 10 if whole % 100 not in range(11, 20) else 5
    celá = "celá" if last == 1 or whole == 0 else "celé" if last in (2, 3, 4) else "celých"
    frac = num.fraction
    frac_words = N.cardinal(int(frac), "cs") if len(frac) <= 2 and not frac.startswith(
        "0") else N.digits(frac, "cs")
    return f"{words} {celá} {frac_words}"


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    return "gen" if before in _GENITIVE else "nom"


def _form(num: Num, ctx: Context) -> int:
    form = S.count_form(num)
    case = _case(ctx.before)
    if case == "gen" and form != S.FRACTION:
        return S.FRACTION if form == S.ONE else S.MANY  # "do jednoho stupně", "do pěti"
    return S.ACCUSATIVE if form == S.ONE and case == "acc" else form


def genitive(words: str) -> str:
    return " ".join(_GENITIVE_WORDS.get(word, word) for word in words.split())


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"jedna lampa", "jednu hodinu", "dvě světla", "do pěti minut"."""
    known = NOUNS.get(noun)
    gender = known[0] if known else (
        NOUNS.singular_gender(noun, ("a",), ("o", "í")) if words == "jedna" else None) or "m"
    case = _case(ctx.before)
    if words == "jedna":
        return _ONE.get((gender, case), words)
    if case == "gen":
        return genitive(words)
    if gender in ("f", "n"):
        return S.replace_last(words, {"dva": "dvě"})
    return words


_UNITS_ORD = ("", "první", "druhý", "třetí", "čtvrtý", "pátý", "šestý", "sedmý", "osmý",
              "devátý")
_TEENS_ORD = ("desátý", "jedenáctý", "dvanáctý", "třináctý", "čtrnáctý", "patnáctý",
              "šestnáctý", "sedmnáctý", "osmnáctý", "devatenáctý")
_TENS_ORD = ("", "", "dvacátý", "třicátý", "čtyřicátý", "padesátý", "šedesátý",
             "sedmdesátý", "osmdesátý", "devadesátý")


def _ordinal_words(value: int) -> list[str]:
    """Nominative masculine ordinal words below 1000: "dvacátý", "první" ("dvacátý první")."""
    words: list[str] = []
    hundreds, rest = divmod(value, 100)
    if hundreds:
        words.append("stý" if hundreds == 1 else f"{N.cardinal(hundreds, 'cs')}stý"
                     if rest == 0 else _fix_cardinal(N.cardinal(hundreds * 100, "cs")))
    if 10 <= rest < 20:
        words.append(_TEENS_ORD[rest - 10])
    elif rest:
        tens, unit = divmod(rest, 10)
        if tens:
            words.append(_TENS_ORD[tens])
        if unit:
            words.append(_UNITS_ORD[unit])
    return words


_HARD = {("m", "nom"): "ý", ("m", "acc"): "ý", ("m", "gen"): "ého", ("m", "loc"): "ém",
         ("f", "nom"): "á", ("f", "acc"): "ou", ("f", "gen"): "é", ("f", "loc"): "é",
         ("n", "nom"): "é", ("n", "acc"): "é", ("n", "gen"): "ého", ("n", "loc"): "ém"}
_SOFT = {("m", "gen"): "ího", ("m", "loc"): "ím", ("n", "gen"): "ího", ("n", "loc"): "ím"}


def ordinal(value: int, gender: str, case: str) -> str:
    """"druhém", "třetího", "dvacátého prvního"; every ordinal word takes the ending."""
    if value >= 1000:
        return _fix_cardinal(N.cardinal(value, "cs"))  # not met in replies; the number
    out = []
    for word in _ordinal_words(value):
        if word.endswith("ý"):
            out.append(word[:-1] + _HARD[(gender, case)])
        elif word.endswith("í"):
            out.append(word[:-1] + _SOFT.get((gender, case), "í"))
        else:
            out.append(word)
    return " ".join(out)


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. patro" -> "druhé patro", "ve 2. patře" -> "ve druhém patře"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"v sedm hodin", "ve čtrnáct třicet", "v jednu hodinu", "do sedmi hodin"."""
    case = _case(ctx.before)
    if minute <= 0:
        num = Num(False, str(hour), "")
        noun = UNITS["h"].form(_form(num, ctx)) if hour else "hodin"
        return f"{_agree(num, _fix_cardinal(N.cardinal(hour, 'cs')), noun, ctx)} {noun}"
    hours = N.cardinal(hour, "cs") if hour else "nula"
    minutes = N.cardinal(minute, "cs")
    if case == "gen":
        hours, minutes = genitive(hours), genitive(minutes)
    elif hour == 1:
        hours = "jednu" if case == "acc" else "jedna"
    return f"{hours} {'nula ' if minute < 10 else ''}{minutes}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"třetího prosince" (Czech says a date in the genitive), "... dva tisíce dvacet
    čtyři"."""
    words = f"{ordinal(day, 'm', 'gen')} {MONTHS[month - 1]}"
    return words + (f" {_fix_cardinal(N.cardinal(year, 'cs'))}" if year is not None else "")


_VE_RE = re.compile(r"\b([vV]) (?=dv[aěo]|dvan|dvac|druh|tř|čty|čtr|čtv)")


def _finish(text: str) -> str:
    """"v dvě" -> "ve dvě", "v druhém" -> "ve druhém": the preposition as it is said."""
    return _VE_RE.sub(lambda m: m.group(1) + "e ", text)


_DAY_RANGE = S.day_range("[oO]d", "do", MONTHS, lambda d: ordinal(d, "m", "gen"))

RULES = Language(
    code="cs", decimal_word="celá", minus_word="minus", plus_word="plus", and_word="a",
    range_word="do", range_before="od", months=MONTHS, space_thousands=True,
    currency_and=" ",
    grouped_fraction=True, duration_and=True,
    abbreviations={
        "např.": "například", "tj.": "to jest", "atd.": "a tak dále", "tzn.": "to znamená",
        "tzv.": "takzvaný", "cca": "cirka", "ul.": "ulice", "max.": "maximálně",
        "min.": "minimálně", "tel.": "telefon", "hod.": "hodin",
    },
    date_before=r"do|od|z|dne|k|Do|Od",
    per_words=r"za|na",
    number_abbreviations=(frozenset({"č.", "Č."}), "číslo"),
    ordinal_dot=True, ordinal_dot_next=r"[a-záčďéěíňóřšťúůýž]",
    hour_abbr=r"h|hod\.?", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases={"hod.": "h", "hod": "h", "sek": "s"},
    units=UNITS, currencies=CURRENCIES, currency_symbols={"Kč": "CZK"},
    decimal_words=_decimal,
    form=_form,
    agree=_agree,
    fix_cardinal=_fix_cardinal,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_DAY_RANGE,
    finish=_finish,
)
