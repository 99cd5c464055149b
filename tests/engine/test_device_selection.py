"""The device step loop (the backbone and one step session per step: scoring, selection,
the embeddings of the new tokens; IO binding) against the host decode, on the CPU
provider: the same codes, bit for bit, deterministic and with seeded Gumbel noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from device_loop_cases import OPTIONS, REQUESTS, items_of

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.decoding.device_check import decode_on_device, draw_position_noise
from wyoming_omnivoice.engine.decoding.device_selection import DeviceStep, step_session
from wyoming_omnivoice.engine.decoding.schedule import unmask_counts


@pytest.fixture(scope="module")
def engine(tiny_model: Path) -> Engine:
    return Engine.load(tiny_model, device="cpu", io_binding=True,
                       buckets=True)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_device_loop_equals_host_decode(engine: Engine, name: str) -> None:
    options = OPTIONS[name]
    graph = step_session(engine.graphs, guided=options.guidance_scale != 0,
                              noisy=options.position_temperature > 0)
    for requests in (REQUESTS, REQUESTS[1:2]):
        host = engine.decoder.decode(items_of(engine, requests, options), options)
        device = decode_on_device(engine.decoder, graph, items_of(engine, requests, options),
                                  options)
        assert engine.last_stats.steps == options.num_step
        for a, b in zip(host, device, strict=True):
            np.testing.assert_array_equal(a, b)


def test_noise_is_drawn_as_the_host_loop_draws_it() -> None:
    schedules = np.array([unmask_counts(8 * t, 5, 0.1) for t in (4, 7)], dtype=np.int64)
    schedules[0, 2] = 0  # a step where item 0 unmasks nothing draws nothing
    noise = draw_position_noise([np.random.default_rng(1), np.random.default_rng(2)],
                                schedules, [4, 7], 7)
    assert noise.shape == (2, 5, 8, 7)
    rng = np.random.default_rng(1)
    eps = np.float32(1e-10)
    for step in range(5):
        if schedules[0, step] == 0:
            assert not noise[0, step].any()
            continue
        u = rng.random((8, 4), dtype=np.float32)
        np.testing.assert_array_equal(noise[0, step, :, :4], -np.log(-np.log(u + eps) + eps))
        assert not noise[0, step, :, 4:].any()


def test_a_graph_of_the_wrong_kind_is_refused(engine: Engine) -> None:
    graph = step_session(engine.graphs, guided=True, noisy=False)
    step = DeviceStep(graph)
    assert not step.noisy
    with pytest.raises(ValueError, match="deterministic"):
        step.prepare(None, None, np.zeros((1, 8, 1), np.int64),  # type: ignore[arg-type]
                     np.ones((1, 1), np.int64), np.zeros(1, np.int64), guidance=2.0,
                     penalty=np.zeros((8, 1), np.float32), position_temperature=5.0,
                     noise=np.zeros((1, 1, 8, 1), np.float32))


@pytest.mark.parametrize("name", ["deterministic", "gumbel"])
def test_device_loop_equals_host_decode_in_the_rows_layout(name: str, tiny_model: Path
                                                          ) -> None:
    engine = Engine.load(tiny_model, device="cpu", io_binding=True,
                         buckets=True, layout="rows")
    options = OPTIONS[name]
    graph = step_session(engine.graphs, guided=True,
                              noisy=options.position_temperature > 0)
    host = engine.decoder.decode(items_of(engine, REQUESTS, options), options)
    assert engine.last_stats.layout == "rows"
    device = decode_on_device(engine.decoder, graph, items_of(engine, REQUESTS, options),
                              options)
    for a, b in zip(host, device, strict=True):
        np.testing.assert_array_equal(a, b)


def test_device_loop_with_padded_rows(tiny_model: Path) -> None:
    engine = Engine.load(tiny_model, device="cpu", io_binding=True,
                         buckets=True)
    engine.decoder.row_buckets = (1, 2, 4, 8, 16)  # as with CUDA graphs: 3 items, 4 rows
    options = OPTIONS["gumbel"]
    graph = step_session(engine.graphs, guided=True, noisy=True)
    host = engine.decoder.decode(items_of(engine, REQUESTS, options), options)
    assert engine.last_stats.rows == 4
    device = decode_on_device(engine.decoder, graph, items_of(engine, REQUESTS, options),
                              options)
    for a, b in zip(host, device, strict=True):
        np.testing.assert_array_equal(a, b)


def test_step_sessions_are_built_once(engine: Engine) -> None:
    first = step_session(engine.graphs, guided=True, noisy=True)
    assert step_session(engine.graphs, guided=True, noisy=True) is first
    assert step_session(engine.graphs, guided=True, noisy=False) is not first
