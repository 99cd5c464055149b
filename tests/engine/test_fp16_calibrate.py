"""The calibrated fp16 converter, checked with real fp16 arithmetic (numpy emulation).

The overflow model is the tiny backbone with one layer's gated-MLP weights scaled so that
the gate * up product reaches 4x fp16's 65504 on realistic prompts, while the fp32 graph
stays finite (the next RMSNorm rescales the residual stream). A converter that puts that
product in fp16 overflows to inf; the calibrated converter must keep it fp32. The checks run
the converted graphs with ``fp16_emulation`` (float16 numpy arithmetic), never with
onnxruntime's CPU provider, which computes fp16 nodes in fp32 and so cannot overflow.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import FIXTURES
from fp16_emulation import EmulatedSession, fp16_tensors, overflowed
from onnx import TensorProto, helper, numpy_helper

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline.calibration_prompts import (
    CalibrationRequest,
    calibration_feeds,
)
from wyoming_omnivoice.engine.offline.fp16_calibrate import (
    FP16_MAX,
    convert_to_fp16,
    measure_ranges,
    naive_fp16,
)
from wyoming_omnivoice.engine.store import model_files

TINY = FIXTURES / "models" / "tiny"
Feeds = list[dict[str, np.ndarray]]
TEXTS = ("Hello world, the temperature outside is mild today.", "你好，世界！")


def _feeds(requests: tuple[CalibrationRequest, ...] | None = None, seed: int = 0) -> Feeds:
    extra = {} if requests is None else {"requests": requests}
    return calibration_feeds(TINY / model_files.EMBEDDINGS, TINY / model_files.TOKENIZER,
                             seed=seed, **extra)


@pytest.fixture(scope="module")
def feeds() -> Feeds:
    return _feeds()


@pytest.fixture(scope="module")
def unseen_feeds() -> Feeds:
    """Prompts the calibration did not see (other texts, other random codes)."""
    return _feeds((CalibrationRequest("Set an alarm for a quarter past seven tomorrow."),
                   CalibrationRequest("Bonjour, la porte du garage est fermée.", "fr")), seed=7)


def _fp32() -> onnx.ModelProto:
    return onnx.load(str(TINY / model_files.BACKBONE))


def _gated_mlp(model: onnx.ModelProto, layer: int = 0) -> tuple[str, str, onnx.NodeProto,
                                                                  onnx.NodeProto]:
    """Gate weight, up weight, the ``silu(gate) * up`` node and the down projection."""
    nodes = list(model.graph.node)
    producer = {out: node for node in nodes for out in node.output}
    sigmoid = [n for n in nodes if n.op_type == "Sigmoid"][layer]
    gate = producer[sigmoid.input[0]]
    silu = next(n for n in nodes if n.op_type == "Mul" and sigmoid.output[0] in n.input)
    product = next(n for n in nodes if n.op_type == "Mul" and silu.output[0] in n.input)
    up = producer[next(i for i in product.input if i != silu.output[0])]
    down = next(n for n in nodes if n.op_type == "MatMul" and product.output[0] in n.input)
    return gate.input[1], up.input[1], product, down


def _scale(model: onnx.ModelProto, names: tuple[str, ...], factor: float) -> None:
    for init in model.graph.initializer:
        if init.name in names:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * factor,
                                                  init.name))


@pytest.fixture(scope="module")
def overflow_model(feeds: Feeds) -> onnx.ModelProto:
    model = _fp32()
    gate, up, product, _ = _gated_mlp(model)
    (peak, _), = measure_ranges(model, [product.output[0]], feeds).values()
    # silu(s * g) * (s * u) grows about as s**2: aim at 4x fp16's range.
    _scale(model, (gate, up), float(np.sqrt(4 * FP16_MAX / peak)))
    return model


def _hidden_fp32(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(["hidden_states"], feed)[0])


def _smallest(feeds: Feeds, count: int) -> Feeds:
    """The shortest feeds (the numpy emulation is slow on long ones)."""
    return sorted(feeds, key=lambda f: f["inputs_embeds"].size)[:count]


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(b))


def test_overflow_model_exceeds_fp16_only_inside_the_mlp(overflow_model: onnx.ModelProto,
                                                         feeds: Feeds) -> None:
    """The premise: a tensor past 65504 in fp32, and finite hidden states in fp32."""
    _, _, product, down = _gated_mlp(overflow_model)
    ranges = measure_ranges(overflow_model, [product.output[0], down.output[0]], feeds)
    assert all(peak > FP16_MAX and finite for peak, finite in ranges.values()), ranges
    for feed in feeds[:4]:
        assert np.all(np.isfinite(_hidden_fp32(overflow_model, feed)))


def test_naive_conversion_overflows(overflow_model: onnx.ModelProto, feeds: Feeds) -> None:
    """The emulation check detects overflow: every-candidate-fp16 fails it."""
    naive, _ = naive_fp16(copy.deepcopy(overflow_model))
    _, _, product, _ = _gated_mlp(naive)
    feed = feeds[0]
    bad = overflowed(naive, feed)
    assert product.output[0] in bad, bad
    hidden = EmulatedSession(naive).run(["hidden_states"], feed)[0]
    assert not np.all(np.isfinite(hidden))


@pytest.mark.slow
def test_calibrated_conversion_keeps_the_overflow_in_fp32(
        overflow_model: onnx.ModelProto, feeds: Feeds, unseen_feeds: Feeds) -> None:
    converted, report = convert_to_fp16(copy.deepcopy(overflow_model), feeds)
    print(report.summary())
    _, _, product, down = _gated_mlp(overflow_model)
    assert {k.name for k in report.kept} == {product.name, down.name}
    assert all(k.max_abs > FP16_MAX for k in report.kept)
    assert report.fp16_nodes == report.candidates - len(report.kept)
    assert report.fp16_max_abs < report.limit
    for feed in _smallest(feeds, 3) + unseen_feeds:
        half = fp16_tensors(converted, feed)
        assert len(half) > 40  # the projections and attention products are fp16
        assert product.output[0] not in half
        assert overflowed(converted, feed) == []
        hidden = EmulatedSession(converted).run(["hidden_states"], feed)[0]
        assert _relative(hidden, _hidden_fp32(overflow_model, feed)) < 0.01


def test_tiny_model_converts_every_candidate(feeds: Feeds, unseen_feeds: Feeds) -> None:
    converted, report = convert_to_fp16(_fp32(), feeds)
    print(report.summary())
    assert report.kept == [] and report.fp16_nodes == report.candidates > 0
    io_types = {v.name: v.type.tensor_type.elem_type
                for v in list(converted.graph.input) + list(converted.graph.output)}
    assert io_types["inputs_embeds"] == io_types["hidden_states"] == TensorProto.FLOAT
    for feed in unseen_feeds:
        assert overflowed(converted, feed) == []


def test_fused_contrib_ops_convert(feeds: Feeds) -> None:
    """A graph fused by onnxruntime (``com.microsoft`` ops that ONNX shape inference cannot
    type, e.g. ``FusedMatMul``) converts, and runs on onnxruntime close to fp32. (Structure
    and plumbing only: the reference evaluator has no contrib ops to emulate.)"""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    with tempfile.TemporaryDirectory() as folder:
        options.optimized_model_filepath = str(Path(folder) / "fused.onnx")
        ort.InferenceSession(_fp32().SerializeToString(), options,
                             providers=["CPUExecutionProvider"])
        fused = onnx.load(options.optimized_model_filepath)
    contrib = {n.op_type for n in fused.graph.node if n.domain == "com.microsoft"}
    assert "FusedMatMul" in contrib
    converted, report = convert_to_fp16(copy.deepcopy(fused), feeds)
    assert report.kept == [] and report.fp16_nodes == report.candidates
    half = {n.op_type for n in converted.graph.node if n.op_type == "FusedMatMul"
            and any(i.endswith("_fp16_cast") for i in n.input)}
    assert half == {"FusedMatMul"}
    for feed in _smallest(feeds, 2):
        assert _relative(_hidden_fp32(converted, feed), _hidden_fp32(fused, feed)) < 0.01


def test_weights_left_on_disk_give_the_same_graph(feeds: Feeds) -> None:
    """``data_dir``: calibration reads the weights from the external data file."""
    in_memory, report = convert_to_fp16(_fp32(), feeds)
    lazy = onnx.load(str(TINY / model_files.BACKBONE), load_external_data=False)
    with pytest.raises(ValueError, match="data_dir"):
        convert_to_fp16(copy.deepcopy(lazy), feeds)
    on_disk, report_on_disk = convert_to_fp16(lazy, feeds, data_dir=TINY)
    assert report_on_disk.fp16_max_abs == report.fp16_max_abs
    assert [n.op_type for n in on_disk.graph.node] == [n.op_type for n in in_memory.graph.node]
    weights = {i.name: numpy_helper.to_array(i) for i in in_memory.graph.initializer}
    for init in on_disk.graph.initializer:
        assert init.data_location != TensorProto.EXTERNAL
        np.testing.assert_array_equal(numpy_helper.to_array(init), weights[init.name])


def test_attention_bias_is_clipped_not_kept() -> None:
    """A fused attention's additive mask (float32 min where masked) is not an activation:
    the attention stays fp16, and the mask is clipped to -65504 before its cast instead of
    becoming -inf. (Structure, and finite output on onnxruntime: no contrib-op emulation.)"""
    width, length = 16, 6
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32)
                                       * 0.3, name) for name in ("wq", "wk", "wv")]
    nodes = [helper.make_node("MatMul", ["x", w], [o])
             for w, o in (("wq", "q"), ("wk", "k"), ("wv", "v"))]
    nodes += [helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "", "bias"], ["a"],
                               domain="com.microsoft", num_heads=2),
              helper.make_node("Add", ["x", "a"], ["y"])]
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                           [1, length, width]),
                             helper.make_tensor_value_info("bias", TensorProto.FLOAT,
                                                           [1, 1, length, length])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, length, width])],
        initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    bias = np.zeros((1, 1, length, length), np.float32)
    bias[..., 3:] = np.finfo(np.float32).min
    feed = {"x": rng.standard_normal((1, length, width)).astype(np.float32), "bias": bias}
    expected = _run(model, feed)
    converted, report = convert_to_fp16(copy.deepcopy(model), [feed])
    assert report.kept == [] and report.fp16_nodes == 4
    clip = next(n for n in converted.graph.node if n.op_type == "Clip")
    assert clip.input[0] == "bias"
    attention = next(n for n in converted.graph.node if n.op_type == "MultiHeadAttention")
    cast = next(n for n in converted.graph.node if n.output[0] == attention.input[5])
    assert cast.op_type == "Cast" and cast.input[0] == clip.output[0]
    result = _run(converted, feed)
    assert np.all(np.isfinite(result)) and np.abs(result - expected).max() < 0.01


def _run(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, feed)[0])


def test_margin_sets_the_limit(feeds: Feeds) -> None:
    """A limit below the tiny model's activations keeps exactly the nodes above it fp32."""
    _, full = convert_to_fp16(_fp32(), feeds)
    margin = full.fp16_max_abs / 4 / FP16_MAX
    converted, report = convert_to_fp16(_fp32(), feeds, margin=margin)
    assert 0 < len(report.kept) < report.candidates
    assert all(k.max_abs > report.limit for k in report.kept)
    assert report.fp16_max_abs <= report.limit
    assert report.fp16_nodes < full.fp16_nodes
    kept_outputs = {out for node in converted.graph.node if node.name in
                    {k.name for k in report.kept} for out in node.output}
    assert not kept_outputs & set(fp16_tensors(converted, feeds[0]))


