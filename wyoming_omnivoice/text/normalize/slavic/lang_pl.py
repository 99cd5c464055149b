"""Polish: "dwie lampy", "jedna godzina", "na jedną godzinę", "dwadzieścia jeden stopni",
"o czternastej trzydzieści", "trzeciego grudnia", "na drugim piętrze", "w tysiąc
dziewięćset dziewięćdziesiątym dziewiątym roku", "dwadzieścia trzy złote".

The numeral agrees with the gender of the noun after it and the case the preposition
before it governs (`slavic.NounTable` knows the nouns of Home Assistant replies); units are
read in the form the number governs (`slavic.count_form`). Ordinals, clock hours and days
are adjectives: their ending follows the noun's gender and case ("na drugim piętrze",
"o siódmej", "do trzeciego grudnia").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S
from wyoming_omnivoice.text.normalize.table import Context, Language

MONTHS = ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia",
          "września", "października", "listopada", "grudnia")

_n = S.noun  # (gender, one, few, many, fraction, acc="", tail="")

_GODZINA = ("godzina", "godziny", "godzin", "godziny", "godzinę")
UNITS = {
    "°C": _n("m", "stopień", "stopnie", "stopni", "stopnia", tail="Celsjusza"),
    "°F": _n("m", "stopień", "stopnie", "stopni", "stopnia", tail="Fahrenheita"),
    "°": _n("m", "stopień", "stopnie", "stopni", "stopnia"),
    "%": _n("m", "procent", "procent", "procent", "procent"),
    "km/h": _n("m", "kilometr", "kilometry", "kilometrów", "kilometra", tail="na godzinę"),
    "mph": _n("f", "mila", "mile", "mil", "mili", "milę", tail="na godzinę"),
    "m/s": _n("m", "metr", "metry", "metrów", "metra", tail="na sekundę"),
    "kWh": _n("f", "kilowatogodzina", "kilowatogodziny", "kilowatogodzin",
              "kilowatogodziny", "kilowatogodzinę"),
    "kW": _n("m", "kilowat", "kilowaty", "kilowatów", "kilowata"),
    "W": _n("m", "wat", "waty", "watów", "wata"),
    "V": _n("m", "wolt", "wolty", "woltów", "wolta"),
    "hPa": _n("m", "hektopaskal", "hektopaskale", "hektopaskali", "hektopaskala"),
    "km": _n("m", "kilometr", "kilometry", "kilometrów", "kilometra"),
    "cm": _n("m", "centymetr", "centymetry", "centymetrów", "centymetra"),
    "mm": _n("m", "milimetr", "milimetry", "milimetrów", "milimetra"),
    "m": _n("m", "metr", "metry", "metrów", "metra"),
    "kg": _n("m", "kilogram", "kilogramy", "kilogramów", "kilograma"),
    "g": _n("m", "gram", "gramy", "gramów", "grama"),
    "ml": _n("m", "mililitr", "mililitry", "mililitrów", "mililitra"),
    "l": _n("m", "litr", "litry", "litrów", "litra"),
    "lx": _n("m", "luks", "luksy", "luksów", "luksa"),
    "ppm": _n("m", "ppm", "ppm", "ppm", "ppm"),
    "µg/m³": _n("m", "mikrogram", "mikrogramy", "mikrogramów", "mikrograma",
                tail="na metr sześcienny"),
    "dB": _n("m", "decybel", "decybele", "decybeli", "decybela"),
    "h": _n("f", *_GODZINA),
    "min": _n("f", "minuta", "minuty", "minut", "minuty", "minutę"),
    "s": _n("f", "sekunda", "sekundy", "sekund", "sekundy", "sekundę"),
}
UNIT_ALIASES = {"godz.": "h", "godz": "h", "sek.": "s", "sek": "s"}
CURRENCIES = {
    "PLN": (_n("m", "złoty", "złote", "złotych", "złotego"),
            _n("m", "grosz", "grosze", "groszy", "grosza")),
    "EUR": (_n("n", "euro", "euro", "euro", "euro"),
            _n("m", "cent", "centy", "centów", "centa")),
    "USD": (_n("m", "dolar", "dolary", "dolarów", "dolara"),
            _n("m", "cent", "centy", "centów", "centa")),
    "GBP": (_n("m", "funt", "funty", "funtów", "funta"),
            _n("m", "pens", "pensy", "pensów", "pensa")),
}
# Nouns of Home Assistant replies: lemma, gender, then form:case. Accusative forms that
# equal the nominative are left out, as are cases no numeral or ordinal meets.
NOUNS = S.NounTable([
    "lampa f lampę:acc lamp:gen lampy:nom lampie:loc",
    "żarówka f żarówkę:acc żarówek:gen żarówki:nom",
    "roleta f roletę:acc rolet:gen rolety:nom",
    "osoba f osobę:acc osób:gen osoby:nom",
    "brama f bramę:acc bram:gen bramy:nom",
    "kamera f kamerę:acc kamer:gen kamery:nom",
    "encja f encję:acc encji:gen",
    "automatyzacja f automatyzację:acc automatyzacji:gen",
    "bateria f baterię:acc baterii:gen",
    "noc f nocy:gen noce:nom",
    "wiadomość f wiadomości:nom",
    "pozycja f pozycję:acc pozycji:gen",
    "godzina f godzinę:acc godzin:gen godziny:nom godzinie:loc",
    "minuta f minutę:acc minut:gen minuty:nom",
    "sekunda f sekundę:acc sekund:gen sekundy:nom",
    "światło n świateł:gen światła:nom",
    "okno n okien:gen okna:nom",
    "urządzenie n urządzeń:gen urządzenia:nom",
    "gniazdko n gniazdek:gen gniazdka:nom",
    "powiadomienie n powiadomień:gen powiadomienia:nom",
    "zadanie n zadań:gen zadania:nom",
    "piętro n pięter:gen piętra:gen piętrze:loc",
    "miejsce n miejsc:gen miejsca:nom miejscu:loc",
    "czujnik m czujników:gen czujniki:nom",
    "pokój m pokoi:gen pokoje:nom pokoju:gen",
    "dzień m dni:gen dnia:gen",
    "tydzień m tygodni:gen tygodnie:nom tygodnia:gen",
    "miesiąc m miesięcy:gen miesiące:nom miesiąca:gen",
    "rok m lat:gen lata:nom roku:loc",
    "raz m razy:nom",
    "przełącznik m przełączników:gen przełączniki:nom",
    "wentylator m wentylatorów:gen wentylatory:nom",
    "głośnik m głośników:gen głośniki:nom",
    "termostat m termostatów:gen termostaty:nom",
    "alarm m alarmów:gen alarmy:nom",
    "minutnik m minutników:gen minutniki:nom",
    "timer m timerów:gen timery:nom",
    "element m elementów:gen elementy:nom",
    "zamek m zamków:gen zamki:nom",
    "stopień m stopni:gen stopnie:nom stopnia:gen",
    "procent m",
    "żaluzja f żaluzję:acc żaluzji:gen żaluzje:nom",
    "markiza f markizę:acc markiz:gen markizy:nom",
    "pralka f pralkę:acc pralek:gen pralki:nom",
    "zmywarka f zmywarkę:acc zmywarek:gen zmywarki:nom",
    "lodówka f lodówkę:acc lodówek:gen lodówki:nom",
    "suszarka f suszarkę:acc suszarek:gen suszarki:nom",
    "wtyczka f wtyczkę:acc wtyczek:gen wtyczki:nom",
    "listwa f listwę:acc listew:gen listwy:nom",
    "pompa f pompę:acc pomp:gen pompy:nom",
    "scena f scenę:acc scen:gen sceny:nom",
    "strefa f strefę:acc stref:gen strefy:nom",
    "doba f dobę:acc dób:gen doby:nom",
    "aktualizacja f aktualizację:acc aktualizacji:gen aktualizacje:nom",
    "łazienka f łazienkę:acc łazienek:gen łazienki:nom",
    "sypialnia f sypialnię:acc sypialni:gen sypialnie:nom",
    "kuchnia f kuchnię:acc kuchni:gen kuchnie:nom",
    "gniazdo n gniazd:gen gniazda:nom",
    "pomieszczenie n pomieszczeń:gen pomieszczenia:nom",
    "ostrzeżenie n ostrzeżeń:gen ostrzeżenia:nom",
    "zdarzenie n zdarzeń:gen zdarzenia:nom",
    "mieszkanie n mieszkań:gen mieszkania:nom",
], units=[*UNITS.values(), *(n for pair in CURRENCIES.values() for n in pair)])

_ACCUSATIVE = frozenset({"na", "za", "przez", "w", "Na", "Za", "Przez", "W"})
_GENITIVE = frozenset({"do", "od", "około", "ok", "z", "ze", "bez", "ponad", "powyżej",
                       "poniżej", "sprzed", "u", "dla", "Do", "Od", "Około", "Z", "Bez",
                       "Ponad", "Powyżej", "Poniżej"})
_LOCATIVE = frozenset({"o", "po", "przy", "O", "Po", "Przy"})
_INSTRUMENTAL = frozenset({"przed", "z", "nad", "pod", "między", "Przed"})
_NOMINATIVE_DATE = frozenset({"jest", "to", "był", "będzie", "Dziś", "Dzisiaj", "dziś",
                              "dzisiaj", "Jutro", "jutro", "Wczoraj", "wczoraj"})

_ONE = {  # (gender, case) -> "jeden"
    ("m", "nom"): "jeden", ("m", "acc"): "jeden", ("m", "gen"): "jednego",
    ("m", "loc"): "jednym", ("f", "nom"): "jedna", ("f", "acc"): "jedną",
    ("f", "gen"): "jednej", ("f", "loc"): "jednej", ("n", "nom"): "jedno",
    ("n", "acc"): "jedno", ("n", "gen"): "jednego", ("n", "loc"): "jednym",
}
_GENITIVE_WORDS = {
    "dwa": "dwóch", "dwie": "dwóch", "trzy": "trzech", "cztery": "czterech", "pięć": "pięciu",
    "sześć": "sześciu", "siedem": "siedmiu", "osiem": "ośmiu", "dziewięć": "dziewięciu",
    "dziesięć": "dziesięciu", "jedenaście": "jedenastu", "dwanaście": "dwunastu",
    "trzynaście": "trzynastu", "czternaście": "czternastu", "piętnaście": "piętnastu",
    "szesnaście": "szesnastu", "siedemnaście": "siedemnastu", "osiemnaście": "osiemnastu",
    "dziewiętnaście": "dziewiętnastu", "dwadzieścia": "dwudziestu",
    "trzydzieści": "trzydziestu", "czterdzieści": "czterdziestu",
    "pięćdziesiąt": "pięćdziesięciu", "sześćdziesiąt": "sześćdziesięciu",
    "siedemdziesiąt": "siedemdziesięciu", "osiemdziesiąt": "osiemdziesięciu",
    "dziewięćdziesiąt": "dziewięćdziesięciu", "sto": "stu", "dwieście": "dwustu",
    "trzysta": "trzystu", "czterysta": "czterystu", "pięćset": "pięciuset",
    "sześćset": "sześciuset", "siedemset": "siedmiuset", "osiemset": "ośmiuset",
    "dziewięćset": "dziewięciuset", "tysiąc": "tysiąca", "tysiące": "tysięcy",
}


def _case(before: str) -> str:
    before = before.lower()
    if before in _ACCUSATIVE:
        return "acc"
    if before in _GENITIVE:
        return "gen"
    return "loc" if before in _LOCATIVE else "nom"


def _form(num: Num, ctx: Context) -> int:
    form = S.count_form(num)
    case = _case(ctx.before)
    if case == "gen" and form != S.FRACTION:
        return S.FRACTION if form == S.ONE else S.MANY  # "do jednego stopnia", "od pięciu minut"
    if form == S.ONE and case == "acc":
        return S.ACCUSATIVE
    return form


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """"jedna lampa", "jedną godzinę", "dwie lampy", "od pięciu minut"."""
    known = NOUNS.get(noun)
    gender = known[0] if known else (
        NOUNS.singular_gender(noun, ("a",), ("o", "e", "ę", "um")) if words == "jeden"
        else None) or "m"
    case = _case(ctx.before)
    if words == "jeden":
        if known and not (known[1] == "nom" and case == "gen"):
            case = known[1]  # a singular noun's own form tells the case ("o jeden stopień")
        return _ONE.get((gender, case), words)
    if case == "gen":
        return " ".join(_GENITIVE_WORDS.get(word, word) for word in words.split())
    if gender == "f":
        return S.replace_last(words, {"dwa": "dwie"})
    return words


_ENDINGS = {  # (gender, case) -> adjective ending of a hard stem ("pierwsz-")
    ("m", "nom"): "y", ("m", "acc"): "y", ("m", "gen"): "ego", ("m", "loc"): "ym",
    ("m", "ins"): "ym", ("f", "nom"): "a", ("f", "acc"): "ą", ("f", "gen"): "ej",
    ("f", "loc"): "ej", ("f", "ins"): "ą", ("n", "nom"): "e", ("n", "acc"): "e",
    ("n", "gen"): "ego", ("n", "loc"): "ym", ("n", "ins"): "ym",
}


def _adjective(word: str, gender: str, case: str) -> str:
    """One ordinal word ("drugi", "trzeci", "pierwszy") in a gender and case."""
    ending = _ENDINGS[(gender, case)]
    if ending == "y":
        return word
    if word.endswith(("gi", "ki")):  # "drugi": druga, drugą, drugiej, drugie, drugim
        stem, soft = word[:-1], ending[0] in "ey"
    elif word.endswith("i"):  # "trzeci": trzecia, trzecią, trzeciej, trzecie, trzecim
        stem, soft = word[:-1], True
    elif word.endswith("y"):
        stem, soft = word[:-1], False
    else:
        return word  # a cardinal part of a compound ordinal ("tysiąc", "dwa tysiące")
    if soft:
        ending = "im" if ending == "ym" else "i" + ending
    return stem + ending


def ordinal(value: int, gender: str, case: str) -> str:
    """"dwudziestym trzecim": every ordinal word of a compound takes the ending."""
    words = N.ordinal(value, "pl").split()
    return " ".join(_adjective(word, gender, case) for word in words)


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    """"2. piętro" -> "drugie piętro", "na 2. piętrze" -> "na drugim piętrze"."""
    known = NOUNS.get(ctx.after)
    gender, case = known if known else ("m", "nom")
    return ordinal(value, gender, case)


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"o czternastej trzydzieści", "do siódmej", "jest siódma piętnaście"."""
    before = ctx.before
    case = {"godzinie": "loc", "godzina": "nom"}.get(before) or _case(before)
    if before in _INSTRUMENTAL:
        case = "ins"
    if hour == 0 and minute <= 0:
        return {"loc": "północy", "gen": "północy", "ins": "północą"}.get(case, "północ")
    hours = ordinal(hour, "f", case) if hour else "zero"
    if minute <= 0:
        return hours
    minutes = N.cardinal(minute, "pl")
    return f"{hours} {'zero ' if minute < 10 else ''}{minutes}"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    """"trzeciego grudnia" (when), "jest trzeci grudnia", "dwa tysiące dwudziestego
    czwartego roku"."""
    case = "nom" if ctx.before in _NOMINATIVE_DATE else "gen"
    words = f"{ordinal(day, 'm', case)} {MONTHS[month - 1]}"
    if year is not None:
        words += f" {ordinal(year, 'm', 'gen')}"
        if ctx.after != "roku":
            words += " roku"
    return words


