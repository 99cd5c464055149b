"""What Swedish, Danish and Norwegian Bokmål share: "one" agrees with the noun's gender
("en timme" / "ett år", "en time" / "et år", "en time" / "ett år"), the clock is read
digit-style ("klockan fjorton och trettio", "klokken fjorten tredive"), and "kl." before a
time is "klockan" / "klokken".

Most nouns are common gender, so each language lists only the neuter nouns Home Assistant
replies put after a number (and the neuter units); anything else takes the common "en".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Agree, Context, Noun


def one_agree(one: str, common: str, neuter: str, neuter_nouns: Iterable[str],
              neuter_endings: tuple[str, ...] = (), common_nouns: Iterable[str] = ()
              ) -> Agree:
    """An `Agree` that turns num2words' bare "one" (``one``) into ``common`` or ``neuter``
    by the word after it: a listed neuter noun, or a word with a neuter ending (Swedish
    "-ande", or the "-tt" of an adjective before a neuter noun: "ett nytt meddelande")
    that is not a listed common noun ("natt", "watt")."""
    nouns = frozenset(n.lower() for n in neuter_nouns)
    commons = frozenset(n.lower() for n in common_nouns)

    def agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
        if words != one or noun is None or not noun[:1].isalpha():
            return words
        head = noun.split()[0].lower()
        is_neuter = head in nouns or (bool(neuter_endings) and head.endswith(neuter_endings)
                                      and head not in commons)
        return neuter if is_neuter else common

    return agree


def noun(gender: str, one: str, many: str) -> Noun:
    """A unit or currency noun: its gender (``c`` common, ``n`` neuter), singular and
    plural."""
    return Noun(gender, (one, many))


#: The units the three languages name alike; each language adds its own words for the
#: others (degrees Celsius, per cent, per hour, kilowatt hours, hours, minutes, ...).
SHARED_UNITS: dict[str, Noun] = {
    "°": noun("c", "grad", "grader"), "kW": noun("c", "kilowatt", "kilowatt"),
    "W": noun("c", "watt", "watt"), "V": noun("c", "volt", "volt"),
    "hPa": noun("c", "hektopascal", "hektopascal"), "km": noun("c", "kilometer", "kilometer"),
    "cm": noun("c", "centimeter", "centimeter"), "mm": noun("c", "millimeter", "millimeter"),
    "m": noun("c", "meter", "meter"), "kg": noun("n", "kilo", "kilo"),
    "g": noun("n", "gram", "gram"), "ml": noun("c", "milliliter", "milliliter"),
    "l": noun("c", "liter", "liter"), "lx": noun("c", "lux", "lux"),
    "ppm": noun("c", "ppm", "ppm"),
}
#: The euro and its cent, alike in the three languages.
EURO = (noun("c", "euro", "euro"), noun("c", "cent", "cent"))


def neuter_units(units: dict[str, Noun]) -> list[str]:
    """The first word of every neuter unit noun, for `one_agree`."""
    return [form.split()[0] for noun in units.values() if noun.gender == "n"
            for form in noun.forms]


def clock_prepare(abbreviation: str, word: str, clock_is: str) -> Callable[[str], str]:
    """"kl. 7.30" -> "klockan 7.30" (also "kl 7.30", "Kl."): the word a reader says, which
    also marks "7.30" as a clock time (`Language.time_dot_before`); and "klockan är 7.30"
    (``clock_is``: the regex of "the clock is") -> "klockan är 7:30"."""
    first, rest = abbreviation[0], re.escape(abbreviation[1:].rstrip("."))
    pattern = re.compile(rf"(?<!\w)(?P<first>[{first}{first.upper()}]){rest}\.?(?=\s?\d)")
    clock_is_re = re.compile(
        rf"(?i:\b(?P<is>{clock_is})\s+)(?P<h>[01]?\d|2[0-3])\.(?P<m>[0-5]\d)\b")

    def prepare(text: str) -> str:
        text = pattern.sub(
            lambda m: (word[0].upper() if m.group("first").isupper() else word[0]) + word[1:],
            text)
        return clock_is_re.sub(lambda m: f"{m.group('is')} {m.group('h')}:{m.group('m')}", text)

    return prepare


def digital_time(cardinal: Callable[[int], str], zero: str, midnight: str,
                 clock_midnight: str, clock_words: frozenset[str]
                 ) -> Callable[[int, int, str, Context], str | None]:
    """Hours and minutes as numbers: "sju", "fjorton trettio", "sju noll fem"; 0:00 is
    ``midnight``, or ``clock_midnight`` after "klockan" ("klockan tolv på natten")."""

    def time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
        if hour == 0 and minute <= 0:
            return clock_midnight if ctx.before in clock_words else midnight
        hours = cardinal(hour)
        if minute <= 0:
            return hours
        minutes = cardinal(minute)
        if minute < 10:
            return f"{hours} {zero} {minutes}"
        return f"{hours} {minutes}"

    return time
