"""The characters a request's text may hold: checked once, where the text enters.

Every text a client sends (a Wyoming ``synthesize``, each ``synthesize-chunk`` of a stream,
the HTTP API's and the studio's) passes :func:`check_characters` (a stream's chunks:
:class:`StreamCharacters`) at the speech service's entries, before any work is queued.
What it does, by Unicode class:

- **Surrogates** (``Cs``, U+D800-U+DFFF): a pair (a high one then a low one) is joined into
  the character it encodes: a client that cut a UTF-16 string between two stream chunks
  (or sent the halves as two ``\\u`` escapes in one string that was joined later) meant
  that character. A lone surrogate is **refused** (:class:`TextRefused`, the server's
  ``text-invalid``) with its code point and position: it is no character at all, cannot be
  written as UTF-8, and no tokenizer takes it; it is half of a character the client lost,
  and speaking the rest would hide that bug.
- **Control characters** (``Cc``: C0, DEL and C1) other than tab, line feed and carriage
  return: **replaced by a space** (said at debug level). NUL, escape sequences' ESC,
  backspace, bell or a C1 code from a mis-decoded Windows text carry nothing to say;
  real text pasted from a terminal or a file has them, and a space keeps the words on
  either side apart.
- **Noncharacters** (U+FDD0-U+FDEF and the last two code points of every plane, U+FFFE,
  U+FFFF, ...): **replaced by a space** (at debug level): Unicode reserves them for a
  program's internal use, never for text.
- Everything else is kept: format characters (zero-width joiner and non-joiner, which
  spell Persian and Indic words and join emoji; right-to-left and other direction marks;
  the byte-order mark), combining marks, private-use and unassigned code points. They are
  valid text in UTF-8, which the tokenizer reads byte by byte; what a voice should not
  read (emoji, markdown) :mod:`.cleanup` removes later.

The check is one linear scan; text without any of these characters is returned as it is.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

_LOGGER = logging.getLogger(__name__)

_HIGH = "\ud800-\udbff"
_LOW = "\udc00-\udfff"
#: Controls other than tab, line feed and carriage return.
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
#: Noncharacters: U+FDD0-U+FDEF and U+xFFFE, U+xFFFF of every plane.
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17))

#: Any character this module acts on (the fast path: none found, nothing to do).
_SUSPECT = re.compile(f"[{_CONTROLS}{_NONCHARACTERS}{_HIGH}{_LOW}]")
_PAIR = re.compile(f"[{_HIGH}][{_LOW}]")
_LONE = re.compile(f"[{_HIGH}](?![{_LOW}])|(?<![{_HIGH}])[{_LOW}]")
_CLEANED = re.compile(f"[{_CONTROLS}{_NONCHARACTERS}]")
#: Characters of context quoted on each side of a refused character.
_CONTEXT = 12


class TextRefused(ValueError):
    """A text holds a character that cannot be spoken: ``char`` at ``index`` (0-based, in
    characters from the start of the text or stream)."""

    def __init__(self, char: str, index: int, text: str = "", at: int = 0) -> None:
        self.char = char
        self.index = index
        before = ascii(text[max(0, at - _CONTEXT):at]) if text else None
        where = f"character {index + 1}" + (f", after {before}" if before else "")
        super().__init__(
            f"The text holds a lone surrogate {code_point(char)} at {where}: half of a "
            "UTF-16 character without its other half, which is no text (it cannot even be "
            "written as UTF-8). Send whole characters; one cut between two stream chunks "
            "is joined when its halves come in order")


def code_point(char: str) -> str:
    """``U+0000`` notation."""
    return f"U+{ord(char):04X}"


def _join_pair(match: re.Match[str]) -> str:
    high, low = match.group()[0], match.group()[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def check_characters(text: str, *, start: int = 0) -> str:
    """``text`` as the server takes it (see the module docstring), or :class:`TextRefused`.

    ``start``: where ``text`` begins in its stream (for the position a refusal names).
    """
    if _SUSPECT.search(text) is None:
        return text
    lone = _LONE.search(text)
    if lone is not None:
        raise TextRefused(lone.group(), start + lone.start(), text, lone.start())
    text = _PAIR.sub(_join_pair, text)
    removed = Counter(_CLEANED.findall(text))
    if removed:
        _LOGGER.debug("Removed from the text (each replaced by a space): %s",
                      ", ".join(f"{code_point(char)} x{count}"
                                for char, count in sorted(removed.items())))
        text = _CLEANED.sub(" ", text)
    return text


class StreamCharacters:
    """:func:`check_characters` for a stream's chunks: positions count over the whole
    stream, and a surrogate pair cut between two chunks is joined (a chunk's last high
    surrogate waits for the next chunk)."""

    def __init__(self) -> None:
        #: Characters received so far.
        self.length = 0
        self._held = ""

    def add(self, chunk: str) -> str:
        """The chunk as the server takes it (without a high surrogate it ends with, which
        the next chunk completes), or :class:`TextRefused`."""
        text, start = self._held + chunk, self.length - len(self._held)
        self.length += len(chunk)
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return check_characters(text, start=start)

    def finish(self) -> None:
        """The stream's end: :class:`TextRefused` when a high surrogate is still waiting."""
        held, self._held = self._held, ""
        if held:
            raise TextRefused(held, self.length - 1)
