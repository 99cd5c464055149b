"""Very short replies decode on a minimum canvas and come out trimmed to their speech.

Under about 40 frames OmniVoice gives rumble instead of speech (see ``MIN_CANVAS_FRAMES``),
so a one-word reply is decoded on 40 frames; the post-processing then trims what the
model left silent at the end, so the reply is no longer than its speech needs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine import MIN_CANVAS_FRAMES, estimate_num_frames

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "tiny"
SAMPLES_PER_FRAME = 960
RATE = 24000
#: post_process keeps 100 ms of trailing silence and pads 100 ms of zeros on each side.
EDGES_S = 0.1 + 0.2
OPTIONS = DecodeOptions(num_step=4)


@pytest.fixture(scope="module")
def engine(tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu")


def test_one_word_reply_decodes_at_least_the_minimum_canvas(engine: Engine) -> None:
    estimate = estimate_num_frames("Done.")
    assert estimate < MIN_CANVAS_FRAMES  # the case the minimum is for
    codes = engine.generate_codes("Done.", options=OPTIONS, seed=1)
    assert codes.shape == (8, MIN_CANVAS_FRAMES)
    # An explicit short duration is raised too; a long one is kept as asked.
    assert engine.generate_codes("Done.", num_frames=10, options=OPTIONS).shape[1] == 40
    assert engine.generate_codes("Done.", num_frames=41, options=OPTIONS).shape[1] == 41
    upstream = Engine.load(TINY, device="cpu", min_canvas_frames=0)
    assert upstream.generate_codes("Done.", options=OPTIONS).shape == (8, estimate)


def test_batched_and_single_agree_on_the_minimum(engine: Engine) -> None:
    requests = [SynthesisRequest(text="Done.", seed=3),
                SynthesisRequest(text="The living room lights are now turned on.", seed=4)]
    batch = engine.generate_codes_batch(requests, options=OPTIONS)
    assert batch[0].shape[1] == MIN_CANVAS_FRAMES
    single = engine.generate_codes("Done.", options=OPTIONS, seed=3)
    np.testing.assert_array_equal(batch[0], single)


def test_the_reply_is_the_post_processed_canvas(engine: Engine) -> None:
    """synthesize runs the canvas through the post-processing that trims silence."""
    from wyoming_omnivoice.engine.audio.postprocess import post_process

    audio = engine.synthesize("Done.", options=OPTIONS, seed=5)
    raw = engine.decode_audio(engine.generate_codes("Done.", options=OPTIONS, seed=5))
    assert raw.shape[0] == MIN_CANVAS_FRAMES * SAMPLES_PER_FRAME
    np.testing.assert_array_equal(audio, post_process(raw, None))


def test_silence_the_model_leaves_in_the_canvas_is_trimmed(engine: Engine) -> None:
    """Speech that ends before the canvas does: the reply ends 100 ms after the speech."""
    from wyoming_omnivoice.engine.audio.postprocess import post_process

    speech_frames = estimate_num_frames("Done.")
    raw = engine.decode_audio(engine.generate_codes("Done.", options=OPTIONS, seed=6))
    spoken = raw.copy()
    spoken[speech_frames * SAMPLES_PER_FRAME:] = 0.0  # the model stopped speaking there
    trimmed = post_process(spoken, None)
    untrimmed = post_process(raw, None)
    needed = speech_frames * SAMPLES_PER_FRAME + int(EDGES_S * RATE)
    assert len(trimmed) <= needed + RATE // 100  # pydub's ms positions: 10 ms slack
    assert len(trimmed) < len(untrimmed)
