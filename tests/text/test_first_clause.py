"""First audio sooner: a long first sentence is spoken from its first clause.

Unit tests of the clause cut in several scripts (one-shot and streamed), and a real server
process whose first audio cycle of a stream comes from the clause (and, with
``--whole-first-sentence``, from the whole sentence).
"""

from __future__ import annotations

import pytest
from conftest import audio_cycles, pcm_bytes, stream, synthesize
from hypothesis import given, settings
from hypothesis import strategies as st
from wyoming.event import Event

from wyoming_omnivoice.text.clauses import (
    FIRST_CLAUSE_ABOVE,
    MIN_CLAUSE,
    first_clause_end,
    split_first_clause,
)
from wyoming_omnivoice.text.prepare import prepare_one_shot
from wyoming_omnivoice.text.scripts import spoken_length
from wyoming_omnivoice.text.sentences import SentenceSplitter

EN_LONG = ("The weather in the city today is mostly sunny with a high of twenty-one degrees, "
           "and in the evening clouds move in from the west, bringing light rain to the "
           "northern districts.")
EN_CLAUSE = "The weather in the city today is mostly sunny with a high of twenty-one degrees,"


def split_whole(text: str, max_chars: int = 300) -> list[str]:
    splitter = SentenceSplitter(max_chars, first_clause=True)
    return splitter.add(text) + splitter.finish()


def split_streamed(text: str, step: int) -> list[str]:
    splitter = SentenceSplitter(first_clause=True)
    sentences: list[str] = []
    for start in range(0, len(text), step):
        sentences += splitter.add(text[start:start + step])
    return sentences + splitter.finish()


# Each: a long first sentence (in its script), the expected first clause.
LONG_FIRST_SENTENCES = [
    (EN_LONG + " Tomorrow is dry.", EN_CLAUSE),
    ("Das Wetter in der Stadt ist heute überwiegend sonnig bei einundzwanzig Grad; am Abend "
     "ziehen aus dem Westen Wolken auf und bringen leichten Regen. Morgen bleibt es trocken.",
     "Das Wetter in der Stadt ist heute überwiegend sonnig bei einundzwanzig Grad;"),
    ("Le temps est ensoleillé sur toute la ville — en soirée, des nuages arrivent de l'ouest "
     "avec un peu de pluie sur les quartiers nord. Demain, il fera sec.",
     "Le temps est ensoleillé sur toute la ville —"),
    ("الطقس اليوم في المدينة مشمس في معظم الأوقات، وفي المساء تأتي الغيوم من الغرب مع أمطار "
     "خفيفة على الأحياء الشمالية من المدينة. غدا جاف.",
     "الطقس اليوم في المدينة مشمس في معظم الأوقات،"),
    ("今天的天气非常好，最高气温二十一度，晚上会有小雨，明天早上可能还会下雨，请记得带伞。明天见。",
     "今天的天气非常好，最高气温二十一度，"),
    ("今日はとても良い天気で、最高気温は二十一度ですが、夜には西から雲が広がり、雨が降るでしょう。",
     "今日はとても良い天気で、"),
    ("Ο καιρός στην πόλη σήμερα είναι κυρίως ηλιόλουστος, και το βράδυ έρχονται σύννεφα από "
     "τα δυτικά με λίγη βροχή. Αύριο;",
     "Ο καιρός στην πόλη σήμερα είναι κυρίως ηλιόλουστος,"),
    ("የዛሬው የአየር ሁኔታ በአብዛኛው ፀሐያማ ነው፣ ምሽት ላይ ከምዕራብ ደመና ይመጣል፣ ቀላል ዝናብም ይዘንባል። ነገ ደረቅ ነው።",
     "የዛሬው የአየር ሁኔታ በአብዛኛው ፀሐያማ ነው፣"),
]


