"""The incremental sentence splitter used for streamed text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyoming_omnivoice.text.sentences import SentenceSplitter, split_sentences


def feed(fragments: list[str]) -> tuple[list[list[str]], list[str]]:
    """Sentences released after each fragment, and what finish() flushes."""
    splitter = SentenceSplitter()
    released = [splitter.add(fragment) for fragment in fragments]
    return released, splitter.finish()


def test_sentence_released_on_terminal_punctuation_and_space() -> None:
    released, rest = feed(["Hello world. ", "how are you"])
    # The lower-case start of the next sentence is not needed.
    assert released == [["Hello world."], []]
    assert rest == ["how are you"]


def test_sentence_is_held_until_whitespace_follows() -> None:
    splitter = SentenceSplitter()
    assert splitter.add("It costs 3.") == []  # could be 3.14
    assert splitter.add("14 euros. ") == ["It costs 3.14 euros."]


def test_fragments_split_mid_word() -> None:
    released, rest = feed(["Hel", "lo wor", "ld! Th", "is is t", "wo? A", "nd three."])
    assert [s for batch in released for s in batch] == ["Hello world!", "This is two?"]
    assert rest == ["And three."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith is here. He waits.", ["Dr. Smith is here.", "He waits."]),
        ("See e.g. the manual. Then go.", ["See e.g. the manual.", "Then go."]),
        ("The U.S. team won. Great.", ["The U.S. team won.", "Great."]),
        ("J. R. R. Tolkien wrote it. Yes.", ["J. R. R. Tolkien wrote it.", "Yes."]),
        ("Pi is 3.14159 roughly. Ok.", ["Pi is 3.14159 roughly.", "Ok."]),
        ("It was 2024. Then it was not.", ["It was 2024.", "Then it was not."]),
        ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
        ("Wait... what?! Really.", ["Wait...", "what?!", "Really."]),
        ("**Bold claim.** Next one.", ["**Bold claim.**", "Next one."]),
        ("你好。今天天气很好！我们走吧", ["你好。", "今天天气很好！", "我们走吧"]),
        ("「你好。」他说。", ["「你好。」", "他说。"]),
        ("Here is a list:\n- eggs\n- milk", ["Here is a list:", "- eggs", "- milk"]),
        ("1. First step\n2. Second step", ["1. First step", "2. Second step"]),
        ("Para one\n\nPara two", ["Para one", "Para two"]),
        ("¿Qué tal? Bien.", ["¿Qué tal?", "Bien."]),
    ],
)
def test_split_rules(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_cjk_stop_waits_for_one_more_character() -> None:
    splitter = SentenceSplitter()
    assert splitter.add("你好。") == []  # a closing quote may still follow
    assert splitter.add("再见") == ["你好。"]


def test_run_on_sentence_is_cut_at_a_clause_mark() -> None:
    text = "word, " * 80  # 480 characters without a full stop
    splitter = SentenceSplitter(max_chars=120)
    sentences = splitter.add(text)
    assert sentences and all(len(s) <= 120 for s in sentences)
    assert all(s.endswith(",") for s in sentences)


def test_finish_empties_the_splitter() -> None:
    splitter = SentenceSplitter()
    splitter.add("No stop at the end")
    assert splitter.finish() == ["No stop at the end"]
    assert splitter.pending == ""
    assert splitter.finish() == []


def test_whitespace_only_gives_nothing() -> None:
    assert split_sentences("  \n\t ") == []


_words = st.sampled_from(
    ["hello", "world", "Dr.", "3.5", "e.g.", "U.S.", "ok", "你好", "再见。", "yes!", "no?",
     "end.", "wait...", '"quote."', "- item", "\n", "\n\n", "1."]
)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_words, min_size=1, max_size=30),
       cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_fragmentation_never_changes_the_result(words: list[str], cuts: list[int]) -> None:
    """However the text is cut into fragments, the sentences are the same."""
    text = " ".join(words)
    whole = split_sentences(text)
    points = sorted({c % (len(text) + 1) for c in cuts})
    fragments = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    released, rest = feed(fragments)
    assert [s for batch in released for s in batch] + rest == whole
    # Nothing is lost: the sentences hold every non-space character in order.
    assert "".join("".join(whole).split()) == "".join(text.split())


# Scripts with stops of their own: each case is split the same way whole and streamed.
SCRIPT_CASES = [
    # Arabic question mark and comma, Urdu full stop (no space needed after either).
    ("هل أنت بخير؟ نعم، أنا بخير. شكرا", ["هل أنت بخير؟", "نعم، أنا بخير.", "شكرا"]),
    ("آپ کیسے ہیں؟میں ٹھیک ہوں۔ شکریہ۔", ["آپ کیسے ہیں؟", "میں ٹھیک ہوں۔", "شکریہ۔"]),
    # Devanagari danda and double danda.
    ("मैं घर जा रहा हूँ। तुम कहाँ हो॥ ठीक है।", ["मैं घर जा रहा हूँ।", "तुम कहाँ हो॥", "ठीक है।"]),
    ("बत्ती जल गई।दरवाज़ा बंद है।", ["बत्ती जल गई।", "दरवाज़ा बंद है।"]),
    # Greek: ";" after a Greek word is a question mark (also U+037E), "·" is not a stop.
    ("Τι κάνεις; Καλά, ευχαριστώ· εσύ; Ωραία.", ["Τι κάνεις;", "Καλά, ευχαριστώ· εσύ;",
                                                "Ωραία."]),
    ("Πού είσαι\u037e Εδώ.", ["Πού είσαι\u037e", "Εδώ."]),
    ("«Τι ώρα είναι;» ρώτησε.", ["«Τι ώρα είναι;»", "ρώτησε."]),
    # Armenian full stop, and ":" typed for it after an Armenian word.
    ("Բարեւ։ Ինչպես ես: Լավ եմ։", ["Բարեւ։", "Ինչպես ես:", "Լավ եմ։"]),
    # Ethiopic full stop, question mark and paragraph separator.
    ("ሰላም ነው። እንዴት ነህ፧ደህና ነኝ፨ አመሰግናለሁ።", ["ሰላም ነው።", "እንዴት ነህ፧", "ደህና ነኝ፨",
                                             "አመሰግናለሁ።"]),
    # Thai has no stop: a space between Thai words ends a sentence once it is long enough.
    ("สวัสดีครับ วันนี้อากาศดีมาก เราจะไปเที่ยวทะเลกันไหม ผมคิดว่าน่าสนุกมากเลยครับ พรุ่งนี้ฝนจะตก",
     ["สวัสดีครับ วันนี้อากาศดีมาก เราจะไปเที่ยวทะเลกันไหม", "ผมคิดว่าน่าสนุกมากเลยครับ พรุ่งนี้ฝนจะตก"]),
    ("สวัสดีครับ วันนี้อากาศดี", ["สวัสดีครับ วันนี้อากาศดี"]),
    # A Thai space before a number or a Latin word is not a boundary.
    ("ราคาของห้องพักโรงแรมริมทะเลในคืนวันเสาร์นี้ 2500 บาทต่อคืนครับ",
     ["ราคาของห้องพักโรงแรมริมทะเลในคืนวันเสาร์นี้ 2500 บาทต่อคืนครับ"]),
]


@pytest.mark.parametrize(("text", "expected"), SCRIPT_CASES)
def test_script_stops(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
    for step in (1, 2, 5):
        fragments = [text[start:start + step] for start in range(0, len(text), step)]
        released, rest = feed(fragments)
        assert [s for batch in released for s in batch] + rest == expected


@pytest.mark.parametrize("text", [
    "Turn on the lights; then lock the door.",
    "Licht an; Tür zu.",
    "Allume la lumière ; ferme la porte.",
    "Note: the door is locked.",
    "Включи свет; закрой дверь.",
    "Time 10:30; ok.",
])
def test_semicolons_and_colons_of_other_scripts_are_not_stops(text: str) -> None:
    assert split_sentences(text) == [text]


def test_thai_sentence_waits_for_the_next_word() -> None:
    splitter = SentenceSplitter()
    first = "สวัสดีครับ วันนี้อากาศดีมาก เราจะไปเที่ยวทะเลกันไหม"
    assert splitter.add(first + " ") == []  # a number or a Latin word may follow
    assert splitter.add("ผม") == [first]
