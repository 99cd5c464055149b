"""Incremental sentence splitting for streamed text.

Text arrives in arbitrary fragments (Home Assistant forwards LLM deltas, split mid-word). A
sentence is released as soon as it is known to be complete, so synthesis can start while
the rest of the reply is still being generated:

- terminal punctuation (``. ! ? …``), optionally followed by closing quotes or brackets,
  then whitespace. The whitespace is enough: we never wait for the next sentence's capital
  letter;
- a script's own stop, with or without a space after it (:mod:`.scripts`): CJK full-width
  stops, Arabic ``؟`` and ``۔``, Devanagari ``।`` ``॥``, Armenian ``։``, Ethiopic ``። ፧ ፨``;
  in context, ``;`` after a Greek word (Greek's question mark) and ``:`` after an Armenian
  word (its full stop as typed); other languages' semicolons and colons are clause marks;
- Thai, which has no stop: a space between Thai words once the sentence holds
  :data:`THAI_SENTENCE_CHARS` characters;
- a blank line, or a line break before a list item or a heading;
- a sentence that grows past ``max_chars`` without a stop is cut at the last clause mark
  (``, ; :``) or space, so one run-on sentence cannot hold back all audio.

With ``first_clause=True`` the first sentence, when long, is released in two: its first
clause and the rest (:mod:`.clauses`), as soon as it is known to be long.

Not a boundary: a ``.`` after a known abbreviation ("Dr.", "e.g.", "U.S.") or a single
capital initial ("J. R. R. Tolkien"), a ``.`` after a bare list number ("1. "), and a ``.``
inside a number ("3.14", not followed by whitespace). Text after the last boundary is kept
until more text arrives or :meth:`SentenceSplitter.finish` flushes it. However the text is
cut into fragments, the sentences are the same (up to the ``max_chars`` cut).
"""

from __future__ import annotations

import re
import string

from wyoming_omnivoice.text.clauses import first_clause_end, is_long
from wyoming_omnivoice.text.scripts import (
    CLOSERS,
    SCRIPT_STOPS,
    TERMINALS,
    is_cjk,
    is_script_stop_in_context,
    is_thai,
)

CLAUSE_MARKS = ",;:，；：、،؛፣፤"
#: Thai: a space between Thai words ends a sentence once it holds this many characters.
THAI_SENTENCE_CHARS = 40
#: What may still turn into (part of) a boundary when more text comes: a sentence known to
#: run past the last character outside this set is at least that long.
_UNDECIDED = (string.whitespace + TERMINALS + SCRIPT_STOPS + CLOSERS + string.digits
              + "!?-*+•#.);:")

#: Lower-case abbreviations (without the final dot) after which "." does not end a sentence.
_ABBREVIATION_WORDS = """
    mr mrs ms mx dr prof sr jr st rev fr hon pres gov capt gen sen rep col maj
    lt cmdr sgt cpl co corp inc ltd dept ave blvd rd mt approx appt vs e.g i.e cf al viz
    vol vols fig figs
    jan feb apr jun jul aug sep sept oct nov tue tues thu thur thurs
    u.s u.k u.n e.u d.c bzw usw z.b d.h ggf evtl vgl nr str"""
ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())

_WORD_BEFORE = re.compile(r"([\w.'’-]*)$")
_LIST_OR_HEADING = re.compile(r"[ \t]*(?:[-*+•#]|\d{1,3}[.)])[ \t]")

DEFAULT_MAX_CHARS = 300


#: How far back from a "." the word before it is looked for: enough for any abbreviation,
#: and it keeps a text of many dots linear (the search starts near the end, not at 0).
_WORD_LOOKBACK = 64


def _is_abbreviation(before: str, end: int | None = None) -> bool:
    """True when ``before[:end]`` (the text before a ".") ends in an abbreviation, an initial
    or a list number."""
    end = len(before) if end is None else end
    match = _WORD_BEFORE.search(before, max(0, end - _WORD_LOOKBACK), end)
    word = match.group(1) if match else ""
    word = word.lstrip("'’-")
    if not word:
        return False
    lowered = word.lower()
    if lowered in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha() and word.isupper():
        return True  # an initial: "J. Smith"
    # Dotted acronyms such as "U.S.A" or "e.g" not in the list.
    if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):
        return True
    # A bare number at the start of a line or of the text is a list marker ("1. Eggs").
    if not (word.isdigit() and len(word) <= 3):
        return False
    index = end - len(word) - 1
    while index >= 0 and before[index] in " \t":
        index -= 1
    return index < 0 or before[index] == "\n"


