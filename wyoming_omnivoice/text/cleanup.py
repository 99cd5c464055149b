"""Text preparation before synthesis: strip what chat replies carry but a voice cannot say.

Home Assistant's LLM replies often contain markdown emphasis, headings, list markers, code
ticks, links, bare URLs and emoji. Read aloud they become noise ("asterisk asterisk"), so the
server removes them. OmniVoice's non-verbal tags (``[laughter]``, ``[sigh]``, ...) and other
bracketed pronunciation hints are kept untouched.
"""

from __future__ import annotations

import re
import unicodedata

# [label](url) -> label ; ![alt](url) -> alt
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\((?:[^()\s]|\([^()\s]*\))*\)")
# <https://...> autolinks and bare URLs / www. hosts.
_AUTOLINK = re.compile(r"<(?:https?|ftp)://[^>\s]*>", re.IGNORECASE)
_URL = re.compile(r"\b(?:(?:https?|ftp)://|www\.)[^\s<>\"'）)\]]+", re.IGNORECASE)
# Fenced code markers and inline code ticks (the code text itself is kept).
_FENCE = re.compile(r"^[ \t]*```[^\n]*$", re.MULTILINE)
_TICKS = re.compile(r"`+")
# Headings "## Title", block quotes "> text", list markers "- x", "* x", "+ x", "1. x", "2) x".
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_BULLET = re.compile(r"^[ \t]*[-*+•◦▪‣][ \t]+", re.MULTILINE)
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+(?=\S)", re.MULTILINE)
# Horizontal rules and table separator rows.
_RULE = re.compile(r"^[ \t]*(?:[-*_][ \t]*){3,}$", re.MULTILINE)
_TABLE_SEP = re.compile(r"^[ \t]*(?:\|[ \t]*)?:?-{2,}:?[ \t]*(?:\|[ \t]*(?::?-{2,}:?[ \t]*)?)*$",
                        re.MULTILINE)
# Emphasis: **x**, __x__, *x*, _x_, ~~x~~ (underscores only at word edges, so snake_case stays).
# Every pattern here runs in linear time on any input: an emphasis span never crosses its own
# delimiter (so a failed match stops at the next one), and no two adjacent repeats can split
# the same run of characters. Text preparation runs on the event loop; a crafted reply of
# ``--max-text-length`` characters must not stall it (benchmarks/bench_text_prep.py).
_STRONG_STARS = re.compile(r"\*\*(?=\S)((?:(?!\*\*).)+?)(?<=\S)\*\*", re.DOTALL)
_STRONG_UNDERSCORES = re.compile(r"__(?=\S)((?:(?!__).)+?)(?<=\S)__", re.DOTALL)
_EM_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)((?:(?!~~).)+?)(?<=\S)~~", re.DOTALL)
_LEFTOVER_MARKS = re.compile(r"\*{2,}|~~")
# HTML-ish tags such as <br> or <b> (not "a < b").
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?/?>")
_SPACES = re.compile(r"[ \t\u00a0]+")
_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([,.;:!?。，！？；：])")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")

#: Characters that are part of emoji sequences without being symbols themselves.
_EMOJI_JOINERS = {"\ufe0f", "\ufe0e", "\u20e3"}
#: The zero-width joiner joins emoji (👨‍👩‍👧) but is also spelling: Sinhala ශ්‍රී, Devanagari's
#: eyelash ra, Bengali's ya-phala, Malayalam's chillu. It goes only beside an emoji.
_ZWJ = "\u200d"


def _is_emoji(char: str) -> bool:
    code = ord(char)
    if char in _EMOJI_JOINERS:
        return True
    if 0x1F000 <= code <= 0x1FAFF:  # emoji, pictographs, flags, symbols & pictographs ext.
        return True
    if 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F:  # skin tones, tag chars
        return True
    if 0x2600 <= code <= 0x27BF:  # misc symbols and dingbats (☀ ✅ ✨ ❤)
        return True
    if 0x2B00 <= code <= 0x2BFF and unicodedata.category(char) == "So":  # ⭐ ⬆
        return True
    return code in (0x2190, 0x2192, 0x21A9, 0x21AA, 0x231A, 0x231B, 0x23F0, 0x23F3, 0x24C2)


def strip_emoji(text: str) -> str:
    """Remove emoji (with their joiners, variation selectors and skin-tone modifiers). A
    zero-width joiner between two letters is spelling and stays."""
    out = []
    last = len(text) - 1
    for i, char in enumerate(text):
        if char == _ZWJ:
            beside_emoji = (i > 0 and _is_emoji(text[i - 1])) or (
                i < last and _is_emoji(text[i + 1]))
            out.append(" " if beside_emoji else char)
        else:
            out.append(" " if _is_emoji(char) else char)
    return "".join(out)


def strip_markdown(text: str) -> str:
    """Remove markdown syntax but keep the words it decorates."""
    text = _FENCE.sub("", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _TABLE_SEP.sub("", text)
    text = _RULE.sub("", text)
    text = _HEADING.sub("", text)
    text = _QUOTE.sub("", text)
    text = _BULLET.sub("", text)
    text = _NUMBERED.sub("", text)
    text = _TICKS.sub("", text)
    for _ in range(2):  # nested emphasis such as ***x***
        text = _STRONG_STARS.sub(r"\1", text)
        text = _STRONG_UNDERSCORES.sub(r"\1", text)
        text = _EM_STAR.sub(r"\1", text)
        text = _EM_UNDER.sub(r"\1", text)
    text = _STRIKE.sub(r"\1", text)
    text = _LEFTOVER_MARKS.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    # Table cell borders read as nothing; keep the cell text apart.
    return text.replace("|", ", ") if text.count("|") >= 2 else text


def strip_urls(text: str) -> str:
    """Remove autolinks and bare URLs."""
    text = _AUTOLINK.sub(" ", text)
    return _URL.sub(" ", text)


def clean_text(text: str) -> str:
    """Prepare one reply for synthesis.

    Markdown emphasis, headings, list markers, code ticks, links (the label is kept), bare URLs,
    HTML tags and emoji are removed; whitespace is collapsed. Line breaks are kept (they can
    mark sentence ends for the splitter). Non-verbal tags such as ``[laughter]`` survive.
    """
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = strip_markdown(text)
    text = strip_urls(text)
    text = strip_emoji(text)
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = "\n".join(line.strip() for line in text.split("\n"))
    text = _BLANK_LINES.sub("\n\n", text)
    return text.strip()


def has_speech(text: str) -> bool:
    """True when the text holds something to say (a letter, digit or a non-verbal tag)."""
    return any(char.isalnum() for char in text)
