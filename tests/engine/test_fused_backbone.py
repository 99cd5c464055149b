"""The fused backbone variants (engine/offline/fused_backbone.py) on the tiny model, CPU
provider: fp32-fused equals the prepared fp32 backbone, decodes the same codes, has no shape
arithmetic and only ops with CUDA kernels; fp16-fused keeps its norm statistics in fp32, its
contrib ops in fp16, and agrees with fp32; causal graphs stay refused."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import FIXTURES
from onnx import TensorProto, helper

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline import prepare
from wyoming_omnivoice.engine.offline.fused_backbone import repeat_kv_columns
from wyoming_omnivoice.engine.offline.fused_layout import (
    SHAPE_OPS,
    fused_file_problems,
    fused_problems,
    read_layout,
    value_types,
)
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.runtime.probe import check_bidirectional
from wyoming_omnivoice.engine.store.model_files import ModelError

TINY = FIXTURES / "models" / "tiny"
GREEDY = DecodeOptions(position_temperature=0.0, class_temperature=0.0)
TEXTS = ("Hello world, this is a test.", "The kitchen lights are now off.", "Good night.")
CONTRIB_FP16 = ("MultiHeadAttention", "RotaryEmbedding", "QuickGelu", "MatMul")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("fused") / "tiny"
    shutil.copytree(TINY, target, ignore=shutil.ignore_patterns("prepared"))
    return target


def graph_of(model_dir: Path, variant: str) -> Graph:
    found = prepare.prepare_backbone(model_dir, variant)
    return Graph(found.path, choose_providers("cpu"), model_bytes=found.model_bytes(),
                 external_data_dir=found.weights_dir)


def model_of(model_dir: Path, variant: str) -> onnx.ModelProto:
    return onnx.load(str(prepare.prepare_backbone(model_dir, variant).path),
                     load_external_data=False)


def feeds(rows: int, length: int, seed: int) -> dict[str, np.ndarray]:
    """Masks like the decode's: a block per row that attends both ways, the padding after
    it attending to itself only (and a cond-style row whose padding rows attend nothing)."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((rows, 1, length, length), dtype=bool)
    for row in range(rows):
        cut = int(rng.integers(2, length))
        mask[row, 0, :cut, :cut] = True
        if row % 2:
            mask[row, 0, np.arange(cut, length), np.arange(cut, length)] = True
    return {"inputs_embeds": rng.standard_normal((rows, length, 64)).astype(np.float32),
            "attention_mask": mask}


def relative(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    """Largest error over the positions a query may use, relative to the largest state."""
    live = mask[:, 0].any(axis=-1)
    return float(np.abs(a - b)[live].max() / np.abs(b[live]).max())


def test_fused_fp32_hidden_states_equal_the_prepared_fp32_ones(model_dir: Path) -> None:
    fused, exact = graph_of(model_dir, "fp32-fused"), graph_of(model_dir, "fp32")
    for rows, length, seed in ((1, 7, 0), (2, 33, 1), (4, 80, 2)):
        feed = feeds(rows, length, seed)
        (ours,) = fused.run(feed, ["hidden_states"])
        (theirs,) = exact.run(feed, ["hidden_states"])
        error = relative(ours, theirs, feed["attention_mask"])
        print(f"fp32-fused vs fp32, {rows} x {length}: relative error {error:.2e}")
        assert error < 2e-6
        assert np.all(np.isfinite(ours))  # query rows with no allowed key included


def test_fused_fp32_decodes_the_same_codes_as_fp32(model_dir: Path) -> None:
    fused = Engine.load(model_dir, device="cpu", precision="fp32-fused")
    exact = Engine.load(model_dir, device="cpu", precision="fp32")
    assert fused.precision == "fp32-fused"
    for text in TEXTS:
        np.testing.assert_array_equal(fused.generate_codes(text, options=GREEDY),
                                      exact.generate_codes(text, options=GREEDY))


@pytest.mark.parametrize("variant", ["fp32-fused", "fp16-fused"])
def test_the_bound_bucketed_step_path_runs_the_fused_graph(model_dir: Path,
                                                           variant: str) -> None:
    """The path the GPU takes (IO binding, length buckets), here on the CPU provider: the
    same codes as the plain step path of the same backbone."""
    bound = Engine.load(model_dir, device="cpu", precision=variant, io_binding=True,
                        buckets=True)
    plain = Engine.load(model_dir, device="cpu", precision=variant)
    assert bound.decoder.runner is not None
    for text in TEXTS[:2]:
        np.testing.assert_array_equal(bound.generate_codes(text, options=GREEDY),
                                      plain.generate_codes(text, options=GREEDY))


def test_the_fused_graph_has_no_shape_chain_and_only_cuda_ops(model_dir: Path) -> None:
    fused, exact = model_of(model_dir, "fp32-fused"), model_of(model_dir, "fp32")
    assert fused_problems(fused) == []
    assert fused_file_problems(prepare.prepare_backbone(model_dir, "fp32-fused").path) == []
    ops = Counter(n.op_type for n in fused.graph.node)
    layers = len(read_layout(prepare.rewrite_backbone(model_dir / "llm_backbone_fp32.onnx")[0])
                 .layers)
    print(f"fused {sum(ops.values())} nodes {dict(ops)}; prepared fp32 "
          f"{len(exact.graph.node)} nodes")
    assert not SHAPE_OPS & set(ops)
    assert ops["MultiHeadAttention"] == layers and ops["MatMul"] == 4 * layers
    assert ops["RotaryEmbedding"] == 2 * layers and ops["SkipSimplifiedLayerNormalization"] \
        == 2 * layers
    assert "GroupQueryAttention" not in ops
    assert len(fused.graph.node) < len(exact.graph.node) / 2
    assert fused_problems(exact)  # the prepared graph is not fused: the check can fail


def test_the_structural_check_names_what_is_wrong() -> None:
    def model(nodes: list[onnx.NodeProto]) -> onnx.ModelProto:
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT16, None)
        return helper.make_model(helper.make_graph(nodes, "g", [x], []))

    mha = helper.make_node("MultiHeadAttention", ["x", "x", "x"], ["y"], name="mha",
                           domain="com.microsoft", num_heads=2, unidirectional=1)
    gqa = helper.make_node("GroupQueryAttention", ["x"], ["z"], name="gqa",
                           domain="com.microsoft")
    shape = helper.make_node("Shape", ["x"], ["s"], name="shape")
    reshape = helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape")
    skip = helper.make_node("SkipSimplifiedLayerNormalization", ["x", "x", "x"], ["n"],
                            name="skip", domain="com.microsoft")
    problems = "\n".join(fused_problems(model([mha, gqa, shape, reshape, skip])))
    for expected in ("mha (MultiHeadAttention): causal", "no attention bias", "gqa",
                     "shape (Shape): shape arithmetic", "computed at run time",
                     "skip (SkipSimplifiedLayerNormalization): not float32"):
        assert expected in problems


