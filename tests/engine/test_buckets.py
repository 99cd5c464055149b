"""Length buckets: padded rows decode token-exact to unpadded ones; warm-up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.forward.layouts import BUCKETS, bucket_for

TINY = FIXTURES / "models" / "tiny"
DETERMINISTIC = DecodeOptions(position_temperature=0.0, class_temperature=0.0)
REQUESTS = [
    SynthesisRequest(text="Hi.", seed=5),
    SynthesisRequest(text="Turn on the heating in the bedroom at seven tomorrow morning.",
                     seed=6),
    SynthesisRequest(text="你好，世界！", language="zh", seed=7),
]


def test_bucket_set_is_bounded_and_rounds_up() -> None:
    assert tuple(sorted(BUCKETS)) == BUCKETS and len(BUCKETS) <= 10
    assert bucket_for(1) == 64
    assert bucket_for(64) == 64
    assert bucket_for(65) == 96
    assert bucket_for(1000) == 1024
    assert bucket_for(1025) == 1280
    assert bucket_for(1300) == 1536
    for length in range(1, 3000, 7):
        assert bucket_for(length) >= length


@pytest.fixture(scope="module", params=["packed", "rows"])
def engines(request: pytest.FixtureRequest, tiny_model: Path) -> tuple[Engine, Engine]:
    layout = request.param
    return (Engine.load(tiny_model, device="cpu", layout=layout, buckets=False),
            Engine.load(tiny_model, device="cpu", layout=layout, buckets=True,
                        io_binding=True))


@pytest.mark.slow
@pytest.mark.parametrize("options", [DETERMINISTIC, DecodeOptions(num_step=10)],
                         ids=["greedy", "gumbel"])
def test_bucketed_decode_equals_unbucketed(engines: tuple[Engine, Engine],
                                           options: DecodeOptions) -> None:
    plain, bucketed = engines
    expected = plain.generate_codes_batch(REQUESTS, options=options)
    got = bucketed.generate_codes_batch(REQUESTS, options=options)
    assert bucketed.last_stats.length in BUCKETS
    assert bucketed.last_stats.length > plain.last_stats.length
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_explicit_pad_and_padding_rows_are_exact(engines: tuple[Engine, Engine]) -> None:
    plain, _ = engines
    expected = plain.generate_codes("Good morning.", options=DETERMINISTIC)
    decoder = plain.decoder
    saved = decoder.row_buckets
    try:
        decoder.row_buckets = (4,)
        items = [plain.prompts.build("Good morning.", num_target=expected.shape[1],
                                     language=None, instruct=None)]
        from wyoming_omnivoice.engine.decoding.decoder import DecodeItem

        (got,) = decoder.decode([DecodeItem(items[0], np.random.default_rng(0))],
                                DETERMINISTIC, pad_to=300)
    finally:
        decoder.row_buckets = saved
    assert plain.last_stats.rows == 4 and plain.last_stats.length == 300
    np.testing.assert_array_equal(expected, got)


def test_warm_up_runs_each_short_reply_bucket(engines: tuple[Engine, Engine]) -> None:
    plain, bucketed = engines
    count = bucketed.warm_up()
    assert 2 <= count <= len(BUCKETS)
    assert plain.warm_up() == 1  # no buckets: one forward initialises the sessions
    a = plain.generate_codes("After warm-up.", options=DETERMINISTIC)
    b = bucketed.generate_codes("After warm-up.", options=DETERMINISTIC)
    np.testing.assert_array_equal(a, b)


def test_auto_layout_picks_the_cheaper_exact_layout() -> None:
    from wyoming_omnivoice.engine.forward.layouts import choose_layout

    engine = Engine.load(TINY, device="cpu")
    assert engine.decoder.layout == "auto"
    short = engine.prompts.build("Lights on.", num_target=40, language=None, instruct=None)
    long = engine.prompts.build("Lights on.", num_target=1500, language=None, instruct=None)
    assert choose_layout([short]) == "packed"
    assert choose_layout([long]) == "rows"  # one 3000-position row costs more attention
    # Without IO binding (CPU) the candidates are packed and split: split for long targets,
    # packed where a second backbone call per step costs more than the attention it saves.
    assert engine.decoder.layout_for([short]) == "packed"
    assert engine.decoder.layout_for([long]) == "split"
    bound = Engine.load(TINY, device="cpu", io_binding=True)
    assert bound.decoder.layout_for([long]) == "rows"


@pytest.mark.slow
@pytest.mark.parametrize("frames", [30, 1400])
def test_auto_layout_decodes_like_packed(frames: int) -> None:
    auto = Engine.load(TINY, device="cpu")
    packed = Engine.load(TINY, device="cpu", layout="packed")
    options = DecodeOptions(num_step=4, position_temperature=0.0)
    a = auto.generate_codes("Good evening.", num_frames=frames, options=options)
    b = packed.generate_codes("Good evening.", num_frames=frames, options=options)
    assert auto.last_stats.layout == ("packed" if frames == 30 else "split")
    np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_split_layout_grids_and_buckets_are_exact(tiny_model: Path) -> None:
    """Split runs the conditional rows and the unconditional rows as two backbone inputs,
    each padded to its own bucket when buckets are on; the codes do not change."""
    plain = Engine.load(tiny_model, device="cpu", layout="split")
    bucketed = Engine.load(tiny_model, device="cpu", layout="split", buckets=True)
    for options in (DETERMINISTIC, DecodeOptions(num_step=10)):
        expected = plain.generate_codes_batch(REQUESTS, options=options)
        got = bucketed.generate_codes_batch(REQUESTS, options=options)
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b)
    (cond, uncond) = plain.last_stats.grids
    assert cond[0] == uncond[0] == len(REQUESTS)
    assert uncond[1] < cond[1]  # the unconditional rows hold only the target frames
    bucket_grids = bucketed.last_stats.grids
    assert all(length in BUCKETS for _, length in bucket_grids)
    assert [length for _, length in bucket_grids] != [length for _, length in
                                                      plain.last_stats.grids]


def test_split_layout_refuses_io_binding() -> None:
    with pytest.raises(ValueError, match="split"):
        Engine.load(TINY, device="cpu", layout="split", io_binding=True)
