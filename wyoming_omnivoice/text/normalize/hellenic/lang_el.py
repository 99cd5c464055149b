"""Greek: "δύο λάμπες", "τρεις λάμπες", "τρία φώτα", "μία ώρα", "είκοσι ένα κόμμα πέντε
βαθμοί Κελσίου", "στους είκοσι δύο βαθμούς", "πενήντα τοις εκατό", "στις επτά και
τριάντα", "τρεις Δεκεμβρίου", "στον δεύτερο όροφο", "δώδεκα ευρώ και πενήντα λεπτά".

A number agrees in gender with the noun after it (1, 3, 4, 13, 14, the hundreds and 1000
change) and, for masculines, in case: the accusative after the prepositions and articles
that ask for it ("στους είκοσι δύο βαθμούς", "για έναν μήνα"), the nominative elsewhere
("είναι είκοσι ένας βαθμοί"). The gender comes from the noun's ending (`gender`). A
decimal, a percentage and a year are read as neuters; clock hours and days of the month
as feminines ("στις τρεις", "τρεις Δεκεμβρίου"; the first is "πρώτη Μαΐου").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize.hellenic import numerals as G
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = ("Ιανουαρίου", "Φεβρουαρίου", "Μαρτίου", "Απριλίου", "Μαΐου", "Ιουνίου",
          "Ιουλίου", "Αυγούστου", "Σεπτεμβρίου", "Οκτωβρίου", "Νοεμβρίου", "Δεκεμβρίου")

#: Words after which a masculine is in the accusative.
_ACCUSATIVE_BEFORE = frozenset({
    "στους", "τους", "στον", "τον", "σε", "για", "με", "από", "μέχρι", "έως", "ως", "κατά",
    "στα", "τα", "στις", "τις", "στη", "στην", "την", "περίπου", "πριν", "μετά", "ανά",
    "έχει", "έχουν", "ρύθμισα", "ρυθμίστηκε", "δείχνει", "φτάνει", "πάνω", "κάτω",
})
#: Masculine nouns of Home Assistant replies whose form would read as another gender
#: ("μήνα" and "χρόνο", accusatives; "μήνες", a plural in -ες).
_MASCULINE = frozenset({
    "μήνας", "μήνα", "μήνες", "χρόνος", "χρόνο", "βαθμός", "βαθμό", "όροφος", "όροφο",
    "αισθητήρας", "αισθητήρα", "αισθητήρες", "θερμοστάτης", "θερμοστάτη", "θερμοστάτες",
    "διακόπτης", "διακόπτη", "διακόπτες", "ανεμιστήρας", "ανεμιστήρα", "ανεμιστήρες",
    "λαμπτήρας", "λαμπτήρα", "λαμπτήρες", "καυστήρας", "καυστήρα", "χρήστης", "χρήστη",
    "χρήστες", "επισκέπτης", "επισκέπτη", "επισκέπτες", "κύκλος", "κύκλο", "κύκλοι",
    "κύκλους", "άνθρωπος", "άνθρωπο", "άνθρωποι", "ανθρώπους", "συναγερμός", "συναγερμό",
})
_NEUTER = frozenset({"φως", "μέρος", "ρεύμα"})


def gender(noun: str, plural: bool = False) -> str:
    """"m", "f" or "n" for a Greek noun after a number, from its ending: a singular in -α
    or -η is feminine ("ώρα"), a plural in -α neuter ("φώτα", "λεπτά")."""
    word = noun.lower()
    if word in _MASCULINE:
        return "m"
    if word in _FEMININE_GENITIVE:
        return "f"
    if word.endswith(("ού", "ου")):
        return "n"  # a genitive singular: "ενός λεπτού" (masculines say "ενός" too)
    if word in _NEUTER or word.endswith(("μα", "ματα")):
        return "n"
    if word.endswith(("ος", "ός", "οι", "οί", "ους", "ούς", "ας", "άς", "ης", "ής", "έας")):
        return "m"
    if word.endswith(("ο", "ό", "ι", "ί", "ιά")) or (plural and word.endswith(("α", "ά"))):
        return "n"
    return "f"  # "λάμπα", "ώρα", "λάμπες", "ώρες", "μέρα"


#: Feminine genitives singular in -ας/-ης, which read as masculine nominatives by ending.
_FEMININE_GENITIVE = frozenset({"ώρας", "μέρας", "ημέρας", "εβδομάδας", "φοράς"})


def case(noun: str | None, ctx: Context) -> str:
    word = (noun or "").lower()
    if word.endswith(("ών", "ων", "ού")) or word in _FEMININE_GENITIVE or \
            ctx.before.lower() in ("των", "του", "της"):
        return "gen"  # "τριών ωρών", "ενός λεπτού", "μίας ώρας", "των τριών χιλιάδων ευρώ"
    if noun is not None and noun.lower().endswith(("ους", "ούς", "ό", "ο", "α", "η")) and \
            gender(noun) == "m":
        return "acc"  # "βαθμούς", "βαθμό", "μήνα"
    return "acc" if ctx.before.lower() in _ACCUSATIVE_BEFORE else "nom"


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun is None or not noun[:1].isalpha():
        return words
    return G.cardinal(int(num.integer), gender(noun, not num.is_one), case(noun, ctx))


def _n(g: str, one: str, many: str | None = None, one_acc: str | None = None,
       many_acc: str | None = None) -> Noun:
    """A unit noun's forms: nominative singular and plural, accusative singular and plural
    (`_form` picks them)."""
    many = many or one
    return Noun(g, (one, many, one_acc or one, many_acc or many))


UNITS = {
    "°C": _n("m", "βαθμός Κελσίου", "βαθμοί Κελσίου", "βαθμό Κελσίου", "βαθμούς Κελσίου"),
    "°F": _n("m", "βαθμός Φαρενάιτ", "βαθμοί Φαρενάιτ", "βαθμό Φαρενάιτ",
             "βαθμούς Φαρενάιτ"),
    "°": _n("m", "βαθμός", "βαθμοί", "βαθμό", "βαθμούς"), "%": _n("n", "τοις εκατό"),
    "km/h": _n("n", "χιλιόμετρο την ώρα", "χιλιόμετρα την ώρα"),
    "mph": _n("n", "μίλι την ώρα", "μίλια την ώρα"),
    "m/s": _n("n", "μέτρο ανά δευτερόλεπτο", "μέτρα ανά δευτερόλεπτο"),
    "kWh": _n("f", "κιλοβατώρα", "κιλοβατώρες"), "kW": _n("n", "κιλοβάτ"),
    "W": _n("n", "βατ"), "V": _n("n", "βολτ"), "hPa": _n("n", "εκτοπασκάλ"),
    "km": _n("n", "χιλιόμετρο", "χιλιόμετρα"), "cm": _n("n", "εκατοστό", "εκατοστά"),
    "mm": _n("n", "χιλιοστό", "χιλιοστά"), "m": _n("n", "μέτρο", "μέτρα"),
    "kg": _n("n", "κιλό", "κιλά"), "g": _n("n", "γραμμάριο", "γραμμάρια"),
    "ml": _n("n", "χιλιοστόλιτρο", "χιλιοστόλιτρα"), "l": _n("n", "λίτρο", "λίτρα"),
    "lx": _n("n", "λουξ"), "ppm": _n("n", "μέρος ανά εκατομμύριο", "μέρη ανά εκατομμύριο"),
    "µg/m³": _n("n", "μικρογραμμάριο ανά κυβικό μέτρο", "μικρογραμμάρια ανά κυβικό μέτρο"),
    "dB": _n("n", "ντεσιμπέλ"), "h": _n("f", "ώρα", "ώρες"),
    "min": _n("n", "λεπτό", "λεπτά"), "s": _n("n", "δευτερόλεπτο", "δευτερόλεπτα"),
}
CURRENCIES = {
    "EUR": (_n("n", "ευρώ"), _n("n", "λεπτό", "λεπτά")),
    "USD": (_n("n", "δολάριο", "δολάρια"), _n("n", "σεντ")),
    "GBP": (_n("f", "λίρα", "λίρες"), _n("f", "πένα", "πένες")),
}
_NOUNS = {form: noun for noun in [*UNITS.values(), *(c for p in CURRENCIES.values()
                                                     for c in p)] for form in noun.forms}


def _form(num: Num, ctx: Context) -> int:
    plural = not num.is_one
    return int(plural) + (2 if ctx.before.lower() in _ACCUSATIVE_BEFORE else 0)


def _unit_agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    own = _NOUNS.get(noun or "")
    if own is None:
        return _agree(num, words, noun, ctx)
    acc = ctx.before.lower() in _ACCUSATIVE_BEFORE
    return G.cardinal(int(num.integer), own.gender, "acc" if acc else "nom")


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"επτά", "δεκατέσσερις και τριάντα", "μία και πέντε", "δώδεκα τα μεσάνυχτα", "εννέα το
    βράδυ" (9 μ.μ.) (hours are feminine: "ώρα"; minutes neuter: "λεπτά")."""
    if minute < 0:
        return None
    if hour == 0 and minute == 0:
        return "δώδεκα τα μεσάνυχτα"
    words = G.cardinal(hour, "f")
    if minute:
        words += f" και {G.cardinal(minute)}"
    if suffix:
        words += f" {_part_of_day(hour, suffix.startswith('μ'))}"
    return words


