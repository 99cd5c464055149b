"""fp16-fused calibrated like fp16 (engine/offline/fused_calibrate.py), on the tiny model:
a product whose range passes fp16's limit on the calibration prompts stays float32 in the
fused graph (its weight float32, its input cast up, its output cast back), the others stay
float16; the tiny model as it is keeps every product in float16; preparing fp16-fused
prints the report and records it."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import FIXTURES
from onnx import TensorProto, numpy_helper

from wyoming_omnivoice.engine.offline import prepare
from wyoming_omnivoice.engine.offline.calibration_prompts import calibration_feeds
from wyoming_omnivoice.engine.offline.fp16_calibrate import FP16_MAX
from wyoming_omnivoice.engine.offline.fp16_ranges import measure_ranges
from wyoming_omnivoice.engine.offline.fused_backbone import build_fused
from wyoming_omnivoice.engine.offline.fused_calibrate import calibrate_fused, product_tensors
from wyoming_omnivoice.engine.offline.fused_layout import read_layout
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.store import model_files
from wyoming_omnivoice.engine.store.external_data import load_external_tensors

TINY = FIXTURES / "models" / "tiny"
Feeds = list[dict[str, np.ndarray]]


@pytest.fixture(scope="module")
def feeds() -> Feeds:
    return calibration_feeds(TINY / model_files.EMBEDDINGS, TINY / model_files.TOKENIZER)


def rewritten() -> onnx.ModelProto:
    model, _ = prepare.rewrite_backbone(TINY / model_files.BACKBONE)
    load_external_tensors(model, TINY)
    return model


@pytest.fixture(scope="module")
def overflow_model(feeds: Feeds) -> onnx.ModelProto:
    """Layer 0's gate and up weights scaled so that the gated product (the down
    projection's input) reaches 4x fp16's 65504 on the calibration prompts."""
    model = rewritten()
    layer = read_layout(model).layers[0]
    gated = product_tensors(model, read_layout(model))["l0.down"][0]
    ((peak, _),) = measure_ranges(model, [gated], feeds).values()
    factor = float(np.sqrt(4 * FP16_MAX / peak))
    for init in model.graph.initializer:
        if init.name in (layer.gate, layer.up):
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * factor,
                                                  init.name))
    return model


def fused(model: onnx.ModelProto, target: Path, dtype: str,
          keep: frozenset[str] = frozenset()) -> tuple[onnx.ModelProto, Graph]:
    build_fused(model, TINY, target, dtype, keep)
    graph = Graph(target, choose_providers("cpu"), external_data_dir=target.parent)
    return onnx.load(str(target)), graph


def test_the_overflowing_product_stays_float32(overflow_model: onnx.ModelProto, feeds: Feeds,
                                               tmp_path: Path) -> None:
    calibration = calibrate_fused(overflow_model, TINY, read_layout(overflow_model), feeds)
    assert calibration.names == {"l0.down"}
    (kept,) = calibration.kept
    assert kept.max_abs > calibration.limit and "l0.down" in calibration.summary()
    model, graph = fused(overflow_model, tmp_path / "fp16.onnx", "fp16", calibration.names)
    weights = {t.name: t.data_type for t in model.graph.initializer}
    producer = {out: n for n in model.graph.node for out in n.output}
    matmuls = {n.name: n for n in model.graph.node if n.op_type == "MatMul"}
    assert weights["l0.down"] == TensorProto.FLOAT
    cast = producer[matmuls["l0.down"].input[0]]
    assert cast.op_type == "Cast" and cast.attribute[0].i == TensorProto.FLOAT
    assert all(weights[name] == TensorProto.FLOAT16 for name in matmuls if name != "l0.down")
    # The kept product's result goes on in float32: into the residual sum, uncast.
    (reader,) = [n for n in model.graph.node if matmuls["l0.down"].output[0] in n.input]
    assert reader.op_type == "SkipSimplifiedLayerNormalization"
    _, exact = fused(overflow_model, tmp_path / "fp32.onnx", "fp32")
    feed = min(feeds, key=lambda f: f["inputs_embeds"].size)
    (ours,) = graph.run(feed, ["hidden_states"])
    (want,) = exact.run(feed, ["hidden_states"])
    assert np.isfinite(ours).all()
    assert np.abs(ours - want).max() / np.abs(want).max() < 5e-3


def test_the_tiny_model_keeps_every_product_in_float16(feeds: Feeds) -> None:
    model = rewritten()
    calibration = calibrate_fused(model, TINY, read_layout(model), feeds)
    assert calibration.kept == []
    layers = len(read_layout(model).layers)
    assert calibration.products == 5 * layers  # qkv, attention, o, gate_up, down
    assert 0 < calibration.fp16_max_abs < calibration.limit


def test_preparing_fp16_fused_prints_and_records_the_report(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model_dir = tmp_path / "tiny"
    shutil.copytree(TINY, model_dir, ignore=shutil.ignore_patterns("prepared"))
    with caplog.at_level(logging.INFO):
        found = prepare.prepare_backbone(model_dir, "fp16-fused")
    assert any(r.getMessage().startswith("fp16-fused calibration:") for r in caplog.records)
    info = found.info
    assert info["fp16_report"].startswith("fp16-fused calibration:")
    assert info["kept_fp32"] == []
