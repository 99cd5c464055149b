"""Text rules of the prompt and of long-text chunking, as upstream applies them.

- ``combine_text``: upstream ``_combine_text`` (joins reference and target text, deletes
  line breaks, normalises brackets and blanks, removes blanks next to CJK ideographs).
- ``split_nonverbal``: the pieces upstream ``_tokenize_with_nonverbal_tags`` tokenizes one
  by one, so non-verbal tags such as ``[laughter]`` get the same ids in any context.
- ``chunk_text_punctuation``: upstream's sentence chunker for long text.
- ``add_punctuation``: closes a reference transcript with a full stop when it has none.
"""

from __future__ import annotations

import re

NONVERBAL_TAGS: tuple[str, ...] = (
    "laughter",
    "sigh",
    "confirmation-en",
    "question-en",
    "question-ah",
    "question-oh",
    "question-ei",
    "question-yi",
    "surprise-ah",
    "surprise-oh",
    "surprise-wa",
    "surprise-yo",
    "dissatisfaction-hnn",
)
NONVERBAL_PATTERN = re.compile(r"\[(?:" + "|".join(map(re.escape, NONVERBAL_TAGS)) + r")\]")

SPLIT_PUNCTUATION = frozenset(".,;:!?。，；：！？")
CLOSING_MARKS = frozenset("\"'“”‘’）]》>」】")
END_PUNCTUATION = frozenset(
    (*";:,.!?…)]}\"'“”‘’", *"；：，。！？、）】", "……")
)
_ABBREVIATION_TEXT = (
    "Mr. Mrs. Ms. Dr. Prof. Sr. Jr. Rev. Fr. Hon. Pres. Gov. Capt. Gen. Sen. Rep. Col. Maj. "
    "Lt. Cmdr. Sgt. Cpl. Co. Corp. Inc. Ltd. Est. Dept. St. Ave. Blvd. Rd. Mt. Ft. No. "
    "Jan. Feb. Mar. Apr. Aug. Sep. Sept. Oct. Nov. Dec. i.e. e.g. vs. Vs. Etc. approx. "
    "fig. def."
)
# A "." does not end a sentence when the word it ends is one of these.
ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split(" "))

_LINE_BREAKS = re.compile(r"[\r\n]+")
_BLANK_RUNS = re.compile(r"[ \t]+")
_CJK_CHAR = "[\u4e00-\u9fff]"
_SPACE_NEXT_TO_CJK = re.compile(rf"(?<={_CJK_CHAR})\s+|\s+(?={_CJK_CHAR})")


def _has_cjk(text: str) -> bool:
    return any("\u4e00" <= char <= "\u9fff" for char in text)


def combine_text(text: str, ref_text: str | None = None) -> str:
    """The text between ``<|text_start|>`` and ``<|text_end|>`` in the prompt."""
    full = f"{ref_text.strip()} {text.strip()}" if ref_text else text.strip()
    full = _LINE_BREAKS.sub("", full)
    full = full.replace("（", "(").replace("）", ")")
    full = _BLANK_RUNS.sub(" ", full)
    return _SPACE_NEXT_TO_CJK.sub("", full)


def split_nonverbal(text: str) -> list[str]:
    """Split ``text`` around non-verbal tags; each piece is tokenized on its own.

    Tags are pieces of their own, text between them is kept as is, and empty pieces are
    dropped. Text without tags gives ``[text]`` (or ``[]`` for an empty string).
    """
    pieces: list[str] = []
    last = 0
    for match in NONVERBAL_PATTERN.finditer(text):
        if match.start() > last:
            pieces.append(text[last : match.start()])
        pieces.append(match.group())
        last = match.end()
    if last < len(text):
        pieces.append(text[last:])
    return pieces


def _split_sentences(text: str) -> list[list[str]]:
    sentences: list[list[str]] = []
    current: list[str] = []
    for char in text:
        if not current and sentences and (char in SPLIT_PUNCTUATION or char in CLOSING_MARKS):
            # punctuation or a closing mark that would open a sentence ends the previous one
            sentences[-1].append(char)
            continue
        current.append(char)
        if char not in SPLIT_PUNCTUATION:
            continue
        if char == ".":
            words = "".join(current).split()
            if words and words[-1] in ABBREVIATIONS:
                continue
        sentences.append(current)
        current = []
    if current:
        sentences.append(current)
    return sentences


def chunk_text_punctuation(
    text: str, chunk_len: int, min_chunk_len: int | None = 3
) -> list[str]:
    """Split long text into chunks of at most about ``chunk_len`` characters.

    Splits after sentence punctuation (not after abbreviations such as "Mr."), merges
    sentences greedily while a chunk stays within ``chunk_len`` characters (a longer
    sentence stays whole), and merges chunks shorter than ``min_chunk_len`` into a
    neighbour. Chunks are stripped; empty ones are dropped.
    """
    merged: list[list[str]] = []
    current: list[str] = []
    for sentence in _split_sentences(text):
        if len(current) + len(sentence) <= chunk_len:
            current.extend(sentence)
            continue
        if current:
            merged.append(current)
        current = sentence
    if current:
        merged.append(current)

    if min_chunk_len is None:
        final = merged
    else:
        first_is_short = bool(merged) and len(merged[0]) < min_chunk_len
        final = []
        for index, chunk in enumerate(merged):
            if (index == 1 and first_is_short) or (final and len(chunk) < min_chunk_len):
                final[-1].extend(chunk)
            else:
                final.append(chunk)

    chunks = ("".join(chunk).strip() for chunk in final)
    return [chunk for chunk in chunks if chunk]


def add_punctuation(text: str) -> str:
    """Strip ``text`` and end it with "。" (CJK text) or "." unless it already ends in one.

    Any closing punctuation, bracket or quote counts as an ending.
    """
    text = text.strip()
    if text and text[-1] not in END_PUNCTUATION:
        text += "。" if _has_cjk(text) else "."
    return text