def _part_of_day(hour: int, pm: bool) -> str:
    """What π.μ./μ.μ. is said as for the hour: "το μεσημέρι" (12-2 μ.μ.), "το απόγευμα"
    (3-7), "το βράδυ" (8-11); "τα μεσάνυχτα" (12 π.μ.), "τα ξημερώματα" (1-4), "το πρωί"."""
    hour %= 12
    if pm:
        return "το μεσημέρι" if hour <= 2 else "το απόγευμα" if hour <= 7 else "το βράδυ"
    return "τα μεσάνυχτα" if hour == 0 else "τα ξημερώματα" if hour <= 4 else "το πρωί"


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{'πρώτη' if day == 1 else G.cardinal(day, 'f')} {MONTHS[month - 1]}"
    return f"{words} {G.cardinal(year)}" if year is not None else words


def _ordinal(value: int, suffix: str, ctx: Context) -> str:
    return G.ordinal(value, suffix)


# an hour with π.μ./μ.μ. and no minutes ("στις 7 μ.μ.") is a clock time like "7:00 μ.μ."
_HOUR_AMPM_RE = re.compile(r"(?<![\d:.,])(?P<h>1[0-2]|0?[1-9])(?=\s?[πμ]\.μ\.)")


def _prepare(text: str) -> str:
    return _HOUR_AMPM_RE.sub(lambda m: m.group("h") + ":00", text)