@pytest.mark.parametrize(("text", "clause"), LONG_FIRST_SENTENCES)
def test_long_first_sentence_starts_with_its_first_clause(text: str, clause: str) -> None:
    whole = split_whole(text)
    assert whole[0] == clause
    assert spoken_length(clause) >= MIN_CLAUSE
    # Nothing is lost, and the next sentences are not cut.
    assert "".join("".join(whole).split()) == "".join(text.split())
    for step in (1, 3, 17, 64):
        assert split_streamed(text, step) == whole


def test_only_the_first_sentence_is_cut() -> None:
    text = "Short start. " + EN_LONG
    assert split_whole(text) == ["Short start.", EN_LONG]


def test_short_first_sentence_is_whole() -> None:
    text = "The lights are on, the door is locked. " + EN_LONG
    assert split_whole(text)[0] == "The lights are on, the door is locked."


@pytest.mark.parametrize("text", [
    # The first comma comes too early (a tiny clause) and the next too late.
    "Yes, " + "the weather in the city today is mostly sunny with a high of twenty-one "
    "degrees and in the evening clouds move in from the west, bringing rain.",
    # No clause mark at all.
    "The weather in the city today is mostly sunny with a high of twenty-one degrees and "
    "in the evening clouds move in from the west bringing light rain.",
    # Numbers and words with commas, colons and hyphens inside are not clause ends.
    "At 10:30 the 1,000 runners of the twenty-first city marathon start at the old "
    "market square and run along the river to the northern park and back.",
])
def test_no_cut_without_a_clause_of_the_right_size(text: str) -> None:
    assert split_whole(text) == [text]
    assert split_first_clause(text) == [text]


def test_tiny_first_clause_is_skipped_for_the_next() -> None:
    text = "Well, the weather in the city today is mostly sunny with a high of twenty-one " \
           "degrees, and tonight it rains."
    assert split_first_clause(text)[0] == ("Well, the weather in the city today is mostly "
                                           "sunny with a high of twenty-one degrees,")


def test_clause_mark_needs_a_space_or_is_wide() -> None:
    assert first_clause_end("a" * 40 + ",b" + " c" * 60) is None
    assert first_clause_end("a" * 40 + ", b" + " c" * 60) == 41
    assert first_clause_end("天" * 12 + "，" + "地" * 40) == 13
    assert first_clause_end("a" * 40 + " - b" + " c" * 60) == 42
    assert first_clause_end("a" * 40 + "-b" + " c" * 60) is None


def test_stream_releases_the_clause_before_the_sentence_ends() -> None:
    splitter = SentenceSplitter(first_clause=True)
    released = splitter.add(EN_LONG[:FIRST_CLAUSE_ABOVE + 5])  # no stop yet
    assert released == [EN_CLAUSE]
    assert splitter.add(EN_LONG[FIRST_CLAUSE_ABOVE + 5:] + " Next one.") == [
        EN_LONG[len(EN_CLAUSE) + 1:]]
    assert splitter.finish() == ["Next one."]


def test_stream_without_first_clause_keeps_the_sentence() -> None:
    splitter = SentenceSplitter()
    assert splitter.add(EN_LONG + " ") == [EN_LONG]


def test_one_shot_pieces() -> None:
    text = EN_LONG + " Tomorrow is dry. The weekend looks warm."
    assert prepare_one_shot(text, first_clause=True) == [
        EN_CLAUSE, EN_LONG[len(EN_CLAUSE) + 1:] + " Tomorrow is dry. The weekend looks warm."]
    assert prepare_one_shot(text) == [EN_LONG, "Tomorrow is dry. The weekend looks warm."]


_PLAIN = ["hello", "world", "weather", "today", "sunny", "天气", "καλά", "բարեւ", "نعم",
          "हाँ", "ሰላም", "สวัสดี", "twenty-one", "1,000", "10:30", "3.5", "Dr."]
