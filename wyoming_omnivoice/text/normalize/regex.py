"""Regex helpers shared by the rewrite passes (:mod:`.passes`, :mod:`.dates`, :mod:`.other`).

A replacement that keeps words apart (:func:`sub`), an alternation of literal words longest
first, and the words around a match (:func:`context`, :func:`next_noun`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from wyoming_omnivoice.text.normalize.table import Context

Repl = Callable[[re.Match[str]], "str | None"]


def alternation(words: object) -> str:
    items = sorted((str(w) for w in words), key=len, reverse=True)  # type: ignore[attr-defined]
    return "|".join(re.escape(w) for w in items)


def _is_word_char(char: str) -> bool:
    """A letter or digit of an alphabetic script (CJK and kana need no spaces)."""
    return char.isalnum() and ord(char) < 0x2E80


def sub(pattern: re.Pattern[str], repl: Repl, text: str) -> str:
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


_WORD_BEFORE_RE = re.compile(r"([\w'’]+)[^\w]*$")
_WORDS_AFTER_RE = re.compile(r"^[\s\u00a0]*([\w'’-]+)(?:\s+([\w'’-]+))?")


def context(match: re.Match[str]) -> Context:
    """The word before and the word after a match (one word of lookahead each)."""
    source = match.string
    before = _WORD_BEFORE_RE.search(source[max(0, match.start() - 40):match.start()])
    after = _WORDS_AFTER_RE.match(source[match.end():match.end() + 60])
    return Context(before=before.group(1) if before else "",
                   after=after.group(1) if after else "")


def next_noun(match: re.Match[str]) -> str | None:
    """The word after a number, skipping one adjective before a German-style capitalised
    noun ("1 weitere Stunde"); None at the end of a sentence or before a digit."""
    after = _WORDS_AFTER_RE.match(match.string[match.end():match.end() + 60])
    if after is None or after.group(1)[0].isdigit():
        return None
    first, second = after.group(1), after.group(2)
    if first[0].islower() and second and second[0].isupper() and first.endswith(
            ("e", "er", "es", "en", "em")):
        return second
    return first
