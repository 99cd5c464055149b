"""The prefix cache (engine/forward/prefix_cache.py, engine/graphs/prefix_cache_graph.py) on the
tiny model: the rewritten graph equals the exact backbone given a cache of the same state
(so the graph surgery is right), N = 0 and 1 are the exact decode, N >= 2 decodes valid
codes with the refreshes it should, and bad settings get a clear error."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice.engine import DecodeOptions, Engine
from wyoming_omnivoice.engine.forward.layouts import Batch
from wyoming_omnivoice.engine.graphs.prefix_cache_graph import (
    PrefixCacheUnsupported,
    prefix_cache_graph,
)
from wyoming_omnivoice.engine.graphs.scoring import MASK_ID, NUM_CODEBOOKS

TEXT = "The living room lights are now turned on."
ANCHOR_TEXT = "This is the voice of the anchor."
STEPS = 16


@pytest.fixture(scope="module", params=["fp32", "int8"])
def engine(request: pytest.FixtureRequest, tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu", precision=request.param, prefix_cache=2)


def anchor() -> np.ndarray:
    return np.random.default_rng(7).integers(0, 1024, (NUM_CODEBOOKS, 50))


def mid_decode_batch(engine: Engine) -> Batch:
    """A packed batch of two anchored items of different lengths, part-way decoded."""
    prompts = [engine.prompts.build(text, num_target=frames, language=None, instruct=None,
                                    ref_text=ANCHOR_TEXT, ref_codes=anchor())
               for text, frames in ((TEXT, 40), ("Done.", 24))]
    batch = Batch(prompts, "packed", pad_to=prompts[0].length + 40 + 5)
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 1024, (2, NUM_CODEBOOKS, batch.t_max))
    tokens[rng.random(tokens.shape) < 0.5] = MASK_ID
    batch.put_all(tokens)
    return batch


def test_cached_forward_equals_the_full_forward_given_the_same_state(engine: Engine) -> None:
    batch = mid_decode_batch(engine)
    (grid,) = batch.grids
    (embeds,) = engine.decoder.embeddings.run(
        {"input_ids": grid.ids, "audio_mask": grid.audio_mask}, ["inputs_embeds"])
    exact = engine.decoder.run_backbone(grid, embeds)
    cached = engine._cached_backbone()
    hidden, presents = cached.full(embeds, grid.mask)
    # A refresh is the exact forward (int8: the same tensors are quantized).
    np.testing.assert_allclose(hidden, exact, rtol=0, atol=1e-5)
    assert len(presents) == 2 * cached.layers
    assert all(p.shape[0] == 2 and p.shape[2] == grid.length and p.ndim == 4 for p in presents)
    start = int(batch.target_cells(grid)[1].min())
    assert 0 < start < grid.length
    tail = cached.tail(np.ascontiguousarray(embeds[:, start:]),
                       np.ascontiguousarray(grid.mask[:, :, start:, :]), start,
                       [np.ascontiguousarray(p[:, :, :start]) for p in presents])
    assert tail.shape == (2, grid.length - start, engine.hidden_size)
    if engine.precision == "fp32":
        # Conditional targets see the cached prefix, unconditional ones only their block.
        np.testing.assert_allclose(tail, exact[:, start:], rtol=0, atol=1e-5)
    else:
        # int8 quantizes activations per tensor (fewer positions: other scales), so a
        # cached step is another int8 rounding of the same forward: as far from the fp32
        # forward as the full int8 forward is.
        truth = fp32_engine().decoder.run_backbone(grid, embeds)[:, start:]
        assert relative_error(tail, truth) < 1.25 * relative_error(exact[:, start:], truth)


@functools.cache
def fp32_engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu", precision="fp32")


def relative_error(value: np.ndarray, truth: np.ndarray) -> float:
    return float(np.linalg.norm(value - truth) / np.linalg.norm(truth))


def decode(engine: Engine, every: int, seed: int = 3) -> np.ndarray:
    return engine.generate_codes(TEXT, ref_codes=anchor(), ref_text=ANCHOR_TEXT, seed=seed,
                                 options=DecodeOptions(num_step=STEPS, prefix_cache=every))


def test_zero_and_one_are_the_exact_decode(engine: Engine) -> None:
    exact = decode(engine, 0)
    assert engine.last_stats.extra == {}
    same = decode(engine, 1)
    assert engine.last_stats.extra == {}  # the same code path: no cache at all
    np.testing.assert_array_equal(same, exact)


@pytest.mark.parametrize("every", [2, 4, STEPS])
def test_a_cached_decode_gives_valid_codes(engine: Engine, every: int) -> None:
    codes = decode(engine, every)
    assert codes.shape == (NUM_CODEBOOKS, decode(engine, 0).shape[1])
    assert codes.dtype == np.int64 and codes.min() >= 0 and codes.max() < MASK_ID
    decode(engine, every)
    stats = engine.last_stats.extra
    assert stats["prefix_refreshes"] == math.ceil(STEPS / every)
    assert stats["prefix_cached_steps"] == STEPS - math.ceil(STEPS / every)


def test_a_batch_decodes_with_the_cache(engine: Engine) -> None:
    from wyoming_omnivoice.engine import SynthesisRequest

    requests = [SynthesisRequest(text, ref_codes=anchor(), ref_text=ANCHOR_TEXT, seed=1)
                for text in (TEXT, "Done.", "Opening the garage door now.")]
    codes = engine.generate_codes_batch(requests, options=DecodeOptions(
        num_step=8, prefix_cache=4))
    assert [c.shape[0] for c in codes] == [NUM_CODEBOOKS] * 3
    assert all(c.min() >= 0 and c.max() < MASK_ID for c in codes)
    assert engine.last_stats.extra["prefix_cached_steps"] == 6


def test_a_grid_without_a_constant_prefix_decodes_exactly() -> None:
    """The ``rows`` layout's grid holds unconditional rows from column 0: nothing to cache."""
    rows = Engine.load(TINY_MODEL, device="cpu", precision="fp32", layout="rows")
    exact = decode(rows, 0)
    np.testing.assert_array_equal(decode(rows, 2), exact)
    split = Engine.load(TINY_MODEL, device="cpu", precision="fp32", layout="split")
    codes = decode(split, 2)  # the conditional grid cached, the unconditional one exact
    assert codes.shape == exact.shape
    assert split.last_stats.extra["prefix_cached_steps"] == STEPS // 2


@pytest.mark.parametrize("value", [-1, 257, 1.5, True, "2"])
def test_bad_intervals_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="prefix_cache must be a whole number from 0"):
        DecodeOptions(prefix_cache=value)  # type: ignore[arg-type]


def test_the_published_backbone_cannot_cache() -> None:
    with pytest.raises(ValueError, match="--precision int8 or fp32"):
        Engine.load(TINY_MODEL, device="cpu", precision="published", prefix_cache=2)
    published = Engine.load(TINY_MODEL, device="cpu", precision="published")
    with pytest.raises(ValueError, match="--precision int8 or fp32"):
        decode(published, 2)
    np.testing.assert_array_equal(decode(published, 1), decode(published, 0))


def test_a_graph_without_a_rotary_table_is_not_rewritten() -> None:
    model = onnx.load(str(TINY_MODEL / "llm_backbone_fp32.onnx"), load_external_data=False)
    with pytest.raises(PrefixCacheUnsupported, match="rotary position table"):
        prefix_cache_graph(model)
