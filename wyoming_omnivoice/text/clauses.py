"""First audio sooner: a long first sentence is spoken from its first clause.

The first piece of a reply decides when its audio starts, and a decode takes time in
proportion to the length of its text. So when a reply's first sentence is longer than
:data:`FIRST_CLAUSE_ABOVE` (in Latin-letter units, :func:`.scripts.spoken_length`), the
sentence is cut after its first clause of at least :data:`MIN_CLAUSE` units that ends no
later than :data:`FIRST_CLAUSE_ABOVE`. Later sentences are never cut (they keep a whole
sentence's prosody, and they are decoded while the first is playing). A sentence with no
such clause boundary stays whole.

A clause boundary is a comma, semicolon, colon or dash followed by whitespace, in any
script (``, ; : — – ، ؛ ՝ ፣ ፤ ፥ ፦ ·`` and a spaced `` - ``), or a full-width CJK mark
with or without a space (``， 、 ； ：``). "1,000", "10:30" and "twenty-one" are not
boundaries. Closing quotes or brackets after the mark stay with the clause.

The streaming splitter (:class:`.sentences.SentenceSplitter` with ``first_clause=True``)
releases the clause as soon as the sentence is known to be long, before its end arrives; a
whole text gives the same pieces.
"""

from __future__ import annotations

from wyoming_omnivoice.text.scripts import (
    CLOSERS,
    SPACED_CLAUSE_MARKS,
    WIDE_CLAUSE_MARKS,
    spoken_length,
)

#: A first sentence longer than this (Latin-letter units) is spoken from its first clause.
#: 100 is about 6 s of speech; ``benchmarks/bench_server.py`` measured first audio for a
#: 200-character first sentence at 0.4x (tiny model) with the cut against without.
FIRST_CLAUSE_ABOVE = 100
#: The first clause is at least this long (Latin-letter units): never a tiny first piece.
MIN_CLAUSE = 30


def _after_closers(text: str, index: int) -> int:
    while index < len(text) and text[index] in CLOSERS:
        index += 1
    return index


def clause_end_at(text: str, index: int) -> int | None:
    """Index just after the clause boundary whose mark is ``text[index]``, or None (also
    when the character that decides it has not arrived yet)."""
    char = text[index]
    if char in WIDE_CLAUSE_MARKS:
        return _after_closers(text, index + 1)
    if char in SPACED_CLAUSE_MARKS or (char == "-" and index > 0 and text[index - 1] in " \t"):
        end = _after_closers(text, index + 1)
        if end < len(text) and text[end].isspace():
            return end
    return None


def first_clause_end(text: str, limit: int = FIRST_CLAUSE_ABOVE,
                     minimum: int = MIN_CLAUSE) -> int | None:
    """Index just after the first clause of ``text`` that holds at least ``minimum`` units
    and ends within ``limit`` units of the start; None when there is none.

    Reads at most about ``limit`` characters: its cost does not grow with the text.
    """
    lead = len(text) - len(text.lstrip())
    units = 0
    for index in range(lead, len(text)):
        units += spoken_length(text[index])
        if units > limit:
            return None
        end = clause_end_at(text, index)
        if end is None:
            continue
        clause_units = spoken_length(text[lead:end].rstrip())
        if clause_units > limit:
            return None
        if clause_units >= minimum:
            return end
    return None


def is_long(text: str, limit: int = FIRST_CLAUSE_ABOVE) -> bool:
    """True when ``text`` (a first sentence, or the start of one) is cut at a clause."""
    return spoken_length(text.strip()) > limit


def split_first_clause(sentence: str, limit: int = FIRST_CLAUSE_ABOVE,
                       minimum: int = MIN_CLAUSE) -> list[str]:
    """``[clause, rest]`` for a long sentence with a clause boundary, else ``[sentence]``."""
    if not is_long(sentence, limit):
        return [sentence]
    end = first_clause_end(sentence, limit, minimum)
    if end is None:
        return [sentence]
    clause, rest = sentence[:end].strip(), sentence[end:].strip()
    return [clause, rest] if clause and rest else [sentence]


#: Later clauses a sentence is cut into when a host is slow are at least this long.
MIN_LATER_CLAUSE = 20


def split_clauses(sentence: str, minimum: int = MIN_LATER_CLAUSE) -> list[str]:
    """``sentence`` cut at every clause boundary where both sides hold at least
    ``minimum`` units (Latin letters); joined with spaces the clauses give it back.

    The pacing of a reply (:mod:`.speech.pacing`) merges them again into whole sentences
    whenever the host is fast enough; only a slow host speaks them as separate pieces.
    """
    text = sentence.strip()
    clauses: list[str] = []
    start = 0
    for index in range(len(text)):
        end = clause_end_at(text, index)
        if end is None:
            continue
        head, rest = text[start:end].strip(), text[end:].strip()
        if spoken_length(head) >= minimum and spoken_length(rest) >= minimum:
            clauses.append(head)
            start = end
    tail = text[start:].strip()
    if tail:
        clauses.append(tail)
    return clauses or [text]
