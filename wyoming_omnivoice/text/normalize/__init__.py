"""Text normalisation: numbers, times, dates, currency, units and abbreviations -> words.

`normalize_text(text, language)` rewrites the written forms Home Assistant produces
("21.5 °C", "10:30", "85%", "$3.99", "No. 5") into the words a speaker would say, so the
model (which reads text, not symbols) pronounces them correctly. Full rules exist for
English, German, French, Spanish, Italian, Dutch (`num2words` for the number words) and
Chinese (`cn2an`, see `zh.py`); `supports_language` tells which. Other languages
that `num2words` knows get plain numbers only, as upstream's fallback does (omnivoice.md
B.6.3); anything else is returned unchanged.

OmniVoice's inline control syntax is never touched: every ``[...]`` span (non-verbal tags
such as ``[laughter]`` and pronunciation overrides such as ``[B EY1 S]``) is passed through
verbatim, and for Chinese also upper-case pinyin with a tone digit (``ZHONG1``).
Normalisation never raises: a segment whose rewrite fails is kept as written (and logged).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from num2words import CONVERTER_CLASSES, num2words

from wyoming_omnivoice.text.normalize import words as W

_LOGGER = logging.getLogger(__name__)

#: Languages with the full rule set.
FULL_LANGUAGES = frozenset({*W.LANGUAGES, "zh"})
#: Language ids (after region stripping) read with the Chinese rules.
_CHINESE_IDS = frozenset({"zh", "cmn", "yue"})
_NAMES = {
    "english": "en", "german": "de", "deutsch": "de", "french": "fr", "français": "fr",
    "spanish": "es", "español": "es", "italian": "it", "italiano": "it", "dutch": "nl",
    "nederlands": "nl", "chinese": "zh", "mandarin": "zh", "cantonese": "yue",
}

_BRACKET_RE = re.compile(r"\[[^\[\]]*\]")
_PINYIN_RE = re.compile(r"[A-Z]+[1-5]")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")


def _language_key(language: str | None) -> str | None:
    if language is None:
        return None
    key = language.strip().lower().replace("_", "-")
    if not key or key == "none":
        return None
    key = _NAMES.get(key, key)
    return _NAMES.get(key.split("-")[0], key.split("-")[0])


def supports_language(language: str | None) -> bool:
    """True when `normalize_text` has the full rule set for ``language``.

    Accepts ids (``"en"``, ``"zh"``, ``"yue"``), region variants (``"de-AT"``, ``"zh_CN"``)
    and English names (``"German"``). ``None`` (unknown language) gives False.
    """
    key = _language_key(language)
    return key is not None and (key in W.LANGUAGES or key in _CHINESE_IDS)


def normalize_text(text: str, language: str | None) -> str:
    """Rewrite numbers, times, dates, currency, units and abbreviations as words.

    ``language`` is an id or name as for `supports_language`; ``None`` picks Chinese when
    the text holds CJK characters and English otherwise (upstream's rule).
    """
    if not text or not text.strip():
        return text
    key = _language_key(language)
    if key is None:
        key = "zh" if _CJK_RE.search(text) else "en"
    if key in _CHINESE_IDS:
        try:
            from wyoming_omnivoice.text.normalize.zh import normalize_chinese
        except ImportError:  # cn2an missing: a packaging fault, but never fail synthesis
            _LOGGER.warning("Chinese text normalisation needs the cn2an package; "
                            "install it with: pip install cn2an")
            return text
        return _apply_protected(text, normalize_chinese, protect_pinyin=True)
    if key in W.LANGUAGES:
        return _apply_protected(text, lambda seg: _normalize_european(seg, key), False)
    if key in CONVERTER_CLASSES:
        return _apply_protected(text, lambda seg: _normalize_numbers_only(seg, key), False)
    return text


# ---------------------------------------------------------------------------------------
# Protection of control syntax
# ---------------------------------------------------------------------------------------


def _apply_protected(text: str, fn: Callable[[str], str], protect_pinyin: bool) -> str:
    spans = [m.span() for m in _BRACKET_RE.finditer(text)]
    if protect_pinyin:
        spans += [m.span() for m in _PINYIN_RE.finditer(text)]
    spans.sort()
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        if start < last:  # overlaps a span already kept
            last = max(last, end)
            continue
        pieces.append(_safe(fn, text[last:start]))
        pieces.append(text[start:end])
        last = end
    pieces.append(_safe(fn, text[last:]))
    return "".join(pieces)


def _safe(fn: Callable[[str], str], segment: str) -> str:
    if not segment.strip():
        return segment
    try:
        return fn(segment)
    except Exception:  # normalisation is best effort and must never fail a request
        _LOGGER.warning("Text normalisation failed on %r; keeping it as written", segment,
                        exc_info=True)
        return segment


def _is_word_char(char: str) -> bool:
    """A letter or digit of an alphabetic script (CJK and kana need no spaces)."""
    return char.isalnum() and ord(char) < 0x2E80


def _sub(pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str | None],
         text: str) -> str:
    """`re.sub` that keeps words apart: pads the replacement with spaces where it would
    touch a letter or digit, and leaves the match unchanged when ``repl`` gives None."""

    def wrapped(match: re.Match[str]) -> str:
        words = repl(match)
        if words is None:
            return match.group(0)
        source = match.string
        start, end = match.span()
        if words and start > 0 and _is_word_char(source[start - 1]) and _is_word_char(words[0]):
            words = " " + words
        if words and end < len(source) and _is_word_char(source[end]) and _is_word_char(words[-1]):
            words += " "
        return words

    return pattern.sub(wrapped, text)


# ---------------------------------------------------------------------------------------
# Number words (European languages)
# ---------------------------------------------------------------------------------------


class _Num:
    """A parsed written number: sign, integer digits, fraction digits."""

    __slots__ = ("fraction", "integer", "negative")

    def __init__(self, negative: bool, integer: str, fraction: str) -> None:
        self.negative = negative
        self.integer = integer
        self.fraction = fraction

    @property
    def value(self) -> Decimal:
        text = self.integer + (f".{self.fraction}" if self.fraction else "")
        value = Decimal(text)
        return -value if self.negative else value

    def is_singular(self, lang: str) -> bool:
        if lang == "fr":  # French: singular below two ("1,5 kilomètre")
            return abs(self.value) < 2
        return not self.fraction and int(self.integer) == 1


def _number_pattern(lang: str) -> str:
    """Regex source of a written number with named groups sign/int/frac (no boundaries)."""
    if lang == "en":
        integer = r"\d{1,3}(?:,\d{3})+|\d+"
        fraction = r"\.(?P<frac>\d+)"
    elif lang == "fr":
        integer = r"\d{1,3}(?:[\u00a0\u202f'’]\d{3})+|\d+"
        fraction = r"[,.](?P<frac>\d+)"
    else:
        integer = r"\d{1,3}(?:\.\d{3})+|\d+"
        fraction = r"[,.](?P<frac>\d+)"
    return rf"(?P<sign>[-−](?=\d))?(?P<int>{integer})(?:{fraction})?"


def _parse(match: re.Match[str]) -> _Num:
    integer = re.sub(r"\D", "", match.group("int"))
    return _Num(bool(match.group("sign")), integer, match.group("frac") or "")


def _cardinal(value: int, lang: str) -> str:
    if value >= 10**15:
        return _digits(str(value), lang)
    words = num2words(value, lang=lang)
    return words.replace(",", "") if lang == "en" else words


def _digits(digits: str, lang: str) -> str:
    return " ".join(num2words(int(d), lang=lang) for d in digits)


def _before_noun(words: str, lang: str, feminine: bool = False) -> str:
    """Adjust a cardinal that precedes a noun ("eins" -> "ein(e)", "uno" -> "un"/"una")."""
    if lang == "de" and words.endswith("eins"):
        return words[:-1] + ("e" if feminine and words == "eins" else "")
    if lang == "es" and words.endswith("uno"):
        if feminine:
            return words[:-1] + "a"
        return words[:-3] + "ún" if words.endswith("veintiuno") else words[:-1]
    if lang == "it" and words == "uno":
        return "una" if feminine else "un"
    if lang == "fr" and feminine and words.endswith("un"):
        return words + "e"
    return words


def _number_words(
    num: _Num, lang: str, *, before_noun: bool = False, feminine: bool = False
) -> str:
    if len(num.integer) > 1 and num.integer.startswith("0") and not num.fraction:
        words = _digits(num.integer, lang)  # "007": read digit by digit
    else:
        words = _cardinal(int(num.integer), lang)
    if num.fraction:
        frac = num.fraction
        if lang in W.GROUPED_FRACTION and len(frac) <= 2 and not frac.startswith("0"):
            frac_words = _cardinal(int(frac), lang)
        else:
            frac_words = _digits(frac, lang)
        words = f"{words} {W.DECIMAL_WORD[lang]} {frac_words}"
    elif before_noun:
        words = _before_noun(words, lang, feminine)
    if num.negative:
        words = f"{W.MINUS_WORD[lang]} {words}"
    return words


def _ordinal(value: int, lang: str) -> str:
    return num2words(value, lang=lang, to="ordinal")


def _year(value: int, lang: str) -> str:
    """A year as spoken: "nineteen ninety-nine", "neunzehnhundertneunundneunzig"."""
    if lang in ("en", "de", "nl") and 1100 <= value <= 1999:
        words = num2words(value, lang=lang, to="year")
        return words.replace(" ", "") if lang == "nl" else words
    if lang == "en" and 2010 <= value <= 2099:
        return num2words(value, lang=lang, to="year")
    return _cardinal(value, lang)


# ---------------------------------------------------------------------------------------
# The European rule set, one compiled bundle per language
# ---------------------------------------------------------------------------------------


def _alternation(words: list[str] | set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


class _European:
    """Compiled patterns and rules for one of en/de/fr/es/it/nl."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        num = _number_pattern(lang)
        self.num_source = num
        lead = r"(?<![\w.,])"
        unit_names = list(W.UNITS) + list(W.UNIT_ALIASES)
        units = _alternation(unit_names)
        self.unit_re = re.compile(
            rf"{lead}{num}(?P<space>\s?)(?P<unit>{units})(?![\w/²³])"
        )
        # "20-25 °C", "5–10", "2020-2024": a range of two numbers
        self.range_re = re.compile(
            r"(?<![\w.,\-])(?P<a>\d+(?:[.,]\d+)?)(?:[-–]|\s–\s)(?P<b>\d+(?:[.,]\d+)?)"
            r"(?![\d\-]|[.,]\d)"
        )
        codes = _alternation(list(W.CURRENCIES))
        symbols = _alternation([s for s in W.CURRENCY_SYMBOLS if s != "￥"])
        self.currency_before_re = re.compile(
            rf"(?<![\w])(?P<cur>{symbols}|(?:{codes})(?=\s?\d))\s?{num}(?![\d]|[.,]\d)"
        )
        self.currency_after_re = re.compile(
            rf"{lead}{num}\s?(?P<cur>{symbols}|{codes})(?!\w)"
        )
        self.time_re = re.compile(
            r"(?<![\w.:,])(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?(?![\d:])"
            r"(?P<suffix>\s?(?:[aApP]\.?\s?[mM]\.?(?!\w)|Uhr\b|uur\b|h\b))?"
            if lang in ("en", "de", "nl")
            else r"(?<![\w.:,])(?P<h>[01]?\d|2[0-3])(?::|\s?h\s?)(?P<m>[0-5]\d)"
            r"(?::(?P<s>[0-5]\d))?(?![\d:])(?P<suffix>)"
        )
        self.hour_ampm_re = re.compile(
            r"(?<![\w.:,])(?P<h>1[0-2]|0?[1-9])\s?(?P<ap>[aApP])\.?\s?[mM]\.?(?!\w)"
        )
        self.iso_date_re = re.compile(
            r"(?<![\w.\-/])(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})(?![\w\-/])"
        )
        if lang == "en":
            self.num_date_re = re.compile(
                r"(?<![\w.\-/])(?P<mo>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})(?![\w\-/])"
            )
        else:
            self.num_date_re = re.compile(
                r"(?<![\w.\-/])(?P<d>\d{1,2})(?P<sep>[./-])(?P<mo>\d{1,2})(?P=sep)(?P<y>\d{4})"
                r"(?![\w\-/])"
            )
        months = _alternation(W.MONTHS[lang])
        self.months = {name.lower(): i + 1 for i, name in enumerate(W.MONTHS[lang])}
        if lang == "en":
            self.month_day_re = re.compile(
                rf"\b(?P<month>{months})\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
                r"(?P<year>,?\s+\d{4}\b)?"
            )
            self.day_month_re = re.compile(
                rf"(?<![\w.,])(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{months})\b"
            )
        elif lang == "de":
            self.day_month_re = re.compile(
                rf"(?:(?P<pre>\b\w+)\s+)?(?<![\w.,])(?P<d>\d{{1,2}})\.\s?(?P<month>{months})\b"
            )
            self.month_day_re = None
        else:
            self.day_month_re = re.compile(
                rf"(?<![\w.,])(?P<d>1)(?:er|re|º|°)?\s+(?:de\s+)?(?P<month>{months})\b"
            )
            self.month_day_re = None
        self.year_context_re = re.compile(
            {
                "en": r"(?i)\b(?P<pre>in|since|from|until|by|year|of)\s+(?P<y>1[1-9]\d\d|20\d\d)\b"
                      r"(?![.,]\d)",
                "de": r"\b(?P<pre>im Jahre?|Jahr|seit|bis|ab|von)\s+(?P<y>1[1-9]\d\d|20\d\d)\b"
                      r"(?![.,]\d)",
                "nl": r"\b(?P<pre>in|sinds|tot|vanaf|jaar)\s+(?P<y>1[1-9]\d\d|20\d\d)\b"
                      r"(?![.,]\d)",
            }.get(lang, r"(?!x)x")
        )
        ordinal_suffix = {
            "en": r"(?i:st|nd|rd|th)",
            "fr": r"(?:er|re|ère|ème|eme|e|ᵉʳ|ᵉ)",
            "es": r"(?:\.?[ºª])",
            "it": r"(?:[ºª])",
            "nl": r"(?:ste|de|e)",
            "de": r"(?!x)x",
        }[lang]
        self.ordinal_re = re.compile(rf"(?<![\w.,])(?P<n>\d+)(?P<suf>{ordinal_suffix})(?!\w)")
        abbreviations = W.ABBREVIATIONS[lang]
        self.abbreviations = abbreviations
        items = sorted(abbreviations, key=len, reverse=True)
        alternatives = "|".join(
            re.escape(a) + ("" if a.endswith(".") else r"(?!\w)") for a in items
        )
        self.abbrev_re = re.compile(rf"(?<![\w.])(?P<abbr>{alternatives})(?P<end>\s*$)?")
        number_abbr, self.number_word = W.NUMBER_ABBREVIATIONS[lang]
        self.number_abbr_re = re.compile(
            rf"(?<![\w.])(?:{_alternation(number_abbr)})\s?(?=\d)"
        )
        titles = W.TITLE_BEFORE_NAME.get(lang, {})
        self.titles = titles
        self.title_re = (
            re.compile(rf"(?<![\w.])(?P<t>{_alternation(list(titles))})\s+(?=[A-ZÀ-Ý])")
            if titles else None
        )
        # A number glued to letters ("90s", "4K", "COVID19") is left as written.
        self.number_re = re.compile(rf"(?<![\w.,]){num}(?![\w]|[.,:]\d)")
        # Phone numbers: "+49 30 1234567", "555-1234", "(555) 123-4567" -> digit by digit
        self.phone_re = re.compile(
            r"(?<![\w.,+-])(?:\+\d[\d \-]{5,}\d|(?:\(\d{3}\)\s?|\d{3}-)?\d{3}-\d{4})"
            r"(?![\w-]|[.,]\d)"
        )
        self.de_ein_re = re.compile(r"\b(?P<w>(?:\w*(?:hundert|tausend))?eins)(?= [A-ZÄÖÜ])")

    # -- rules -----------------------------------------------------------------------

    def run(self, text: str) -> str:
        text = self.abbreviations_pass(text)
        text = text.replace(" & ", f" {W.AMPERSAND[self.lang]} ")
        text = self.dates_pass(text)
        text = _sub(self.phone_re, self.phone, text)
        text = self.times_pass(text)
        text = _sub(self.currency_before_re, self.currency, text)
        text = _sub(self.currency_after_re, self.currency, text)
        text = _sub(self.range_re, self.number_range, text)
        text = _sub(self.unit_re, self.unit, text)
        text = _sub(self.ordinal_re, self.ordinal, text)
        text = _sub(self.year_context_re,
                    lambda m: f"{m.group('pre')} {_year(int(m.group('y')), self.lang)}", text)
        text = _sub(self.number_re, lambda m: _number_words(_parse(m), self.lang), text)
        if self.lang == "de":  # "eins Grad" -> "ein Grad" before a noun
            text = self.de_ein_re.sub(lambda m: m.group("w")[:-1], text)
        return text

    def abbreviations_pass(self, text: str) -> str:
        if self.title_re is not None:
            text = _sub(self.title_re, lambda m: self.titles[m.group("t")] + " ", text)
        text = _sub(self.number_abbr_re, lambda m: self.number_word + " ", text)

        def expand(match: re.Match[str]) -> str:
            abbr = match.group("abbr")
            words = self.abbreviations[abbr]
            if match.group("end") is not None and abbr.endswith("."):
                return words + "." + match.group("end")
            return words + (match.group("end") or "")

        return _sub(self.abbrev_re, expand, text)

    def number_range(self, match: re.Match[str]) -> str:
        a, b = match.group("a"), match.group("b")
        to = W.RANGE_WORD[self.lang]
        years = [int(x) for x in (a, b) if len(x) == 4 and x.isdigit()]
        if self.lang == "en" and len(years) == 2 and all(1100 <= y <= 2099 for y in years):
            return f"{_year(years[0], 'en')} {to} {_year(years[1], 'en')}"
        return f"{a} {to} {b}"  # the digits are read by the later passes

    def phone(self, match: re.Match[str]) -> str:
        groups = re.findall(r"\d+", match.group(0))
        words = ", ".join(_digits(group, self.lang) for group in groups)
        plus = f"{W.PLUS_WORD[self.lang]} " if match.group(0).startswith("+") else ""
        return plus + words

    def currency(self, match: re.Match[str]) -> str | None:
        cur = match.group("cur")
        code = W.CURRENCY_SYMBOLS.get(cur, cur)
        names = W.CURRENCIES.get(code, {}).get(self.lang)
        if names is None:
            return None
        num = _parse(match)
        (major_sing, major_plural), (minor_sing, minor_plural) = names
        lang = self.lang
        if len(num.fraction) > 2:
            return f"{_number_words(num, lang)} {major_plural}"
        cents = int(num.fraction.ljust(2, "0")) if num.fraction else 0
        major = int(num.integer)
        minus = f"{W.MINUS_WORD[lang]} " if num.negative else ""
        parts = []
        if major or not cents:
            feminine = code in W.FEMININE_CURRENCIES.get(lang, ())
            major_words = _before_noun(_cardinal(major, lang), lang, feminine)
            singular = major == 1 or (lang == "fr" and major < 2)
            parts.append(f"{major_words} {major_sing if singular else major_plural}")
        if cents:
            cent_words = _before_noun(_cardinal(cents, lang), lang)
            parts.append(f"{cent_words} {minor_sing if cents == 1 else minor_plural}")
        return minus + f" {W.CURRENCY_AND[lang]} ".join(parts)

    def unit(self, match: re.Match[str]) -> str | None:
        unit = W.UNIT_ALIASES.get(match.group("unit"), match.group("unit"))
        if unit in W.UNITS_NEED_SPACE and not match.group("space"):
            return None
        num = _parse(match)
        singular, plural = W.UNITS[unit][self.lang]
        name = singular if num.is_singular(self.lang) else plural
        feminine = unit in W.FEMININE_UNITS.get(self.lang, ())
        return f"{_number_words(num, self.lang, before_noun=True, feminine=feminine)} {name}"

    def ordinal(self, match: re.Match[str]) -> str:
        value = int(match.group("n"))
        suffix = match.group("suf")
        lang = self.lang
        if lang == "fr" and value == 1:
            return "première" if suffix in ("re", "ère") else "premier"
        words = _ordinal(value, lang)
        if lang in ("es", "it") and "ª" in suffix:
            words = " ".join(w[:-1] + "a" if w.endswith("o") else w for w in words.split())
        return words

    # -- dates -----------------------------------------------------------------------

    def date_words(self, day: int, month: int, year: int | None, pre: str | None = None) -> str:
        lang = self.lang
        month_name = W.MONTHS[lang][month - 1]
        year_words = f" {_year(year, lang)}" if year is not None else ""
        if lang == "en":
            sep = "," if year is not None else ""
            return f"{month_name} {_ordinal(day, lang)}{sep}{year_words}"
        if lang == "de":
            ordinal = _ordinal(day, lang)
            pre_l = (pre or "").lower()
            if pre_l in ("am", "vom", "zum", "im", "den", "dem", "beim", "ab", "seit", "bis"):
                ordinal += "n"
            elif pre_l not in ("der", "die", "das"):
                ordinal += "r"
            return f"{ordinal} {month_name}{year_words}"
        if lang == "fr":
            day_words = "premier" if day == 1 else _cardinal(day, lang)
            return f"{day_words} {month_name}{year_words}"
        if lang == "es":
            year_part = f" de{year_words}" if year is not None else ""
            return f"{_cardinal(day, lang)} de {month_name}{year_part}"
        if lang == "it":
            day_words = "primo" if day == 1 else _cardinal(day, lang)
            return f"{day_words} {month_name}{year_words}"
        return f"{_cardinal(day, lang)} {month_name}{year_words}"

    def dates_pass(self, text: str) -> str:
        def numeric(match: re.Match[str]) -> str | None:
            day, month, year = int(match.group("d")), int(match.group("mo")), int(match.group("y"))
            if not (1 <= month <= 12 and 1 <= day <= 31):
                return None
            pre = None
            if self.lang == "de":
                before = match.string[: match.start()].split()
                pre = before[-1] if before else None
            return self.date_words(day, month, year, pre)

        text = _sub(self.iso_date_re, numeric, text)
        text = _sub(self.num_date_re, numeric, text)
        if self.month_day_re is not None:
            def month_day(match: re.Match[str]) -> str | None:
                day = int(match.group("d"))
                if not 1 <= day <= 31:
                    return None
                year = match.group("year")
                month = self.months[match.group("month").lower()]
                return self.date_words(day, month, int(year.strip(" ,")) if year else None)

            text = _sub(self.month_day_re, month_day, text)

        def day_month(match: re.Match[str]) -> str | None:
            day = int(match.group("d"))
            if not 1 <= day <= 31:
                return None
            month_name = match.group("month")
            lang = self.lang
            if lang == "en":
                return f"the {_ordinal(day, lang)} of {month_name}"
            if lang == "de":
                pre = match.group("pre")
                words = self.date_words(day, self.months[month_name.lower()], None, pre)
                return f"{pre} {words}" if pre else words
            day_words = {"fr": "premier", "it": "primo"}.get(lang, _cardinal(day, lang))
            joiner = " de " if lang == "es" else " "
            return f"{day_words}{joiner}{month_name}"

        return _sub(self.day_month_re, day_month, text)

    # -- times -----------------------------------------------------------------------

    def times_pass(self, text: str) -> str:
        text = _sub(self.time_re, self.time, text)
        if self.lang == "en":
            text = _sub(self.hour_ampm_re, lambda m: "{} {}".format(
                _cardinal(int(m.group("h")), "en"), "a.m." if m.group("ap") in "aA" else "p.m."),
                text)
        return text

    def time(self, match: re.Match[str]) -> str | None:
        hour, minute = int(match.group("h")), int(match.group("m"))
        seconds = match.group("s")
        suffix = (match.group("suffix") or "").strip()
        lang = self.lang
        if match.group(0)[len(match.group("h"))] == "." and not suffix:
            return None  # "10.30" without "Uhr"/"h" is a decimal number
        if seconds is not None:
            return self.duration(hour, minute, int(seconds))
        h_words = _cardinal(hour, lang)
        m_words = _cardinal(minute, lang)
        if lang == "en":
            ampm = ""
            if suffix and suffix[0] in "aApP":
                ampm = " a.m." if suffix[0] in "aA" else " p.m."
            elif suffix:
                return None
            if minute == 0:
                if hour == 0 and not ampm:
                    return "midnight"
                return f"{h_words}{ampm}" if ampm else f"{h_words} o'clock"
            if minute < 10:
                m_words = f"oh {m_words}"
            return f"{h_words} {m_words}{ampm}"
        if lang == "de":
            h_words = _before_noun(h_words, lang)
            return f"{h_words} Uhr" + (f" {m_words}" if minute else "")
        if lang == "nl":
            return f"{h_words} uur" + (f" {m_words}" if minute else "")
        if lang == "fr":
            if h_words.endswith("un"):
                h_words += "e"
            hour_word = "heure" if hour < 2 else "heures"
            return f"{h_words} {hour_word}" + (f" {m_words}" if minute else "")
        if h_words.endswith("uno"):
            h_words = h_words[:-1] + "a"
        if lang == "es":
            return f"{h_words} en punto" if not minute else f"{h_words} y {m_words}"
        return h_words if not minute else f"{h_words} e {m_words}"  # it

    def duration(self, hours: int, minutes: int, seconds: int) -> str:
        lang = self.lang
        parts = []
        for value, unit in ((hours, "h"), (minutes, "min"), (seconds, "s")):
            if value:
                singular, plural = W.UNITS[unit][lang]
                feminine = unit in W.FEMININE_UNITS.get(lang, ())
                words = _before_noun(_cardinal(value, lang), lang, feminine)
                parts.append(f"{words} {singular if value == 1 else plural}")
        if not parts:
            singular, plural = W.UNITS["s"][lang]
            return f"{_cardinal(0, lang)} {plural}"
        if len(parts) == 1:
            return parts[0]
        return ", ".join(parts[:-1]) + f" {W.DURATION_AND[lang]} " + parts[-1]


_COMPILED: dict[str, _European] = {}


def _normalize_european(segment: str, lang: str) -> str:
    rules = _COMPILED.get(lang)
    if rules is None:
        rules = _COMPILED[lang] = _European(lang)
    return rules.run(segment)


_PLAIN_NUMBER_RE = re.compile(
    r"(?<![0-9A-Za-zÀ-ÿ.,])(?P<sign>[-−](?=\d))?(?P<int>\d+)(?:\.(?P<frac>\d+))?"
    r"(?![0-9A-Za-zÀ-ÿ]|[.,:]\d)"
)


def _normalize_numbers_only(segment: str, lang: str) -> str:
    """Fallback for other num2words languages: plain numbers only."""

    def words(match: re.Match[str]) -> str | None:
        text = match.group(0).replace("−", "-")
        try:
            return num2words(Decimal(text) if "." in text else int(text), lang=lang)
        except (InvalidOperation, NotImplementedError, OverflowError, ValueError):
            return None

    return _sub(_PLAIN_NUMBER_RE, words, segment)