def test_conversion_without_calibration_is_refused() -> None:
    with pytest.raises(ValueError, match="calibration feed"):
        convert_to_fp16(_fp32(), [])
    with pytest.raises(ValueError, match=r"lacks graph inputs \['attention_mask'\]"):
        convert_to_fp16(_fp32(), [{"inputs_embeds": np.zeros((1, 4, 64), np.float32)}])
    with pytest.raises(ValueError, match="margin"):
        convert_to_fp16(_fp32(), [{}], margin=0.0)


def _agreement(fp32_model: onnx.ModelProto, fp16_model: onnx.ModelProto, num_step: int
               ) -> float:
    """Share of equal codes: decodes with the fp32 backbone (onnxruntime) against the same
    decodes with the fp16 backbone in float16 emulation (deterministic mode)."""
    engines = []
    for model, emulate in ((fp32_model, False), (fp16_model, True)):
        engine = Engine.load(TINY, device="cpu")
        engine.decoder.backbone.session = (
            EmulatedSession(model) if emulate else
            ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]))
        engines.append(engine)
    options = DecodeOptions(num_step=num_step, position_temperature=0.0,
                            class_temperature=0.0)
    same = total = 0
    for text in TEXTS:
        a, b = (engine.generate_codes(text, options=options) for engine in engines)
        same += int(np.sum(a == b))
        total += a.size
    return same / total


def test_codes_agree_with_fp32(overflow_model: onnx.ModelProto, feeds: Feeds) -> None:
    """One-step decodes: every cell is the argmax of one forward, so this is the
    teacher-forced agreement of the fp16 graph (in float16 emulation) with fp32. Measured
    99.7 % (tiny) and 99.4 % (overflow model); a naive conversion of the overflow model 0 %.
    Whole 8-step decodes of the random tiny model diverge after the first differing choice
    (its logits are nearly flat): 46-67 % measured, too noisy to assert."""
    rates = {}
    for label, fp32 in (("tiny", _fp32()), ("overflow", overflow_model)):
        converted, _ = convert_to_fp16(copy.deepcopy(fp32), feeds)
        rates[label] = _agreement(fp32, converted, num_step=1)
    naive, _ = naive_fp16(copy.deepcopy(overflow_model))
    rates["overflow-naive"] = _agreement(overflow_model, naive, num_step=1)
    print("fp16 (float16 emulation) vs fp32 code agreement, 1 step: "
          + ", ".join(f"{k} {100 * v:.2f} %" for k, v in rates.items()))
    assert rates["tiny"] >= 0.97 and rates["overflow"] >= 0.97
    assert rates["overflow-naive"] < 0.5
