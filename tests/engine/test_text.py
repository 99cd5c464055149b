"""Prompt text rules and long-text chunking, compared with upstream's functions."""

from __future__ import annotations

from rule_goldens import rules, short_digest

from wyoming_omnivoice.engine.prompt.text_rules import (
    ABBREVIATIONS,
    END_PUNCTUATION,
    NONVERBAL_TAGS,
    add_punctuation,
    chunk_text_punctuation,
    combine_text,
    split_nonverbal,
)

GOLDEN = rules()["text"]


def test_constants_match_upstream() -> None:
    assert sorted(ABBREVIATIONS) == GOLDEN["abbreviations"]
    assert sorted(END_PUNCTUATION) == GOLDEN["end_punctuation"]
    assert len(NONVERBAL_TAGS) == 13


def test_combine_text_matches_upstream() -> None:
    cases = GOLDEN["combine"]
    assert len(cases) > 150
    assert [combine_text(text, ref) for text, ref, _ in cases] == [want for *_, want in cases]


def test_combine_text_spec_examples() -> None:
    assert (
        combine_text("Hello  world.\nHow are\tyou?", "Ref text here.")
        == "Ref text here. Hello world.How are you?"
    )
    assert combine_text("你好 世界（测试） abc") == "你好世界(测试) abc"


def test_split_nonverbal_matches_upstream_tokenizer_calls() -> None:
    cases = GOLDEN["nonverbal"]
    assert sum(len(pieces) > 1 for _, pieces in cases) > 50
    assert [split_nonverbal(text) for text, _ in cases] == [pieces for _, pieces in cases]


def test_split_nonverbal_examples() -> None:
    assert split_nonverbal("<|text_start|>Hi [laughter] there<|text_end|>") == [
        "<|text_start|>Hi ",
        "[laughter]",
        " there<|text_end|>",
    ]
    assert split_nonverbal("[sigh][question-en]") == ["[sigh]", "[question-en]"]
    assert split_nonverbal("[B EY1 S] [laugh]") == ["[B EY1 S] [laugh]"]
    assert split_nonverbal("") == []


def test_chunk_text_punctuation_matches_upstream() -> None:
    texts = GOLDEN["chunk_texts"]
    cases = GOLDEN["chunk"]
    assert len(cases) > 3000
    mismatches = []
    for index, chunk_len, min_len, want in cases:
        got = chunk_text_punctuation(texts[index], chunk_len, min_chunk_len=min_len)
        if (got if isinstance(want, list) else short_digest(got)) != want:
            mismatches.append((texts[index], chunk_len, min_len, want, got))
    assert mismatches == []


def test_chunk_text_examples() -> None:
    text = "Mr. Smith went to Washington. He said hi! Did he? Yes."
    assert chunk_text_punctuation(text, 30) == [
        "Mr. Smith went to Washington.",
        "He said hi! Did he? Yes.",
    ]
    assert chunk_text_punctuation("“Quoted.” Next one.", 5) == ["“Quoted.”", "Next one."]
    assert chunk_text_punctuation("   ", 10) == []


def test_add_punctuation_matches_upstream() -> None:
    cases = GOLDEN["add_punctuation"]
    assert [add_punctuation(text) for text, _ in cases] == [want for _, want in cases]
    assert add_punctuation(" hello ") == "hello."
    assert add_punctuation("你好") == "你好。"
    assert add_punctuation("done!") == "done!"
    assert add_punctuation("") == ""
