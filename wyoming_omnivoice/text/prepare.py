"""From a request's text to the pieces the engine speaks: format, cleanup, sentence groups.

- ``text_format``: ``text`` is spoken as is; ``ssml`` is not interpreted: tags are removed,
  entities decoded and the words spoken. Other formats are refused by the server.
- One-shot text is split into sentences; the first is spoken alone (fast first audio) and
  later ones are merged up to :data:`GROUP_CHARS` characters (fewer, longer decodes).
- Streamed text arrives sentence by sentence (:class:`.sentences.SentenceSplitter`); each is
  cleaned on its own.
- ``first_clause`` (both): a long first sentence is spoken from its first clause, the rest
  of it as the next piece (:mod:`.clauses`), so first audio does not wait for all of it.

Every step is linear in the length of the text (see :mod:`.cleanup`), so it runs on the
server's event loop without stalling it (``benchmarks/bench_text_prep.py`` measures the
worst inputs we know).
"""

from __future__ import annotations

import html
import re

from wyoming_omnivoice.text.cleanup import clean_text, has_speech
from wyoming_omnivoice.text.sentences import SentenceSplitter

#: One-shot text: sentences after the first are merged up to this many characters.
GROUP_CHARS = 200
#: The text formats a request may name (absent means ``text``).
TEXT_FORMATS = ("text", "ssml")
#: Text goes into the sentence splitter in slices of at most this many characters, as a
#: stream's chunks do: the splitter then never scans more than about ``max_chars`` plus
#: this, which keeps a long text's cost linear.
FEED_CHARS = 256

_SSML_TAG = re.compile(r"<[^<>]*>")


def text_format_of(value: object) -> str:
    """The request's text format as a plain lower-case string ("text" when absent)."""
    if value is None:
        return "text"
    return str(getattr(value, "value", value)).strip().lower() or "text"


def ssml_to_text(text: str) -> str:
    """SSML is not interpreted: tags are removed, entities decoded, the words spoken."""
    return html.unescape(_SSML_TAG.sub(" ", text))


def prepare_sentence(text: str) -> str:
    """Cleanup for one sentence: markdown, URLs and emoji removed, lines joined."""
    cleaned = clean_text(text)
    return " ".join(part for part in cleaned.split("\n") if part.strip())


def group_sentences(sentences: list[str], limit: int = GROUP_CHARS) -> list[str]:
    """First sentence alone (fast first audio), later ones merged up to ``limit`` chars."""
    if not sentences:
        return []
    groups = [sentences[0]]
    current = ""
    for sentence in sentences[1:]:
        if current and len(current) + 1 + len(sentence) > limit:
            groups.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        groups.append(current)
    return groups


def feed(splitter: SentenceSplitter, text: str) -> list[str]:
    """The sentences ``text`` completes, fed to ``splitter`` in slices of FEED_CHARS.

    The same sentences as one ``add`` of the whole text, except that a sentence running
    past the splitter's ``max_chars`` is cut there as it would be in a stream, instead of
    when a stop comes later in the text. A text of many sentence-like stops ("Dr. Dr.
    ...") costs linear time instead of quadratic.
    """
    sentences: list[str] = []
    for start in range(0, len(text), FEED_CHARS):
        sentences += splitter.add(text[start:start + FEED_CHARS])
    return sentences


def prepare_one_shot(text: str, *, ssml: bool = False, first_clause: bool = False,
                     group: bool = True) -> list[str]:
    """The pieces to speak for a one-shot request, in order; empty when nothing is said.

    ``group=False``: the sentences (and the first clause) as they are, for the server's
    pacing (:mod:`.speech.pacing`), which groups them by this host's decode speed.
    """
    if ssml:
        text = ssml_to_text(text)
    splitter = SentenceSplitter(first_clause=first_clause)
    parts = feed(splitter, text) + splitter.finish()
    sentences = [sentence for sentence in (prepare_sentence(part) for part in parts)
                 if has_speech(sentence)]
    return group_sentences(sentences) if group else sentences


def prepare_streamed_sentence(sentence: str, *, ssml: bool = False) -> str | None:
    """One sentence of a stream, cleaned; None when nothing is left to say."""
    text = prepare_sentence(ssml_to_text(sentence) if ssml else sentence)
    return text if has_speech(text) else None