_ARTICLE_RE = re.compile(r"\b(σ?τ)(ις|η) (?=μία\b)")


def _finish(text: str) -> str:
    """"στις μία" -> "στη μία": one o'clock is singular."""
    return _ARTICLE_RE.sub(lambda m: m.group(1) + "η ", text)


RULES = Language(
    code="el", decimal_word="κόμμα", minus_word="μείον", plus_word="συν", and_word="και",
    range_word="έως", range_before="από", months=MONTHS,
    phone_extra=r"(?:2\d|69)\d(?:[ -]?\d{3}[ -]?\d{4}|\d{7})",  # "210 123 4567", "6912345678"
    abbreviations={
        "π.χ.": "για παράδειγμα", "κ.λπ.": "και λοιπά", "κλπ.": "και λοιπά",
        "δηλ.": "δηλαδή", "περίπ.": "περίπου", "τηλ.": "τηλέφωνο", "αρ.": "αριθμός",
        "οδ.": "οδός", "Δρ.": "Δόκτωρ", "μέγ.": "μέγιστο", "ελάχ.": "ελάχιστο",
    },
    per_words=r"ανά|την",
    ordinal_suffix=r"ος|ου|ον|ο|οι|ους|η|ης|ες|α",
    year_before=r"το|από το|έτος|του|στο|Το|Από το|Στο",
    date_before=r"στις|τις|από|έως|μέχρι|Στις",
    time_suffix=r"[πμ]\.μ(?:\.(?!\s*$))?",  # the last dot of "π.μ." may end the sentence
    hour_abbr=r"h|ώ|ώρ\.?", minute_abbr=r"min|λ|λεπ\.?", second_abbr=r"s|δ|δευτ\.?",
    unit_aliases={"χλμ": "km", "χλμ/ώ": "km/h", "χλμ/ώρα": "km/h", "ώ": "h", "λ": "min",
                  "λεπ": "min", "δευτ": "s", "κιλά": "kg"},
    units=UNITS, currencies=CURRENCIES,
    time_dot_before=frozenset({"στις", "Στις", "ώρα", "Ώρα"}),
    agree=_agree, unit_agree=_unit_agree, form=_form,
    cardinal_words=G.cardinal, digit_words=G.cardinal,
    ordinal_words=_ordinal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