class SentenceSplitter:
    """Accumulates text fragments and yields complete sentences as soon as they are known."""

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS, *, first_clause: bool = False
                 ) -> None:
        if max_chars < 20:
            raise ValueError("max_chars must be at least 20")
        self.max_chars = max_chars
        self._buffer = ""
        #: The first sentence is still to come and may be cut at its first clause.
        self._first_clause = first_clause

    @property
    def pending(self) -> str:
        """Text received but not yet released as a sentence."""
        return self._buffer

    def add(self, fragment: str) -> list[str]:
        """Add a fragment; return the sentences it completed (possibly none)."""
        if fragment:
            self._buffer += fragment
        return self._drain(final=False)

    def finish(self) -> list[str]:
        """Flush everything left, as the last sentence(s); the splitter is empty afterwards."""
        sentences = self._drain(final=True)
        rest = self._buffer.strip()
        self._buffer = ""
        if rest:
            sentences.append(rest)
        return sentences

    def _drain(self, *, final: bool) -> list[str]:
        sentences: list[str] = []
        while True:
            cut = self._find_boundary(self._buffer, final=final)
            if self._first_clause:
                cut = self._first_clause_cut(self._buffer, cut, final=final)
            if cut is None:
                cut = self._forced_cut(self._buffer)
            if cut is None:
                break
            sentence = self._buffer[:cut].strip()
            self._buffer = self._buffer[cut:].lstrip()
            if sentence:
                sentences.append(sentence)
                self._first_clause = False
        return sentences

    @staticmethod
    def _first_clause_cut(text: str, cut: int | None, *, final: bool) -> int | None:
        """The end of the first sentence's first clause when that sentence is long, else
        ``cut``. Without a boundary yet, the sentence is known to be long when the text up
        to its last character that cannot start a boundary is (so a stream releases the
        clause before the sentence ends, and a whole text gives the same pieces)."""
        if cut is not None:
            known = text[:cut]
        elif final:
            known = text
        else:
            known = text.rstrip(_UNDECIDED)
        if not is_long(known):
            return cut
        clause = first_clause_end(text)
        return clause if clause is not None else cut

    @staticmethod
    def _find_boundary(text: str, *, final: bool) -> int | None:
        """Index just after the first complete sentence in ``text``, or None."""
        length = len(text)
        lead = length - len(text.lstrip())
        i = 0
        while i < length:
            char = text[i]
            if char in SCRIPT_STOPS or (char in "!?" and i > 0 and is_cjk(text[i - 1])):
                end = i + 1
                while end < length and (text[end] in SCRIPT_STOPS or text[end] in "!?…"):
                    end += 1
                while end < length and text[end] in CLOSERS:
                    end += 1
                if end < length or final:
                    return end
                return None  # a closing mark may still follow
            if char in TERMINALS or (char in ";:" and is_script_stop_in_context(text, i)):
                end = i + 1
                while end < length and text[end] in TERMINALS:
                    end += 1
                while end < length and text[end] in CLOSERS:
                    end += 1
                if end >= length:
                    return None  # wait: could be "3." + "14", "..." or a closing quote
                if text[end].isspace():
                    if char == "." and end == i + 1 and _is_abbreviation(text, i):
                        i = end
                        continue
                    return end
                i = end
                continue
            if char == " " and i > 0 and is_thai(text[i - 1]):
                after = i + 1
                while after < length and text[after] == " ":
                    after += 1
                if i - lead >= THAI_SENTENCE_CHARS:
                    if after >= length:
                        return None  # a Thai word may follow
                    if is_thai(text[after]):
                        return i
                i = after
                continue
            if char == "\n":
                # Blank line, or a new list item / heading, ends the sentence before it.
                rest = text[i + 1:]
                if rest.startswith("\n") or rest.lstrip(" \t").startswith("\n"):
                    if text[:i].strip():
                        return i
                elif _LIST_OR_HEADING.match(rest) and text[:i].strip():
                    return i
            i += 1
        return None

    def _forced_cut(self, text: str) -> int | None:
        """Cut a run-on sentence longer than ``max_chars`` at a clause mark or a space."""
        if len(text) <= self.max_chars:
            return None
        window = text[: self.max_chars]
        floor = self.max_chars // 3
        for marks in (CLAUSE_MARKS, " \t\n"):
            best = max(window.rfind(mark) for mark in marks)
            if best >= floor:
                return best + 1
        return self.max_chars


def split_sentences(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Split a complete text into sentences with the same rules as the streaming splitter."""
    splitter = SentenceSplitter(max_chars=max_chars)
    sentences = splitter.add(text)
    sentences.extend(splitter.finish())
    return sentences
