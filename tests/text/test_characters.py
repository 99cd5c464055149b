"""The entry check of a request's characters (text/characters.py): what is refused, what is
cleaned, what is kept, and the same result however a stream cuts the text."""

from __future__ import annotations

import logging
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_omnivoice.text.characters import StreamCharacters, TextRefused, check_characters

#: Any Python string: surrogates (lone and paired) included.
any_text = st.text(st.characters(exclude_categories=()), max_size=60)
#: What a client's text is made of: any character, plus pairs and halves on purpose.
pieces = st.sampled_from(["\ud83d\ude00", "\ud83d", "\ude00", "\x00", "\x85", "\ufffe",
                          "\u200d", "\u200f", "a", " ", "\n"])
client_text = st.lists(pieces | any_text, max_size=8).map("".join)


def is_noncharacter(char: str) -> bool:
    code = ord(char)
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def test_text_without_suspects_is_returned_as_it_is() -> None:
    text = "Grüße, 東京 👨‍👩‍👧 ש\u200fלום क्‍ष Z̷̢ \ue000 \t\n\r"
    assert check_characters(text) is text


def test_a_lone_surrogate_is_refused_with_its_code_point_and_place() -> None:
    with pytest.raises(TextRefused) as refused:
        check_characters("Hello \ud800 world")
    assert (refused.value.char, refused.value.index) == ("\ud800", 6)
    assert "U+D800 at character 7, after 'Hello '" in str(refused.value)
    with pytest.raises(TextRefused) as refused:
        check_characters("\udc00", start=40)
    assert refused.value.index == 40 and "character 41" in str(refused.value)
    assert str(refused.value).isascii()  # sendable in any error event
    # A low surrogate before its high one is no pair.
    with pytest.raises(TextRefused):
        check_characters("\ude00\ud83d")


def test_a_surrogate_pair_is_joined_into_its_character() -> None:
    assert check_characters("smile \ud83d\ude00!") == "smile \U0001f600!"


def test_controls_and_noncharacters_become_spaces_and_are_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="wyoming_omnivoice.text.characters"):
        cleaned = check_characters("a\x00b\x1b[0m\x7f\x85c\ufdd0d\U0010ffff\t\n\r")
    assert cleaned == "a b [0m  c d \t\n\r"
    assert "U+0000 x1" in caplog.text and "U+10FFFF x1" in caplog.text


def test_a_stream_joins_a_pair_cut_between_chunks_and_counts_over_the_stream() -> None:
    stream = StreamCharacters()
    assert stream.add("Hi \ud83d") == "Hi "
    assert stream.add("\ude00 there") == "\U0001f600 there"
    stream.finish()
    stream = StreamCharacters()
    stream.add("0123456789")
    with pytest.raises(TextRefused) as refused:
        stream.add("ab\udc00")
    assert refused.value.index == 12
    stream = StreamCharacters()
    stream.add("end \ud83d")
    with pytest.raises(TextRefused) as refused:
        stream.finish()
    assert refused.value.index == 4


def lone_surrogate_at(text: str) -> int | None:
    """The first lone surrogate's index, found the slow way."""
    index = 0
    while index < len(text):
        code = ord(text[index])
        if 0xD800 <= code <= 0xDBFF and index + 1 < len(text) \
                and 0xDC00 <= ord(text[index + 1]) <= 0xDFFF:
            index += 2
            continue
        if 0xD800 <= code <= 0xDFFF:
            return index
        index += 1
    return None


@settings(max_examples=200, deadline=None)
@given(text=client_text)
def test_any_string_is_taken_clean_or_refused_at_its_first_lone_surrogate(text: str) -> None:
    lone = lone_surrogate_at(text)
    try:
        taken = check_characters(text)
    except TextRefused as refused:
        assert refused.index == lone and refused.char == text[lone]
        assert str(refused).isascii()
        return
    assert lone is None
    taken.encode("utf-8")  # every character is a real one
    assert not any((unicodedata.category(char) == "Cc" and char not in "\t\n\r")
                   or is_noncharacter(char) for char in taken)
    pairs = sum(1 for char in taken if ord(char) > 0xFFFF) - sum(
        1 for char in text if ord(char) > 0xFFFF)
    assert len(taken) == len(text) - pairs


@settings(max_examples=150, deadline=None)
@given(text=client_text, data=st.data())
def test_a_stream_cut_anywhere_takes_the_text_as_a_whole_does(text: str, data) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks = [text[start:end] for start, end in zip([0, *cuts], [*cuts, len(text)],
                                                    strict=True)]
    stream = StreamCharacters()
    try:
        whole: str | int = check_characters(text)
    except TextRefused as refused:
        whole = refused.index
    try:
        streamed: str | int = "".join(stream.add(chunk) for chunk in chunks)
        stream.finish()
    except TextRefused as refused:
        streamed = refused.index
    assert streamed == whole
