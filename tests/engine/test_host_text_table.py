"""The text-embedding table kept on the host (whole grid embedded once per decode there,
target positions on the device): the same codes as the ordinary IO-binding decode, on
the CPU provider, for the host and the device step loops."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from conftest import FIXTURES
from device_loop_cases import OPTIONS, REQUESTS, items_of

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.decoding.device_selection import decode_on_device, selection_session
from wyoming_omnivoice.engine.forward.target_embeddings import (
    AUDIO_IDS,
    TEXT_TABLE,
    target_embedding_model,
)


@pytest.fixture(scope="module", params=["tiny", "tiny-fp16io"])
def engines(request: pytest.FixtureRequest) -> tuple[Engine, Engine]:
    model = FIXTURES / "models" / request.param
    bound = Engine.load(model, device="cpu", io_binding=True, buckets=True)
    hosted = Engine.load(model, device="cpu", io_binding=True, buckets=True,
                         host_text_table=True)
    return bound, hosted


def test_the_device_graph_holds_only_the_audio_rows_of_the_text_table() -> None:
    path = FIXTURES / "models" / "tiny" / "audio_embeddings_encoder.onnx"
    model = onnx.ModelProto.FromString(target_embedding_model(path))
    (table,) = [t for t in model.graph.initializer if t.name == TEXT_TABLE]
    assert table.dims[0] == AUDIO_IDS < onnx.load(str(path)).graph.initializer[0].dims[0]


def test_sessions_are_where_they_should_be(engines: tuple[Engine, Engine]) -> None:
    _, hosted = engines
    assert hosted.graphs.target_embeddings is not None
    assert hosted.graphs.embeddings.session.get_providers() == ["CPUExecutionProvider"]
    assert hosted.decoder.runner.target_embeddings is hosted.graphs.target_embeddings


@pytest.mark.parametrize("name", ["deterministic", "gumbel", "no-cfg"])
def test_host_loop_codes_are_unchanged(engines: tuple[Engine, Engine], name: str) -> None:
    bound, hosted = engines
    options = OPTIONS[name]
    want = bound.generate_codes_batch(REQUESTS, options=options)
    got = hosted.generate_codes_batch(REQUESTS, options=options)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["deterministic", "gumbel"])
def test_device_loop_codes_are_unchanged(engines: tuple[Engine, Engine], name: str) -> None:
    bound, hosted = engines
    options = OPTIONS[name]
    graph = selection_session(hosted.graphs, guided=True,
                              noisy=options.position_temperature > 0)
    want = bound.decoder.decode(items_of(bound, REQUESTS, options), options)
    got = decode_on_device(hosted.decoder, graph, items_of(hosted, REQUESTS, options),
                           options)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
