"""What the Slavic languages (pl, cs, sk, ru, uk, hr, sl, bg) share: the noun form a
numeral governs, and noun tables for the gender and case of the word after a number.

Slavic numerals govern their noun: 1 takes the nominative singular ("jedna lampa"), 2-4 a
paucal form (Polish/Czech/Ukrainian nominative plural "dwie lampy", Russian genitive
singular "две лампы"), 5 and up the genitive plural ("pięć lamp"), a decimal the genitive
singular ("dwadzieścia jeden przecinek pięć stopnia"). A unit `Noun` holds its forms in
that order (`ONE`, `FEW`, `MANY`, `FRACTION`), plus the accusative singular where the
language needs it ("na jedną godzinę", `ACCUSATIVE`).

The numeral in turn agrees with the noun's gender ("dwie lampy", "dwa okna"), so each
language keeps a small table of the nouns Home Assistant replies put after a number
(devices, rooms, time words) with the forms they take there; the unit nouns join it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Noun

ONE, FEW, MANY, FRACTION, ACCUSATIVE, DUAL = range(6)


def noun(gender: str, one: str, few: str, many: str, fraction: str, acc: str = "",
         tail: str = "", dual: str = "") -> Noun:
    """A unit or currency noun in the forms a numeral governs (`ONE` ... `DUAL`; the
    accusative is ``one`` and the Slovene dual ``few`` unless given), each followed by
    ``tail`` ("za hodinu")."""
    forms = (one, few, many, fraction, acc or one, dual or few)
    return Noun(gender, tuple(f"{form} {tail}".strip() for form in forms))


def count_form(num: Num, few_after_teens: bool = True) -> int:
    """`ONE`, `FEW`, `MANY` or `FRACTION` for a written number (Polish, Russian and
    Ukrainian rule: 21 and 31 take ONE in Russian/Ukrainian, handled by the caller)."""
    if num.fraction:
        return FRACTION
    value = int(num.integer)
    if value == 1:
        return ONE
    if value % 10 in (2, 3, 4) and value % 100 not in (12, 13, 14) and few_after_teens:
        return FEW
    return MANY


def last_digit_form(num: Num) -> int:
    """Croatian (and Russian) rule: the last digit decides, so 21 takes `ONE` ("dvadeset
    jedan stupanj") and 22 `FEW`; 11-14 take `MANY`."""
    if num.fraction:
        return FRACTION
    value = int(num.integer)
    if value % 10 == 1 and value % 100 != 11:
        return ONE
    return count_form(num)


def dual_form(num: Num) -> int:
    """Slovene rule: the last two digits decide: 1 `ONE`, 2 `DUAL` ("dve lučki"), 3 and 4
    `FEW` ("tri lučke"), else `MANY` ("pet lučk", "enaindvajset stopinj")."""
    if num.fraction:
        return FRACTION
    rest = int(num.integer) % 100
    if int(num.integer) and rest == 1:
        return ONE
    return {2: DUAL, 3: FEW, 4: FEW}.get(rest, MANY)


class NounTable:
    """Written noun form -> (gender, case), from hand-written lines and unit nouns.

    Each line is ``lemma gender form:case form:case ...``; the lemma itself is the
    nominative singular. A form listed twice keeps its first reading, so list the
    reading that matters after a number first.
    """

    def __init__(self, lines: Iterable[str], units: Iterable[Noun] = (),
                 unit_cases: tuple[str, ...] = ("nom", "nom", "gen", "gen", "acc")) -> None:
        self.forms: dict[str, tuple[str, str]] = {}
        for line in lines:
            lemma, gender, *forms = line.split()
            self._add(lemma, gender, "nom")
            for item in forms:
                form, _, case = item.partition(":")
                self._add(form, gender, case)
        for noun in units:
            for form, case in zip(noun.forms, unit_cases, strict=False):
                self._add(form.split()[0], noun.gender, case)

    def _add(self, form: str, gender: str, case: str) -> None:
        self.forms.setdefault(form.lower(), (gender, case))

    def get(self, noun: str | None) -> tuple[str, str] | None:
        """(gender, case) of the first word of ``noun``, or None when it is not known."""
        if not noun:
            return None
        return self.forms.get(noun.split()[0].lower())

    def singular_gender(self, noun: str | None, feminine: tuple[str, ...],
                        neuter: tuple[str, ...]) -> str | None:
        """The gender of a noun after "1" when the table lacks it, from the nominative
        singular's ending ("pralka" feminine, "gniazdo" neuter), else None."""
        if not noun or not noun[:1].isalpha():
            return None
        word = noun.split()[0].lower()
        if word.endswith(neuter):
            return "n"
        return "f" if word.endswith(feminine) else None


def replace_last(words: str, table: Mapping[str, str]) -> str:
    """Replace the last word of a cardinal by its form in ``table`` ("dwadzieścia dwa" ->
    "dwadzieścia dwie")."""
    head, _, last = words.rpartition(" ")
    new = table.get(last)
    if new is None:
        return words
    return f"{head} {new}" if head else new


def day_range(first: str, second: str, months: Iterable[str],
              day_words: Callable[[int], str]) -> Callable[[str], str]:
    """A rewrite of "od 1 do 3 grudnia", "с 3 по 5 декабря": the first day has no month of
    its own, so it is read here as the genitive ordinal the preposition asks for
    (``day_words``); the second is left to the date pass."""
    month = "|".join(re.escape(m) for m in months)
    pattern = re.compile(
        rf"\b(?P<p1>{first}) (?P<d>\d{{1,2}})\.? (?P<p2>{second}) (?=\d{{1,2}}\.? (?:{month})\b)")

    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            day = int(m.group("d"))
            if not 1 <= day <= 31:
                return m.group(0)
            return f"{m.group('p1')} {day_words(day)} {m.group('p2')} "

        return pattern.sub(one, text)

    return rewrite


def year_abbreviation(prepositions: str, abbreviation: str, locative: str,
                      genitive: str) -> Callable[[str], str]:
    """A rewrite of the abbreviated year: "в 1999 г." -> "в 1999 году" (after the
    locative's preposition), "2024 г." -> "2024 года" (else the genitive); the year pass
    then reads the number in that case. A sentence-final abbreviation keeps its full stop."""
    pattern = re.compile(rf"(?P<pre>\b{prepositions} )?(?P<y>\d{{4}}) ?"
                         rf"{re.escape(abbreviation)}\.(?!\w)(?P<end>\s*$)?")

    def year(m: re.Match[str]) -> str:
        word = locative if m.group("pre") else genitive
        end = "." if m.group("end") is not None else ""
        return f"{m.group('pre') or ''}{m.group('y')} {word}{end}"

    return lambda text: pattern.sub(year, text)


def today_date(days: str, months: Iterable[str],
               words: Callable[[int, int, int | None], str]) -> Callable[[str], str]:
    """A rewrite of the date that says which day it is: "Danes je 5. 3. 2024" -> "Danes
    je peti marec ..." (Slovene), "Danas je 5. ožujka" -> "Danas je peti ožujka"
    (Croatian): the nominative, where a date elsewhere ("je 3. decembra", "on the 3rd") is
    in the genitive. ``days`` is the regex of "today", "tomorrow" ...; ``words`` reads
    (day, month, year)."""
    names = list(months)
    month = "|".join(re.escape(m) for m in names)
    pattern = re.compile(
        rf"\b(?P<pre>(?:{days}) (?:je|bo) )(?P<d>\d{{1,2}})\. ?(?:(?P<m>\d{{1,2}})\. ?"
        rf"|(?P<name>{month}) ?)(?P<y>\d{{4}}(?:\.(?!\s*$))?)?(?!\d)")

    def rewrite(m: re.Match[str]) -> str:
        day = int(m.group("d"))
        month_no = int(m.group("m")) if m.group("m") else names.index(m.group("name")) + 1
        if not (1 <= day <= 31 and 1 <= month_no <= 12):
            return m.group(0)
        year = int(m.group("y").rstrip(".")) if m.group("y") else None
        if m.group("m") and year is None:
            return m.group(0)  # "5. 3." alone: not sure it is a date
        tail = " " if m.group(0).endswith(" ") else ""
        return m.group("pre") + words(day, month_no, year) + tail

    return lambda text: pattern.sub(rewrite, text)