def _year(value: int, ctx: Context) -> str:
    """"w 1999 roku" -> locative ordinal; "od 1999 roku" -> genitive; "rok" -> nominative."""
    if ctx.after == "roku" or ctx.before in ("w", "W"):
        case = "loc" if ctx.before in ("w", "W") else "gen"
        return ordinal(value, "m", case)
    if ctx.after == "rok":
        return ordinal(value, "m", "nom")
    return N.cardinal(value, "pl")


_GODZ_RE = re.compile(r"(?<!\d )\b(?P<o>[oO] )?godz\.(?= ?\d)")
_YEAR_R_RE = re.compile(r"(?<=\d{4}) ?r\.(?!\w)(?P<end>\s*$)?")


def _prepare(text: str) -> str:
    """"o godz. 7:00" -> "o godzinie 7:00"; "2024 r." -> "2024 roku"."""
    text = _GODZ_RE.sub(lambda m: f"{m.group('o')}godzinie" if m.group("o") else "godzina",
                        text)
    text = _YEAR_R_RE.sub(lambda m: " roku" + ("." if m.group("end") is not None else ""), text)
    return _DAY_RANGE(text)


_DAY_RANGE = S.day_range("[oO]d", "do", MONTHS, lambda d: ordinal(d, "m", "gen"))