def test_fp16_fused_keeps_norm_statistics_in_fp32_and_agrees_with_fp32(
        model_dir: Path) -> None:
    half = model_of(model_dir, "fp16-fused")
    assert fused_problems(half) == []
    types = value_types(half)
    for node in half.graph.node:
        if node.op_type in CONTRIB_FP16:
            assert types[node.input[0]] == TensorProto.FLOAT16, node.name
        if node.op_type == "SimplifiedLayerNormalization":
            assert [a.i for a in node.attribute if a.name == "stash_type"] == [1]
        if node.op_type == "SkipSimplifiedLayerNormalization":
            assert types[node.input[0]] == types[node.input[1]] == TensorProto.FLOAT
    assert {types[v.name] for v in (*half.graph.input, *half.graph.output)
            if v.name != "attention_mask"} == {TensorProto.FLOAT}
    weights = [t for t in half.graph.initializer if len(t.dims) == 2 and t.dims[0] == 64]
    assert weights and all(t.data_type == TensorProto.FLOAT16 for t in weights)
    feed = feeds(2, 40, 3)
    (ours,) = graph_of(model_dir, "fp16-fused").run(feed, ["hidden_states"])
    (theirs,) = graph_of(model_dir, "fp32").run(feed, ["hidden_states"])
    error = relative(ours, theirs, feed["attention_mask"])
    print(f"fp16-fused vs fp32: relative error {error:.2e}")
    assert ours.dtype == np.float32 and np.all(np.isfinite(ours)) and error < 5e-3


def test_the_probe_runs_on_the_fused_graph_and_refuses_a_causal_one(model_dir: Path) -> None:
    found = prepare.prepare_backbone(model_dir, "fp32-fused")
    assert found.info["fused_probe"] == "passed"
    model = onnx.load(str(found.path), load_external_data=False)
    for node in model.graph.node:
        if node.op_type == "MultiHeadAttention":
            node.attribute.append(helper.make_attribute("unidirectional", 1))
    causal = Graph(found.path, choose_providers("cpu"), model_bytes=model.SerializeToString(),
                   external_data_dir=found.weights_dir)
    with pytest.raises(ModelError, match="causal"):
        check_bidirectional(causal, 64)


@pytest.mark.parametrize("variant", ["fp32-fused", "fp16-fused"])
def test_a_causal_backbone_is_refused_for_the_fused_variants(tmp_path: Path,
                                                             variant: str) -> None:
    target = tmp_path / "causal"
    shutil.copytree(TINY, target, ignore=shutil.ignore_patterns("prepared"))
    for path in (FIXTURES / "models" / "causal_backbone").iterdir():
        shutil.copy(path, target / path.name)
    with pytest.raises(ModelError, match="causal"):
        Engine.load(target, device="cpu", precision=variant)


def test_the_key_value_repeat_serves_query_heads_in_groups() -> None:
    weight = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)  # 2 kv heads of 4
    repeated = repeat_kv_columns(weight, head_dim=4, repeat=3)
    assert repeated.shape == (3, 24)
    for query_head in range(6):
        kv_head = query_head // 3
        np.testing.assert_array_equal(repeated[:, 4 * query_head: 4 * query_head + 4],
                                      weight[:, 4 * kv_head: 4 * kv_head + 4])
