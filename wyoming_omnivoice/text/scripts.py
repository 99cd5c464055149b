"""Which characters end sentences and clauses, per script (for :mod:`.sentences`, :mod:`.clauses`).

- Latin-style stops (``. ! ? …``) end a sentence only when whitespace follows (``3.14``).
- Script stops that are never part of a number or a word end a sentence with or without a
  space after them: CJK full-width stops, Arabic ``؟`` and the Urdu full stop ``۔``,
  Devanagari ``।`` and ``॥``, Armenian ``։``, Ethiopic ``።``, ``፧`` and ``፨``, Thai ``๚``
  and ``๛``, the Greek question mark ``;`` (U+037E).
- In context only: ``;`` after a Greek word is Greek's question mark (the usual way it is
  typed, U+037E normalises to it); ``:`` after an Armenian word is the full stop as typed on
  most keyboards. Elsewhere both stay clause marks.
- Thai has no stop: a space between Thai words ends a sentence once it is long enough.
"""

from __future__ import annotations

import re

TERMINALS = ".!?…"
SCRIPT_STOPS = "。！？．｡؟۔।॥։።፧፨๚๛\u037e"
CLOSERS = "\"'”’»)]}）】」』〕》〉*_`"

#: Clause marks that need whitespace after them (so "1,000" and "10:30" are not cut).
SPACED_CLAUSE_MARKS = ",;:،؛՝፣፤፥፦·—–"
#: Full-width clause marks, a boundary without a space (CJK writes none).
WIDE_CLAUSE_MARKS = "，、；：﹐﹑"

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: Characters that take about three times a Latin letter's time to say (a syllable each).
_WIDE = re.compile(r"[\u1200-\u139f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
_ARMENIAN = re.compile(r"[\u0531-\u058f]")
_THAI = re.compile(r"[\u0e01-\u0e5b]")


def is_cjk(char: str) -> bool:
    return bool(_CJK.match(char))


def is_thai(char: str) -> bool:
    return bool(_THAI.match(char))


def spoken_length(text: str) -> int:
    """Length in Latin-letter units: a CJK, kana, Hangul or Ethiopic character counts 3."""
    return len(text) + 2 * len(_WIDE.findall(text))


#: How far back from a ";" or ":" its word is looked for (a few closers or spaces).
_LOOKBACK = 8


def _letter_before(text: str, index: int) -> str:
    """The last character before ``index`` that is not a closer or a space ("" if none
    within :data:`_LOOKBACK` characters)."""
    floor = max(-1, index - 1 - _LOOKBACK)
    index -= 1
    while index > floor and (text[index] in CLOSERS or text[index] in " \t"):
        index -= 1
    return text[index] if index > floor else ""


def is_script_stop_in_context(text: str, index: int) -> bool:
    """``text[index]`` is ``;`` after a Greek word or ``:`` after an Armenian word."""
    char = text[index]
    if char == ";":
        return bool(_GREEK.match(_letter_before(text, index)))
    if char == ":":
        return bool(_ARMENIAN.match(_letter_before(text, index)))
    return False