RULES = Language(
    code="pl", decimal_word="przecinek", minus_word="minus", plus_word="plus", and_word="i",
    range_word="do", range_before="od", months=MONTHS, space_thousands=True,
    abbreviations={
        "np.": "na przykład", "Np.": "Na przykład", "tzn.": "to znaczy",
        "itd.": "i tak dalej", "itp.": "i tym podobne", "ok.": "około", "ul.": "ulica",
        "tel.": "telefon", "maks.": "maksymalnie",
        "min.": "minimalnie", "tys.": "tysięcy", "dr": "doktor", "prof.": "profesor",
        "godz.": "godzina",
    },
    date_before=r"do|od|z|na|dnia|jest|to|Do|Od|Na",
    per_words=r"za|na",
    number_abbreviations=(frozenset({"nr", "Nr", "nr.", "Nr."}), "numer"),
    year_before=r"w|W|od|Od|do|Do|z|roku|rok",
    year_after=r"[ \t]+(?:roku|rok)\b",
    ordinal_dot=True, ordinal_dot_next=r"[a-ząćęłńóśźż]", dotted_date=True,
    hour_abbr=r"h|godz\.?", minute_abbr=r"min", second_abbr=r"s|sek",
    unit_aliases=UNIT_ALIASES, units=UNITS, currencies=CURRENCIES,
    currency_symbols={"zł": "PLN"},
    form=_form,
    agree=_agree,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    year_in_context=_year,
    prepare=_prepare,
)
