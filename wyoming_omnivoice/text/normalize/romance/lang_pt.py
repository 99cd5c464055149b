"""European Portuguese: "uma lâmpada", "duas horas", "duzentas pessoas", "vinte e um vírgula
cinco graus Celsius", "às catorze e trinta", "à uma hora", "três de dezembro", "no segundo
andar", "vinte e três euros e noventa e nove cêntimos".

Cardinals agree in gender with the noun after them ("um"/"uma", "dois"/"duas", the
hundreds "duzentos"/"duzentas"); the gender comes from the noun's ending, with the
exceptions Home Assistant replies meet listed by hand (`gender`). Brazilian Portuguese
(`lang_pt_br`) is this table with its own spellings, currency and "primeiro de dezembro".
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
          "setembro", "outubro", "novembro", "dezembro")

_MASCULINE_IN_A = frozenset({"dia", "problema", "sistema", "mapa", "clima", "programa",
                             "tema", "grama", "quilograma", "micrograma", "quilowatt-hora",
                             "quilowatts-hora", "watt-hora"})
_FEMININE = frozenset({"luz", "vez", "noite", "tarde", "parede", "rede", "chave", "ponte",
                       "parte", "fase", "cor", "lente", "gente", "tomada"})
_PLURAL_RES = ((re.compile(r"[õã]es$"), "ão"), (re.compile(r"ens$"), "em"),
               (re.compile(r"ais$"), "al"), (re.compile(r"(?<=[rzl])es$"), ""),
               (re.compile(r"s$"), ""))


def _singular(word: str) -> str:
    for pattern, repl in _PLURAL_RES:
        if pattern.search(word):
            return pattern.sub(repl, word)
    return word


def gender(noun: str) -> str:
    """"m" or "f" for a Portuguese noun, singular or plural, from its ending and the
    exceptions Home Assistant replies meet ("dia", "sistema"; "luz", "noite")."""
    word = noun.split()[0].lower()
    for form in (word, _singular(word)):
        if form in _MASCULINE_IN_A:
            return "m"
        if form in _FEMININE:
            return "f"
    singular = _singular(word)
    if singular.endswith(("ção", "são", "dade", "gem", "a")):
        return "f"
    return "m"


def feminine(words: str) -> str:
    """"vinte e um" -> "vinte e uma", "duzentos" -> "duzentas"; only what follows the last
    "milhão"/"milhões" agrees ("dois milhões de pessoas"), and "mil" never changes."""
    parts = words.split()
    last_million = max((i for i, w in enumerate(parts) if w.startswith(("milh", "bilh"))),
                       default=-1)
    for i in range(last_million + 1, len(parts)):
        word = parts[i]
        if word == "um":
            parts[i] = "uma"
        elif word == "dois":
            parts[i] = "duas"
        elif word.endswith("entos"):
            parts[i] = word[:-2] + "as"
    return " ".join(parts)


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is None or not noun[:1].isalpha():
        return words
    return feminine(words) if gender(noun) == "f" else words


def units(km: str) -> dict[str, Noun]:
    """Unit nouns; ``km`` is the spelling of "quilómetro" (Brazil: "quilômetro")."""
    def n(g: str, one: str, many: str) -> Noun:
        return Noun(g, (one, many))

    return {
        "°C": n("m", "grau Celsius", "graus Celsius"),
        "°F": n("m", "grau Fahrenheit", "graus Fahrenheit"),
        "°": n("m", "grau", "graus"), "%": n("m", "por cento", "por cento"),
        "km/h": n("m", f"{km} por hora", f"{km}s por hora"),
        "mph": n("f", "milha por hora", "milhas por hora"),
        "m/s": n("m", "metro por segundo", "metros por segundo"),
        "kWh": n("m", "quilowatt-hora", "quilowatts-hora"),
        "kW": n("m", "quilowatt", "quilowatts"), "W": n("m", "watt", "watts"),
        "V": n("m", "volt", "volts"), "hPa": n("m", "hectopascal", "hectopascais"),
        "km": n("m", km, f"{km}s"), "cm": n("m", "centímetro", "centímetros"),
        "mm": n("m", "milímetro", "milímetros"), "m": n("m", "metro", "metros"),
        "kg": n("m", "quilograma", "quilogramas"), "g": n("m", "grama", "gramas"),
        "ml": n("m", "mililitro", "mililitros"), "l": n("m", "litro", "litros"),
        "lx": n("m", "lux", "lux"), "ppm": n("f", "parte por milhão", "partes por milhão"),
        "µg/m³": n("m", "micrograma por metro cúbico", "microgramas por metro cúbico"),
        "dB": n("m", "decibel", "decibéis"), "h": n("f", "hora", "horas"),
        "min": n("m", "minuto", "minutos"), "s": n("m", "segundo", "segundos"),
    }


def currencies(cent: str) -> dict[str, tuple[Noun, Noun]]:
    """Currency nouns; ``cent`` is the hundredth of a euro or dollar ("cêntimo"/"centavo")."""
    minor = Noun("m", (cent, f"{cent}s"))
    return {
        "EUR": (Noun("m", ("euro", "euros")), minor),
        "USD": (Noun("m", ("dólar", "dólares")), minor),
        "BRL": (Noun("m", ("real", "reais")), Noun("m", ("centavo", "centavos"))),
        "GBP": (Noun("f", ("libra", "libras")), Noun("m", ("péni", "pénis"))),
    }


def ordinal_words(value: int, suffix: str, ctx: Context, lang: str = "pt") -> str:
    """"2.º" -> "segundo", "2.ª" -> "segunda"."""
    words = N.ordinal(value, lang)
    if "ª" in suffix or "a" in suffix:
        words = " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split())
    return words


def time_words(hour: int, minute: int, suffix: str, ctx: Context, lang: str = "pt"
               ) -> str | None:
    """"às sete horas", "à uma hora", "às catorze e trinta", "às sete e cinco"."""
    if hour == 0:
        hours = "meia-noite"
    elif hour == 12 and minute <= 0:
        return "meio-dia"
    else:
        hours = feminine(N.cardinal(hour, lang))
    if minute <= 0:
        return hours if hour == 0 else f"{hours} {'hora' if hour == 1 else 'horas'}"
    return f"{hours} e {N.cardinal(minute, lang)}"


def date_words(day: int, month: int, year: int | None, ctx: Context, lang: str = "pt",
               first: str = "um") -> str:
    day_words = first if day == 1 else N.cardinal(day, lang)
    year_words = f" de {fix_cardinal(N.cardinal(year, lang))}" if year is not None else ""
    return f"{day_words} de {MONTHS[month - 1]}{year_words}"


def fix_cardinal(words: str) -> str:
    return words.replace(",", "")  # num2words' Brazilian "mil, novecentos"


_HOUR_H_RE = re.compile(r"(?<![\w.,:])([01]?\d|2[0-3])h(?!\w)")
_ARTICLE_RE = re.compile(r"\b([àÀ]s|[aA]s) (?=meia-noite\b|uma\b)")


def prepare(text: str) -> str:
    """"às 14h" is a clock time ("às catorze horas"), as "14h30" is."""
    return _HOUR_H_RE.sub(r"\1:00", text)


def finish(text: str) -> str:
    """"às uma hora" -> "à uma hora", "às meia-noite" -> "à meia-noite": the article
    before the hour agrees with it (one o'clock and midnight are singular)."""
    return _ARTICLE_RE.sub(lambda m: m.group(1)[:-1] + " ", text)


ABBREVIATIONS = {
    "Sr.": "senhor", "Sra.": "senhora", "Dr.": "doutor", "Dra.": "doutora",
    "p. ex.": "por exemplo", "etc.": "etcétera", "aprox.": "aproximadamente",
    "máx.": "máximo", "mín.": "mínimo", "tel.": "telefone", "Av.": "avenida",
}

RULES = Language(
    code="pt", decimal_word="vírgula", minus_word="menos", plus_word="mais", and_word="e",
    range_word="a", months=MONTHS, space_thousands=True,
    abbreviations=ABBREVIATIONS,
    date_before=r"a|em|no|dia|até|desde|para|de|A|No|Dia|Até|Desde|Em",
    per_words=r"por|o|a",
    number_abbreviations=(frozenset({"n.º", "nº", "N.º", "Nº"}), "número"),
    ordinal_suffix=r"(?:\.?[ºª°])",
    hour_letter=True,
    units=units("quilómetro"), currencies=currencies("cêntimo"),
    currency_symbols={"R$": "BRL"},
    agree=_agree,
    ordinal_words=ordinal_words,
    time_words=time_words,
    date_words=date_words,
    fix_cardinal=fix_cardinal,
    prepare=prepare, finish=finish,
)