_MARKED = ["ok,", "so;", "—", "-", "ναι,", "نعم،", "你好，", "bien:", '"quote,"', "καλά;",
           "բարեւ:", "end.", "no?", "再见。", "हाँ।", "ሰላም።", "\n", "\n\n", "- item", "yes!"]
#: Mostly plain words, so that first sentences are often long enough to be cut.
_words = st.sampled_from(_PLAIN * 4 + _MARKED)


@settings(max_examples=150, deadline=None)
@given(words=st.lists(_words, min_size=1, max_size=80),
       cuts=st.lists(st.integers(min_value=0, max_value=600), max_size=14))
def test_fragmentation_never_changes_the_first_clause(words: list[str], cuts: list[int]
                                                       ) -> None:
    text = " ".join(words)
    # No max_chars cut here: that cut of a stream is a rule of its own.
    whole = split_whole(text, max_chars=10_000)
    points = sorted({c % (len(text) + 1) for c in cuts})
    fragments = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    splitter = SentenceSplitter(10_000, first_clause=True)
    released = [s for fragment in fragments for s in splitter.add(fragment)]
    assert released + splitter.finish() == whole
    assert "".join("".join(whole).split()) == "".join(text.split())


# ---- a real server ----------------------------------------------------------------------


def _chunks(text: str, size: int = 9) -> list[str]:
    return [text[start:start + size] for start in range(0, len(text), size)]


#: Both servers of the stream test: the same audio for the same words (``--deterministic``)
#: and no keep-alive silence (``--max-gap 0``): the gap guard pads a cycle with 0.25 s of
#: silence whenever a decode runs late (on a loaded host, the first piece's), which says
#: nothing about the clause and used to tip the length comparison below.
EXACT = ("--deterministic", "--max-gap", "0")


def _first_cycle_pcm(events: list[Event]) -> bytes:
    cycles = audio_cycles(events)
    assert cycles, "no audio"
    return pcm_bytes(cycles[0])


@pytest.mark.slow
async def test_stream_first_audio_comes_from_the_clause(server_factory) -> None:
    """A stream's sentences are audio cycles of their own: with the clause cut the first
    cycle is the clause (exactly the audio of the clause asked for alone), without it the
    whole sentence (exactly the sentence's audio), whatever the host's load."""
    text = EN_LONG + " Tomorrow is dry."
    cut = server_factory(*EXACT)
    whole = server_factory(*EXACT, "--whole-first-sentence")
    cut_cycles = audio_cycles(await stream(cut.uri, _chunks(text)))
    whole_cycles = audio_cycles(await stream(whole.uri, _chunks(text)))
    # clause, then the rest ("Tomorrow is dry." may share a cycle with the rest of the
    # sentence when the pacing merges what arrived meanwhile, or the sentence's)
    assert len(cut_cycles) >= 2 and len(whole_cycles) >= 1
    clause_audio = pcm_bytes(cut_cycles[0])
    sentence_audio = pcm_bytes(whole_cycles[0])
    assert clause_audio == _first_cycle_pcm(await synthesize(cut.uri, EN_CLAUSE))
    assert sentence_audio == _first_cycle_pcm(await synthesize(whole.uri, EN_LONG))
    later = b"".join(pcm_bytes(cycle) for cycle in cut_cycles[1:])  # however it was cut
    assert 0 < len(clause_audio) < len(later)
    assert len(clause_audio) < len(sentence_audio) / 2


@pytest.mark.slow
async def test_one_shot_long_first_sentence_is_two_pieces(server_factory) -> None:
    """A one-shot answer is one audio cycle; the server's log says how many pieces it was
    decoded in: two with the clause cut, one with --whole-first-sentence."""
    cut = server_factory()
    whole = server_factory("--whole-first-sentence")
    for server, pieces in ((cut, 2), (whole, 1)):
        events = await synthesize(server.uri, EN_LONG)
        cycles = audio_cycles(events)
        assert len(cycles) == 1 and pcm_bytes(cycles[0])
        assert f"in {pieces} piece(s)" in server.log
