"""The text-embedding table kept on the host (whole grid embedded once per decode there,
target positions on the device): the same codes as the ordinary IO-binding decode, on
the CPU provider, for the host and the device step loops."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import TINY_MODEL
from device_loop_cases import OPTIONS, REQUESTS, items_of

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.decoding.device_check import decode_on_device
from wyoming_omnivoice.engine.decoding.device_selection import step_session
from wyoming_omnivoice.engine.forward.target_embeddings import (
    AUDIO_IDS,
    find_text_table,
    target_embedding_model,
    text_table_summary,
)

EMBEDDINGS = "audio_embeddings_encoder.onnx"
#: The name the published export most likely gives its text table (its wrapper's module).
PUBLISHED_NAME = "text_embed.weight"


def renamed_table_model(src: Path, dst: Path) -> Path:
    """``src`` with its text table (and nothing else) renamed to :data:`PUBLISHED_NAME`."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("prepared", EMBEDDINGS + "*"))
    model = onnx.load(str(src / EMBEDDINGS))
    table = find_text_table(model.graph)
    assert table is not None and table.name != PUBLISHED_NAME
    old = table.name
    table.name = PUBLISHED_NAME
    for node in model.graph.node:
        node.input[:] = [PUBLISHED_NAME if n == old else n for n in node.input]
    onnx.save_model(model, str(dst / EMBEDDINGS), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=EMBEDDINGS + ".data",
                    size_threshold=1024)
    return dst


@pytest.fixture(scope="module")
def renamed_model(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> Path:
    return renamed_table_model(tiny_model, tmp_path_factory.mktemp("renamed") / "tiny")


@pytest.fixture(scope="module", params=["as exported", "text_embed.weight"])
def engines(request: pytest.FixtureRequest, tiny_model: Path) -> tuple[Engine, Engine]:
    model = tiny_model if request.param == "as exported" \
        else request.getfixturevalue("renamed_model")
    bound = Engine.load(model, device="cpu", io_binding=True, buckets=True)
    hosted = Engine.load(model, device="cpu", io_binding=True, buckets=True,
                         host_text_table=True)
    return bound, hosted


def test_the_device_graph_holds_only_the_audio_rows_of_the_text_table(tiny_model: Path
                                                                        ) -> None:
    path = tiny_model / EMBEDDINGS
    model = onnx.ModelProto.FromString(target_embedding_model(path))
    source = onnx.load(str(path))
    name = find_text_table(source.graph).name
    (table,) = [t for t in model.graph.initializer if t.name == name]
    rows = next(t for t in source.graph.initializer if t.name == name).dims[0]
    assert table.dims[0] == AUDIO_IDS < rows


def test_the_text_table_is_found_by_the_lookup_that_reads_it(tmp_path: Path) -> None:
    renamed = renamed_table_model(TINY_MODEL, tmp_path / "tiny")
    model = onnx.load(str(renamed / EMBEDDINGS), load_external_data=False)
    table = find_text_table(model.graph)
    assert table is not None and table.name == PUBLISHED_NAME
    # The audio table (8 x 1025 rows, read at ids plus offsets) is never taken for it.
    assert list(table.dims) == [2135, 64]


def test_a_graph_without_the_lookup_finds_the_table_by_its_published_shape() -> None:
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Gather", ["text_embed.weight", "picked"], ["out"])], "g",
        [helper.make_tensor_value_info("picked", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT16, [4, 8])],
        [helper.make_tensor("text_embed.weight", TensorProto.FLOAT16, [151676, 8],
                            b"\0" * (151676 * 8 * 2), raw=True),
         helper.make_tensor("audio", TensorProto.FLOAT16, [8200, 8], b"\0" * (8200 * 16),
                            raw=True)])
    table = find_text_table(graph)
    assert table is not None and table.name == "text_embed.weight"
    graph.initializer.pop(0)
    assert find_text_table(graph) is None


def test_the_table_is_reported_as_it_is(fp16io_model: Path) -> None:
    assert text_table_summary(TINY_MODEL / EMBEDDINGS) == \
        "model.llm.embed_tokens.weight [2135, 64] float32, 0.5 MB"
    # The published root graphs are float16 throughout (the exporter's conversion).
    assert text_table_summary(fp16io_model / EMBEDDINGS).endswith("[2135, 64] float16, 0.3 MB")


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
    graph = step_session(hosted.graphs, guided=True,
                              noisy=options.position_temperature > 0)
    want = bound.decoder.decode(items_of(bound, REQUESTS, options), options)
    got = decode_on_device(hosted.decoder, graph, items_of(hosted, REQUESTS, options),
                           options)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
