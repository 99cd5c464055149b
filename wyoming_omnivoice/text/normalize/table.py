"""`Language`: one language's rule table, read by the shared passes in `passes.py`.

Each ``<family>/lang_*.py`` (en ... nl, pl, ru, pt, pt_br, sv, da, nb, cs, uk, fi, hu) builds
one `Language`: its words (decimal separator, minus, ranges, months, abbreviations, its own
unit and currency `Noun`s), the shape of its written numbers and dates, and the few
functions where languages really differ (how a number agrees with the noun after it, how
a clock time or a date is said, how a phone number is grouped). The
passes never branch on the language id; what differs is in this table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num


@dataclass(frozen=True)
class Context:
    """The words around a number: the one before it and the one after it (if any)."""

    before: str = ""
    after: str = ""


#: (number, words for its integer part, noun after it or None, context) -> words
Agree = Callable[[Num, str, "str | None", Context], str]


def _plain_agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    return words


def _no_time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    return None


@dataclass(frozen=True)
class Noun:
    """A unit or currency noun in a language's own table, with its grammatical gender and
    the forms that `Language.form` picks between (English-like languages: singular and
    plural; Slavic: after 1, after 2-4, after 5+, after a decimal, and so on)."""

    gender: str
    forms: tuple[str, ...]

    def form(self, index: int) -> str:
        return self.forms[min(index, len(self.forms) - 1)]


@dataclass(frozen=True)
class Language:
    """Everything the shared passes need to know about one language."""

    code: str
    decimal_word: str
    minus_word: str
    plus_word: str
    and_word: str
    """Joins currency units, duration parts and "&"."""
    range_word: str
    months: tuple[str, ...]
    range_before: str = ""
    """Word before the first number of a range ("od 20 do 22", "от 20 до 22")."""
    glue: str = r"\w"
    """Regex class body of what may not touch a number ("5km" is not "5 km" in English): any
    letter; only Latin letters and digits in Japanese and Korean, where kana, kanji and
    Hangul touch digits ("2台", "21.5도입니다")."""
    thousands: str = r"[.\u00a0\u202f]"
    """Regex of the separator between digit groups."""
    fraction: str = r"[,.]"
    """Regex of the decimal separator."""
    grouped_fraction: bool = True
    """Read a short fraction as a number ("virgule quatorze") instead of digit by digit."""
    currency_and: str = ""
    """Joins major and minor currency units ("" : `and_word`; " ": nothing, Russian)."""
    duration_and: bool = True
    """Join "1 h 30 min" with `and_word` (False: "une heure trente minutes")."""
    abbreviations: Mapping[str, str] = field(default_factory=dict)
    """Abbreviations -> words, matched case-sensitively at word boundaries."""
    abbreviations_after_word: Mapping[str, str] = field(default_factory=dict)
    """Abbreviations glued to or after a capitalised word ("Hauptstr.", "Main St.")."""
    per_words: str = r"(?!x)x"
    """Regex of words after which a unit stands alone ("per kWh" -> "per kilowatt hour")."""
    titles_before_name: Mapping[str, str] = field(default_factory=dict)
    number_abbreviations: tuple[frozenset[str], str] = (frozenset(), "")
    ordinal_suffix: str = r"(?!x)x"
    """Regex of the letters after an ordinal's digits ("st|nd|rd|th")."""
    year_before: str = r"(?!x)x"
    """Regex of words after which a four-digit number is a year."""
    year_after: str = r"(?!x)x"
    """Regex of what may follow a bare four-digit number for it to be a year."""
    time_suffix: str = ""
    """Regex of a word after a clock time ("Uhr", "a.m.")."""
    am_pm: bool = False
    """Hours may be written with a.m./p.m. and no minutes ("7pm")."""
    hour_letter: bool = False
    """Times may be written with "h" between hour and minutes ("10h30")."""
    day_first: bool = True
    """Numeric dates are day/month (False: month/day, as in US English)."""
    date_before: str = r"(?!x)x"
    """Regex of words that introduce a date without a year ("on 12/24", "am 24.12.")."""
    dash_date: bool = False
    """A day and month may be written "1-12" (Dutch)."""
    dotted_date: bool = False
    """A day and month may be written "24.12." (German)."""
    ordinal_dot: bool = False
    """An ordinal may be written as digits and a dot ("2. Stock")."""
    ordinal_dot_next: str = r"[A-ZÄÖÜ]\w|bis\b"
    """Regex of what follows such an ordinal (German: a noun; Polish, Czech: any word)."""
    phone_zero: str | None = None
    """Word read for 0 in phone numbers, where it differs ("zero" -> "oh")."""
    phone_extra: str = r"(?!x)x"
    """Regex of the language's own phone-number shapes ("612 345 678" in Spanish)."""
    phone_pairs: bool = False
    """Phone numbers are read in pairs of digits (French)."""
    space_thousands: bool = False
    """Digit groups may be separated by an ordinary space ("1 000")."""
    model_oh: str | None = None
    """Word for the zero of "05" when a model number is read in pairs ("oh")."""
    agree: Agree = _plain_agree
    """Adjust a cardinal for the noun that follows (gender, case, apocope)."""
    unit_agree: Agree | None = None
    """Like `agree`, for the noun of a unit or currency (defaults to `agree`)."""
    ordinal_words: Callable[[int, str, Context], str] = lambda value, suffix, ctx: ""
    time_words: Callable[[int, int, str, Context], str | None] = _no_time
    date_words: Callable[[int, int, int | None, Context], str] = lambda d, m, y, ctx: ""
    year_words: Callable[[int], str] | None = None
    singular: Callable[[Num], bool] = lambda num: num.is_one
    """Whether a number takes the singular of its noun."""
    prepare: Callable[[str], str] = lambda text: text
    """First touch on the whole segment (German weekday abbreviations)."""
    finish: Callable[[str], str] = lambda text: text
    """Last touch on the whole segment (Italian elision "un'ora")."""
    fix_cardinal: Callable[[str], str] = lambda words: words
    """Spelling fix on num2words' cardinals (Italian "ventitre" -> "ventitré")."""
    unit_aliases: Mapping[str, str] = field(default_factory=dict)
    """The language's own unit symbols -> the shared ones ("км/ч" -> "km/h", "t" -> "h")."""
    hour_abbr: str = r"h|Std\.?"
    """Regex of the hour symbol in a duration ("1 h 30 min")."""
    minute_abbr: str = r"min|Min"
    second_abbr: str = r"s|Sek"
    cardinal_words: Callable[[int], str] | None = None
    """The language's own cardinals, where num2words' are not what is said (Danish)."""
    digit_words: Callable[[int], str] | None = None
    """The words for digits and pairs ("007", phone and model numbers) where num2words has
    none for the language (Greek)."""
    units: Mapping[str, Noun] = field(default_factory=dict)
    """The language's own unit nouns, by written symbol (else `words.UNITS`)."""
    currencies: Mapping[str, tuple[Noun, Noun]] = field(default_factory=dict)
    """The language's own currency nouns (major, minor), by ISO code (else `words.CURRENCIES`)."""
    currency_symbols: Mapping[str, str] = field(default_factory=dict)
    """Extra written currency signs -> ISO code ("zł", "kr", "Ft")."""
    form: Callable[[Num, Context], int] | None = None
    """Which of a `Noun`'s forms follows a number (None: 0 when `singular`, else 1)."""
    decimal_words: Callable[[Num], str] | None = None
    """Words for a number with a fraction, where the language has its own way."""
    year_in_context: Callable[[int, Context], str] | None = None
    """A year as the words around it ask ("в 1999 году": an ordinal in the locative)."""
    time_dot_before: frozenset[str] = frozenset()
    """Words after which "7.30" is a clock time without a suffix ("klockan", "kello")."""

    def form_index(self, num: Num, ctx: Context | None = None) -> int:
        if self.form is not None:
            return self.form(num, ctx or Context())
        return 0 if self.singular(num) else 1

    def cardinal(self, value: int) -> str:
        if self.cardinal_words is not None:
            return self.cardinal_words(value)
        return self.fix_cardinal(N.cardinal(value, self.code))

    def year(self, value: int) -> str:
        return self.year_words(value) if self.year_words else self.cardinal(value)

    def number(self, num: Num, noun: str | None = None, ctx: Context | None = None,
               agree: Agree | None = None) -> str:
        """Words for a written number, agreeing with ``noun`` when one follows."""
        lang = self.code
        if len(num.integer) > 1 and num.integer.startswith("0") and not num.fraction:
            words = N.digits(num.integer, lang, words=self.digit_words)  # "007"
        else:
            words = self.cardinal(int(num.integer))
        if num.fraction and self.decimal_words is not None:
            words = self.decimal_words(num)
        elif num.fraction:
            frac = num.fraction
            if self.grouped_fraction and len(frac) <= 2 and not frac.startswith("0"):
                frac_words = self.cardinal(int(frac))
            else:
                frac_words = N.digits(frac, lang, words=self.digit_words)
            words = f"{words} {self.decimal_word} {frac_words}"
        else:
            words = (agree or self.agree)(num, words, noun, ctx or Context())
        return f"{self.minus_word} {words}" if num.negative else words
