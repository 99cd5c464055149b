"""Date and clock-time passes for alphabetic languages.

Dates: ISO ("2024-03-05"), numeric with a year ("05.03.2024", "3/5/2024"), numeric without
one after a word that introduces a date ("am 24.12.", "on 12/24", Dutch "op 1-12"), and
month names ("5. März", "Dec 3rd",
"1er mars"). Times: "10:30", "10.30 Uhr", "10h30", "7pm". How each is said comes from the
language's `date_words` / `time_words`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from wyoming_omnivoice.text.normalize.regex import alternation, context, sub
from wyoming_omnivoice.text.normalize.table import Context, Language

#: Reads a duration: (hours, minutes, seconds, context) -> words (:meth:`.passes.Passes.duration`).
DurationWords = Callable[[int, int, int, Context | None], str]

_MONTH_ABBREVIATIONS = {"Sept": 9}


class DatePasses:
    def __init__(self, lang: Language, duration: DurationWords) -> None:
        self._sub = sub
        self._context = context
        self.lang = lang
        self._duration = duration
        g = lang.glue
        self.iso_re = re.compile(
            rf"(?<![{g}.\-/])(?P<y>\d{{4}})-(?P<mo>\d{{2}})-(?P<d>\d{{2}})(?![{g}\-/])")
        first, second = ("d", "mo") if lang.day_first else ("mo", "d")
        self.numeric_re = re.compile(
            rf"(?<![{g}.\-/])(?P<{first}>\d{{1,2}})(?P<sep>[./-])(?P<{second}>\d{{1,2}})(?P=sep)"
            rf"(?P<y>\d{{4}})(?![{g}\-/])"
        )
        # A day and month without a year ("24/12", "24.12.", "1-12") is a date only after a
        # word that introduces one ("on", "am", "le", "op"): "1/2 cup" stays a fraction.
        pre = rf"(?P<pre>\b(?:{lang.date_before}),? )"
        self.slash_re = re.compile(pre + r"(?P<a>\d{1,2})/(?P<b>\d{1,2})(?![\w/]|[.,]\d)")
        self.dotted_re = re.compile(
            pre + r"(?P<d>\d{1,2})\.(?P<mo>\d{1,2})\.(?!\d)(?P<end>(?=\s*$))?"
        ) if lang.dotted_date else None
        self.dash_re = re.compile(
            pre + r"(?P<d>\d{1,2})-(?P<mo>\d{1,2})(?![\w-]|[.,]\d)") if lang.dash_date else None
        months = list(lang.months)
        self.months = {name.lower(): i + 1 for i, name in enumerate(months)}
        for name in months:
            if len(name) > 4:
                self.months.setdefault(name[:3].lower(), self.months[name.lower()])
        self.months.update({k.lower(): v for k, v in _MONTH_ABBREVIATIONS.items()})
        abbreviations = [name[:3] for name in months if len(name) > 4] + list(
            _MONTH_ABBREVIATIONS)
        month_names = alternation(months + [f"{a}." for a in abbreviations] + abbreviations)
        ordinal = rf"(?:{lang.ordinal_suffix})?"
        self.month_day_re = re.compile(
            rf"\b(?P<month>{month_names})(?!\w)\s+(?P<d>\d{{1,2}}){ordinal}(?!\w)"
            r"(?P<year>,?\s+\d{4}\b)?"
        ) if not lang.day_first else None
        self.day_month_re = re.compile(
            rf"(?<![\w.,])(?P<d>\d{{1,2}})(?:{lang.ordinal_suffix}|\.)?\s+(?:of\s+|de\s+)?"
            rf"(?P<month>{month_names})(?!\w)(?P<year>\s+\d{{4}}\b)?"
        )
        self.time_re = re.compile(
            rf"(?<![{g}.:,])(?P<h>[01]?\d|2[0-3])(?P<sep>[:.]" + ("|\\s?h\\s?" if lang.hour_letter
                                                                 else "")
            + r")(?P<m>[0-5]\d)(?::(?P<s>[0-5]\d))?(?![\d:]|\s?min)"
            + (rf"(?P<suffix>\s?(?:{lang.time_suffix}))?" if lang.time_suffix else "(?P<suffix>)")
        )
        self.hour_ampm_re = re.compile(
            r"(?<![\w.:,])(?P<h>1[0-2]|0?[1-9])\s?(?P<ap>[aApP])\.?\s?[mM]\.?(?!\w)")

    def _month(self, name: str) -> int:
        return self.months[name.rstrip(".").lower()]

    def dates(self, text: str) -> str:
        lang, sub = self.lang, self._sub

        def numeric(match: re.Match[str]) -> str | None:
            year = match.groupdict().get("y")
            return self._date(match, int(match.group("d")), int(match.group("mo")),
                              int(year) if year else None)

        text = sub(self.iso_re, numeric, text)
        text = sub(self.numeric_re, numeric, text)
        def short(match: re.Match[str]) -> str | None:
            a, b = int(match.group("a" if "a" in match.groupdict() else "d")), int(
                match.group("b" if "b" in match.groupdict() else "mo"))
            day, month = (a, b) if lang.day_first or a > 12 else (b, a)
            pre = match.group("pre")
            words = self._date(match, day, month, None, before=pre.strip(" ,"))
            if words is None:
                return None
            end = "." if match.groupdict().get("end") is not None else ""
            return pre + words + end  # the date's last dot also ends the sentence

        for pattern in (self.dotted_re, self.dash_re, self.slash_re):
            if pattern is not None:
                text = sub(pattern, short, text)

        def named(match: re.Match[str]) -> str | None:
            year = match.group("year")
            return self._date(match, int(match.group("d")), self._month(match.group("month")),
                              int(year.strip(" ,")) if year else None)

        if self.month_day_re is not None:
            text = sub(self.month_day_re, named, text)
        return sub(self.day_month_re, named, text)

    def _date(self, match: re.Match[str], day: int, month: int, year: int | None,
              before: str | None = None) -> str | None:
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return None
        ctx = self._context(match)
        if before is not None:
            ctx = Context(before=before, after=ctx.after)
        return self.lang.date_words(day, month, year, ctx)

    def times(self, text: str) -> str:
        text = self._sub(self.time_re, self.time, text)
        if self.lang.am_pm:
            text = self._sub(self.hour_ampm_re, self.hour_ampm, text)
        return text

    def hour_ampm(self, match: re.Match[str]) -> str | None:
        suffix = "am" if match.group("ap") in "aA" else "pm"
        return self.lang.time_words(int(match.group("h")), -1, suffix, self._context(match))

    def time(self, match: re.Match[str]) -> str | None:
        hour, minute = int(match.group("h")), int(match.group("m"))
        seconds = match.group("s")
        suffix = (match.group("suffix") or "").strip()
        ctx: Context = self._context(match)
        if match.group("sep") == "." and not suffix and ctx.before not in \
                self.lang.time_dot_before:
            return None  # "10.30" without "Uhr"/"h"/"klockan" is a decimal number
        if seconds is not None:
            return self._duration(hour, minute, int(seconds), None)
        return self.lang.time_words(hour, minute, suffix, ctx)
