"""Turkish endings written after a number or a unit ("3'te", "5'i", "4'üncü", "°C'ye"),
joined to the spoken word with its own vowel harmony and consonant changes.

The written ending follows the digits as they are said, but a writer may get it wrong and
a unit's ending follows its symbol ("W'ye"); so the ending is rebuilt from the word:
vowels harmonise with the word's last vowel (a/e; ı/i/u/ü), the first d/t and c/ç follow
the word's last sound (voiceless after ç f h k p s ş t: "üçte", "kırkta"), a buffer
consonant (y, s, n) stands only between two vowels ("ikiye", "beşi"), and "dört" softens
before a vowel ("dördü", "dördüncü"); "saat" (and "kilovatsaat") takes front
endings ("saate", "kilovatsaati").
"""

from __future__ import annotations

import re

_BACK = set("aıou")
_FRONT = set("eiöü")
_ROUND = set("ouöü")
_VOWELS = _BACK | _FRONT
_VOICELESS = set("çfhkpsşt")
#: Marks the apostrophe of an ending that belongs to a number or unit being read.
MARK = "\u2063"
_JOIN_RE = re.compile(rf"(?P<w>[^\W\d_]+){MARK}(?P<s>[a-zçğıöşü]+)")


def _last_vowel(word: str) -> str:
    for char in reversed(word.lower()):
        if char in _VOWELS:
            return char
    return "e"


def attach(word: str, written: str) -> str:
    """``word`` with the ending ``written`` after it: ("üç", "te") -> "üçte",
    ("dört", "ü") -> "dördü", ("iki", "e") -> "ikiye", ("beş", "si") -> "beşi"."""
    stem = word
    ending = written.lower()
    stem_vowel_end = stem[-1].lower() in _VOWELS
    if stem.endswith("yarısı") and not ending.startswith("n"):
        ending = "n" + ending  # a possessive takes n before a case: "gece yarısında"
    elif stem_vowel_end and ending[0] in _VOWELS:
        ending = "y" + ending  # "ikiye", "altıya"
    elif not stem_vowel_end and len(ending) > 1 and ending[0] in "ysn" and \
            ending[1] in _VOWELS:
        ending = ending[1:]
    if not stem_vowel_end and ending[0] in _VOWELS and stem.endswith("dört"):
        stem = stem[:-1] + "d"
    vowel = _last_vowel(stem)
    if stem.lower().endswith("saat"):
        vowel = "e"  # "saat" takes front endings: "saate", "saatte", "kilovatsaati"
    out = []
    for i, char in enumerate(ending):
        if char in "ae":
            char = "a" if vowel in _BACK else "e"
        elif char in "ıiuü":
            char = ("u" if vowel in _ROUND else "ı") if vowel in _BACK else \
                ("ü" if vowel in _ROUND else "i")
        elif i == 0 and char in "dt":
            char = "t" if stem[-1].lower() in _VOICELESS else "d"
        elif i == 0 and char in "cç":
            char = "ç" if stem[-1].lower() in _VOICELESS else "c"
        if char in _VOWELS:
            vowel = char
        out.append(char)
    return stem + "".join(out)


def join(text: str) -> str:
    """Join every marked ending to the word before it; a mark left over (no word before
    it) is the apostrophe again."""
    text = _JOIN_RE.sub(lambda m: attach(m.group("w"), m.group("s")), text)
    return text.replace(MARK, "'")
