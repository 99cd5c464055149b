"""The pacing of a reply: this host's decode speed, and how much text the next piece takes."""

from __future__ import annotations

import pytest

from wyoming_omnivoice.speech.pacing import (
    MAX_PIECE_CHARS,
    DecodeSpeed,
    PlannedPiece,
    Unit,
    piece_frames,
    plan_piece,
    units_of,
)
from wyoming_omnivoice.text.clauses import split_clauses

THREE = ("The living room lights are now turned on. The kitchen is at twenty one degrees. "
         "Tomorrow will be sunny with a light breeze from the west.")


def speed_of(overhead: float, per_frame: float) -> DecodeSpeed:
    speed = DecodeSpeed()
    for frames in (40, 80, 120):
        speed.record([frames], overhead + per_frame * frames)
    return speed


def sentence_units(*sentences: str) -> list[Unit]:
    return [unit for sentence in sentences for unit in units_of(sentence)]


def test_decode_speed_is_learned_from_recent_decodes() -> None:
    speed = speed_of(0.5, 0.04)
    overhead, per_frame = speed.model()
    assert overhead == pytest.approx(0.5) and per_frame == pytest.approx(0.04)
    assert speed.predict(100) == pytest.approx(4.5)
    # A faster host later: the window forgets the old decodes.
    for _ in range(12):
        speed.record([40], 0.3)
        speed.record([80], 0.5)
    assert speed.predict(100) == pytest.approx(0.6)
    # One length only: the prior split, and still the decode time of that length.
    single = DecodeSpeed()
    single.record([50], 2.0)
    assert single.predict(50) == pytest.approx(2.0)
    assert DecodeSpeed().predict(50) > 0  # before any decode: a prior


def test_first_piece_is_the_first_sentence() -> None:
    units = sentence_units(*split_sentences(THREE))
    assert plan_piece(units, None, speed_of(0.0, 0.001)) == 1
    # A sentence cut into clauses is still taken whole as the first piece.
    long_first = sentence_units("When you come home tonight, the heating will be on, and "
                                "the hall light will wait for you.", "Good night.")
    first = plan_piece(long_first, None, speed_of(0.0, 0.001))
    assert first > 1 and long_first[first - 1].ends_sentence
    assert not any(unit.ends_sentence for unit in long_first[:first - 1])


def split_sentences(text: str) -> list[str]:
    from wyoming_omnivoice.text.sentences import split_sentences as split

    return split(text)


def test_a_fast_host_takes_whole_sentences_up_to_the_cap() -> None:
    units = sentence_units(*split_sentences(THREE))
    assert all(unit.ends_sentence for unit in units)
    fast = speed_of(0.05, 0.001)
    assert plan_piece(units, 5.0, fast) == 3
    many = sentence_units(*(["This sentence is about fifty characters long, say."] * 8))
    count = plan_piece(many, 100.0, fast)
    assert sum(len(u.text) + 1 for u in many[:count]) - 1 <= MAX_PIECE_CHARS < \
        sum(len(u.text) + 1 for u in many[:count + 1]) - 1


def test_only_what_decodes_before_the_client_runs_out() -> None:
    units = sentence_units(*split_sentences(THREE))
    speed = speed_of(0.5, 0.04)  # 40 frames: 2.1 s, two sentences: more
    one = speed.predict(piece_frames(units[0].text))
    assert plan_piece(units, one / 0.8 + 0.01, speed) == 1
    assert plan_piece(units, 100.0, speed) == 3


def test_a_slow_host_cuts_at_clauses_and_takes_at_least_one() -> None:
    sentence = ("The weather today is sunny with a high of twenty degrees, and tomorrow it "
                "will rain in the afternoon, so take an umbrella.")
    units = sentence_units(sentence, "Bye for now.")
    assert [u.ends_sentence for u in units] == [False, False, True, True]
    speed = speed_of(0.2, 0.04)
    whole = speed.predict(piece_frames(sentence))
    clause = speed.predict(piece_frames(units[0].text))
    assert clause < whole
    assert plan_piece(units, (clause + whole) / 2 / 0.8, speed) in (1, 2)
    assert plan_piece(units, 0.01, speed) == 1  # slower than real time: one clause


def test_split_clauses_gives_the_sentence_back() -> None:
    sentence = ("The weather today is sunny with a high of twenty degrees, and tomorrow it "
                "will rain in the afternoon, so take an umbrella.")
    clauses = split_clauses(sentence)
    assert len(clauses) == 3 and " ".join(clauses) == sentence
    assert split_clauses("Hi, there.") == ["Hi, there."]  # no clause under 20 letters
    assert split_clauses("It costs 1,000 euros at 10:30 today, or twenty-one tomorrow."
                         ) == ["It costs 1,000 euros at 10:30 today,", "or twenty-one tomorrow."]


def test_budget_of_the_next_piece() -> None:
    planned = PlannedPiece(started=10.0, decode_s=2.0, audio_s=3.0)
    # Still decoding at 11: the next may take the audio of this piece plus what is queued.
    assert planned.budget(11.0, None) == pytest.approx(3.0)
    assert planned.budget(11.0, 13.0) == pytest.approx(4.0)  # 1 s still queued at 12
    # Decoded already: what the client still has.
    assert planned.budget(12.5, 15.0) == pytest.approx(2.5)
    assert planned.budget(20.0, 15.0) == 0.0
