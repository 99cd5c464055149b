"""The IO-binding step runner (device-resident tensors) on CPU: same codes as the plain path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.forward.iobinding import StepRunner

FIXTURES = FIXTURES / "models"
DETERMINISTIC = DecodeOptions(position_temperature=0.0, class_temperature=0.0)
REQUESTS = [
    SynthesisRequest(text="Hello world.", language="en", seed=1),
    SynthesisRequest(text="The kitchen lights are now off, good night.", seed=2),
    SynthesisRequest(text="Bonjour!", instruct="female, low pitch", seed=3),
]
OPTIONS = [
    DETERMINISTIC,
    DecodeOptions(num_step=12),  # Gumbel position noise, seeded per item
    DecodeOptions(num_step=8, class_temperature=0.8, guidance_scale=3.0),
    DecodeOptions(num_step=8, guidance_scale=0.0, position_temperature=0.0),
]


@pytest.fixture(scope="module")
def engines(tiny_model: Path) -> tuple[Engine, Engine]:
    model = tiny_model
    plain = Engine.load(model, device="cpu", io_binding=False)
    bound = Engine.load(model, device="cpu", io_binding=True)
    return plain, bound


def test_runner_is_used_only_when_asked(engines: tuple[Engine, Engine]) -> None:
    plain, bound = engines
    assert plain.decoder.runner is None
    assert isinstance(bound.decoder.runner, StepRunner)
    assert bound.decoder.runner.device == "cpu"


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS, ids=["greedy", "gumbel", "classes", "no-cfg"])
def test_bound_decode_equals_plain_decode(engines: tuple[Engine, Engine],
                                          options: DecodeOptions) -> None:
    plain, bound = engines
    expected = plain.generate_codes_batch(REQUESTS, options=options)
    got = bound.generate_codes_batch(REQUESTS, options=options)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(a, b)


def test_buffers_are_reused_across_decodes_of_one_shape(engines: tuple[Engine, Engine]) -> None:
    _, bound = engines
    runner = bound.decoder.runner
    first = bound.generate_codes("Hello world.", options=DETERMINISTIC)
    shape = (bound.last_stats.rows, bound.last_stats.length)
    buffers = runner.buffers(*shape)
    again = bound.generate_codes("Hello world.", options=DETERMINISTIC)
    assert runner.buffers(*shape) is buffers
    np.testing.assert_array_equal(first, again)


def test_fp16_embedding_output_is_cast_on_the_device(fp16io_model: Path) -> None:
    """The fp16-io embeddings graph returns fp16; the runner adds a device-side cast."""
    bound = Engine.load(fp16io_model, device="cpu", io_binding=True)
    runner = bound.decoder.runner
    assert runner._embed_caster is not None
    codes = bound.generate_codes("Cast me.", options=DETERMINISTIC)
    assert codes.min() >= 0 and codes.max() < 1024


def test_cuda_graph_request_is_a_no_op_on_cpu(tiny_model: Path) -> None:
    engine = Engine.load(tiny_model, device="cpu", cuda_graph=True)
    assert engine.decoder.backbone.cuda_graph is False
    # The CPU's run options only shrink the arena after each run; no capture entry.
    run_options = engine.decoder.backbone.run_options
    assert run_options.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    assert engine.decoder.row_buckets is None
    codes = engine.generate_codes("Still fine.", options=DETERMINISTIC)
    assert codes.shape[0] == 8


def test_only_bucket_shapes_within_the_capture_size_get_cuda_graphs(
        engines: tuple[Engine, Engine]) -> None:
    _, bound = engines
    runner = StepRunner(bound.graphs.embeddings, bound.decoder.backbone,
                        bound.hidden_size, buckets=(64, 128, 512), capture_positions=1024)
    assert runner.captures(1, 512) and runner.captures(8, 128) and runner.captures(16, 64)
    assert not runner.captures(4, 512)  # 2048 positions: no graph, loose buffers
    assert not runner.captures(1, 100)  # not a bucket length
    assert runner.captured == []  # CPU: nothing captured
