"""The shared rewrite passes for alphabetic languages, driven by one `Language` table.

Order matters and is fixed here: dates, then phone numbers before times and quantities (so
"030 12345678" is not read as a quantity), currency and units before plain numbers,
and units before abbreviations (so "5 min." is five minutes, not "five minimum").
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import dates
from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize import words as W
from wyoming_omnivoice.text.normalize.regex import alternation, context, next_noun, sub
from wyoming_omnivoice.text.normalize.table import Context, Language


class Passes:
    """The compiled patterns and rewrite passes for one `Language`."""

    def __init__(self, lang: Language) -> None:
        self.lang = lang
        code = lang.code
        thousands = lang.thousands[:-1] + " ]" if lang.space_thousands else lang.thousands
        num = N.number_pattern(thousands, lang.fraction)
        g = lang.glue  # what may not touch a number: a letter, or only a Latin one (CJK)
        lead = rf"(?<![{g}.,])"
        self.num = num
        self.aliases = {**W.UNIT_ALIASES, **lang.unit_aliases}
        units = alternation({*W.UNITS, *self.aliases, *lang.units})
        # a dot after the unit is the abbreviation's when a lower-case word follows ("5 Min. lang")
        self.unit_re = re.compile(rf"{lead}{num}(?P<space>\s?)(?P<unit>{units})(?![{g}/²³])"
                                  r"(?:\.(?=\s+[a-zäöüßàâçéèêëîïôûùñ]))?")
        alone = alternation(u for u in {*W.UNITS, *self.aliases, *lang.units} if len(u) > 1)
        self.unit_alone_re = re.compile(
            rf"(?P<per>\b(?:{lang.per_words}) )(?P<unit>{alone})(?![\w/²³])")
        self.duration_re = re.compile(
            rf"{lead}(?P<h>\d+)\s?(?:{lang.hour_abbr})\s+(?P<m>\d+)\s?(?:{lang.minute_abbr})\b"
            rf"(?:\s+(?P<s>\d+)\s?(?:{lang.second_abbr})\b)?"
            r"(?:\.(?=\s+[a-zäöüßàâçéèêëîïôûùñ]))?"
        )
        self.range_re = re.compile(
            r"(?<![\w.,\-])(?P<a>\d+(?:[.,]\d+)?)(?:[-–]|\s–\s)(?P<b>\d+(?:[.,]\d+)?)"
            r"(?![\d\-]|[.,]\d)"
        )
        codes = alternation({*W.CURRENCIES, *lang.currencies})
        symbols = alternation({*[s for s in W.CURRENCY_SYMBOLS if s != "￥"],
                               *lang.currency_symbols})
        self.currency_before_re = re.compile(
            rf"(?<![{g}])(?P<cur>{symbols}|(?:{codes})(?=\s?\d))\s?{num}(?![\d]|[.,]\d)"
        )
        self.currency_after_re = re.compile(rf"{lead}{num}\s?(?P<cur>{symbols}|{codes})(?![{g}])")
        titles = lang.titles_before_name
        self.title_re = re.compile(
            rf"(?<![\w.])(?P<t>{alternation(titles)})\s+(?=[A-ZÀ-Ý])") if titles else None
        number_abbr, self.number_word = lang.number_abbreviations
        self.number_abbr_re = re.compile(
            rf"(?<![{g}.])(?:{alternation(number_abbr)})\s?(?=\d)") if number_abbr else None
        items = sorted(lang.abbreviations, key=len, reverse=True)
        alternatives = "|".join(
            re.escape(a) + ("" if a.endswith(".") else rf"(?![{g}])") for a in items)
        self.abbrev_re = re.compile(rf"(?<![{g}.])(?P<abbr>{alternatives})(?P<end>\s*$)?")
        after_word = lang.abbreviations_after_word
        self.after_word_re = re.compile(
            rf"(?P<w>\b[A-ZÀ-Ý][\w-]*?)(?P<sp> ?)(?P<abbr>{alternation(after_word)})(?!\w)"
            r"(?P<end>(?=\s*$))?"
        ) if after_word else None
        self.ordinal_re = re.compile(
            rf"(?<![{g}.,])(?P<n>\d+)(?P<suf>{lang.ordinal_suffix})(?![{g}])")
        dot_next = lang.ordinal_dot_next
        self.dot_ordinal_re = re.compile(
            rf"(?<![{g}.,])(?P<n>\d{{1,3}})\.(?= +(?:{dot_next}))") if lang.ordinal_dot else None
        self.year_re = re.compile(
            rf"(?P<pre>\b(?:{lang.year_before})\s+)?(?<![{g}.,])(?P<y>1[1-9]\d\d|20\d\d)"
            rf"(?![{g}.,:]\d|[{g}]|[.,]\d)(?P<post>(?={lang.year_after}))?"
        )
        # a model number after an upper-case name: "RTX 4090", "GTX 970"
        self.model_re = re.compile(
            r"(?<![\w])(?P<m>[A-Z]{2}[A-Za-z]*+[- ]?)(?P<d>\d{3,4})(?!\w|[.,]\d)")
        self.number_re = re.compile(rf"(?<![{g}.,]){num}(?![{g}]|[.,:]\d)")
        self.phone_re = re.compile(  # never the "000" groups of "1 000 000"
            r"(?<![\w.,+-])(?<!\d[ \u00a0\u202f])"
            r"(?:\+\d[\d \-]{5,}\d|(?:\(\d{3}\)\s?|\d{3}-)?\d{3}-\d{4}"
            r"|0\d{1,4}(?:[ /-]\d{2,8}){1,4}|0\d{8,12}"
            rf"|{lang.phone_extra})(?![\w-]|[.,]\d)"
        )
        self.pair_phone_re = re.compile(
            r"(?<![\w.,+-])0\d(?P<sep>[ .])\d\d(?:(?P=sep)\d\d){3}(?![\w-]|[.,]\d)"
        ) if lang.phone_pairs else None
        self.dates = dates.DatePasses(lang, self.duration)
        del code

    # -- the pipeline ------------------------------------------------------------------

    def run(self, text: str) -> str:
        lang = self.lang
        text = lang.prepare(text)
        if self.title_re is not None:
            text = sub(self.title_re, lambda m: lang.titles_before_name[m.group("t")] + " ",
                       text)
        if self.number_abbr_re is not None:
            text = sub(self.number_abbr_re, lambda m: self.number_word + " ", text)
        text = text.replace(" & ", f" {lang.and_word} ")
        text = self.dates.dates(text)
        if self.pair_phone_re is not None:
            text = sub(self.pair_phone_re, self.pair_phone, text)
        text = sub(self.phone_re, self.phone, text)
        text = self.dates.times(text)
        text = sub(self.currency_before_re, self.currency, text)
        text = sub(self.currency_after_re, self.currency, text)
        text = sub(self.range_re, self.number_range, text)
        text = sub(self.duration_re, self.duration_match, text)
        text = sub(self.unit_re, self.unit, text)
        text = sub(self.unit_alone_re, self.unit_alone, text)
        text = self.abbreviations(text)
        text = sub(self.ordinal_re, lambda m: lang.ordinal_words(
            int(m.group("n")), m.group("suf"), context(m)), text)
        if self.dot_ordinal_re is not None:
            text = sub(self.dot_ordinal_re, lambda m: lang.ordinal_words(
                int(m.group("n")), ".", context(m)), text)
        text = sub(self.model_re, self.model_number, text)
        text = sub(self.year_re, self.year, text)
        text = sub(self.number_re, self.number, text)
        return lang.finish(text)

    # -- rules -------------------------------------------------------------------------

    def abbreviations(self, text: str) -> str:
        lang = self.lang
        if self.after_word_re is not None:
            text = sub(self.after_word_re, lambda m: m.group("w") + m.group("sp")
                       + lang.abbreviations_after_word[m.group("abbr")]
                       + ("." if m.group("end") is not None else ""), text)

        def expand(match: re.Match[str]) -> str:
            abbr = match.group("abbr")
            words = lang.abbreviations[abbr]
            if match.group("end") is not None and abbr.endswith("."):
                return words + "." + match.group("end")
            return words + (match.group("end") or "")

        return sub(self.abbrev_re, expand, text)

    def number(self, match: re.Match[str]) -> str:
        return self.lang.number(N.parse(match), next_noun(match), context(match))

    def year(self, match: re.Match[str]) -> str | None:
        if match.group("pre") is None and match.group("post") is None:
            return None
        value = int(match.group("y"))
        if self.lang.year_in_context is not None:
            pre = match.group("pre") or ""
            ctx = context(match)
            if pre:
                ctx = Context(before=pre.split()[-1], after=ctx.after)
            return pre + self.lang.year_in_context(value, ctx)
        return (match.group("pre") or "") + self.lang.year(value)

    def model_number(self, match: re.Match[str]) -> str:
        return match.group("m") + N.pairs(match.group("d"), self.lang.code, self.lang.model_oh,
                                          self.lang.digit_words)

    def number_range(self, match: re.Match[str]) -> str:
        a, b = match.group("a"), match.group("b")
        years = [int(x) for x in (a, b) if len(x) == 4 and x.isdigit()]
        if len(years) == 2 and all(1100 <= y <= 2099 for y in years):
            return f"{self.lang.year(years[0])} {self.lang.range_word} {self.lang.year(years[1])}"
        before = f"{self.lang.range_before} " if self.lang.range_before else ""
        before = "" if context(match).before.lower() == self.lang.range_before else before
        # the digits are read by the later passes, in the case "od"/"от" asks for
        return f"{before}{a} {self.lang.range_word} {b}"

    def phone(self, match: re.Match[str]) -> str:
        groups = re.findall(r"\d+", match.group(0))
        code = self.lang.code
        words = ", ".join(N.digits(group, code, self.lang.phone_zero, self.lang.digit_words)
                          for group in groups)
        plus = f"{self.lang.plus_word} " if match.group(0).startswith("+") else ""
        return plus + words

    def pair_phone(self, match: re.Match[str]) -> str:
        groups = re.findall(r"\d\d", match.group(0))
        first = N.digits(groups[0], self.lang.code, words=self.lang.digit_words)
        return ", ".join([first] + [self.lang.cardinal(int(g)) if g[0] != "0"
                                    else N.digits(g, self.lang.code, words=self.lang.digit_words)
                                    for g in groups[1:]])

    def currency(self, match: re.Match[str]) -> str | None:
        lang = self.lang
        cur = match.group("cur")
        code = lang.currency_symbols.get(cur) or W.CURRENCY_SYMBOLS.get(cur, cur)
        own = lang.currencies.get(code)
        if own is not None:
            names: tuple[tuple[str, ...], tuple[str, ...]] = (own[0].forms, own[1].forms)
        elif code in W.CURRENCIES and lang.code in W.CURRENCIES[code]:
            names = W.CURRENCIES[code][lang.code]
        else:
            return None
        num = N.parse(match)
        ctx = context(match)
        major_forms, minor_forms = names

        def form(forms: tuple[str, ...], value: N.Num) -> str:
            if own is None:
                return forms[0] if lang.singular(value) else forms[1]
            return forms[min(lang.form_index(value, ctx), len(forms) - 1)]

        if len(num.fraction) > 2:
            return f"{lang.number(num)} {form(major_forms, num)}"
        cents = int(num.fraction.ljust(2, "0")) if num.fraction else 0
        major = N.Num(False, num.integer, "")
        minus = f"{lang.minus_word} " if num.negative else ""
        agree = lang.unit_agree or lang.agree
        parts = []
        if int(major.integer) or not cents:
            noun = form(major_forms, major)
            parts.append(f"{lang.number(major, noun, ctx, agree=agree)} {noun}")
        if cents:
            minor = N.Num(False, str(cents), "")
            noun = form(minor_forms, minor)
            parts.append(f"{lang.number(minor, noun, ctx, agree=agree)} {noun}")
        joiner = lang.currency_and or lang.and_word
        words = minus + (" " if joiner == " " else f" {joiner} ").join(parts)
        if cur.endswith(".") and not match.string[match.end():].strip():
            words += "."  # "23,50 kr." at the end: the dot also ends the sentence
        return words

    def unit(self, match: re.Match[str]) -> str | None:
        lang = self.lang
        written = match.group("unit")
        unit = self.aliases.get(written, written)
        if not match.group("space") and (unit in W.UNITS_NEED_SPACE or (
                len(written) == 1 and written in self.lang.unit_aliases)):
            return None
        num = N.parse(match)
        ctx = context(match)
        noun = self.unit_noun(unit, lang.form_index(num, ctx))
        words = lang.number(num, noun, ctx, agree=lang.unit_agree)
        return f"{words} {noun}"

    def unit_alone(self, match: re.Match[str]) -> str:
        """"per kWh" -> "per kilowatt hour", "za kWh" -> "za kilowatogodzinę": the form
        of one unit after that word."""
        per = match.group("per")
        index = self.lang.form_index(N.Num(False, "1", ""), Context(before=per.strip()))
        unit = match.group("unit")
        return per + self.unit_noun(self.aliases.get(unit, unit), index)

    def unit_noun(self, unit: str, index: int) -> str:
        """The unit's noun in form ``index`` (`Language.form_index`): the language's own
        table first, then the shared (singular, plural) names."""
        own = self.lang.units.get(unit)
        if own is not None:
            return own.form(index)
        return W.UNITS[unit][self.lang.code][min(index, 1)]

    def duration_match(self, match: re.Match[str]) -> str:
        seconds = match.group("s")
        return self.duration(int(match.group("h")), int(match.group("m")),
                             int(seconds) if seconds else 0, context(match))

    def duration(self, hours: int, minutes: int, seconds: int, ctx: Context | None = None
                 ) -> str:
        lang = self.lang
        ctx = ctx or Context()
        parts = []
        for value, unit in ((hours, "h"), (minutes, "min"), (seconds, "s")):
            if value:
                num = N.Num(False, str(value), "")
                noun = self.unit_noun(unit, lang.form_index(num, ctx))
                words = lang.number(num, noun, ctx, agree=lang.unit_agree)
                parts.append(f"{words} {noun}")
        if not parts:
            zero = N.Num(False, "0", "")
            return f"{lang.cardinal(0)} {self.unit_noun('s', lang.form_index(zero, ctx))}"
        if len(parts) == 1:
            return parts[0]
        joiner = f" {lang.and_word} " if lang.duration_and else " "
        return ", ".join(parts[:-1]) + joiner + parts[-1]
