"""Our scoring graph against a numpy reference computed from the published heads' logits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from conftest import FIXTURES
from onnx import helper

from wyoming_omnivoice.engine.graphs.scoring import (
    COND_INDEX,
    CONF,
    GUIDANCE,
    HIDDEN,
    MASK_ID,
    PRED,
    TOP_K_CLASSES,
    TOPK_INDICES,
    TOPK_VALUES,
    UNCOND_INDEX,
    build_scoring_model,
)

FIXTURES = FIXTURES / "models"


def log_softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def session(model: bytes | str) -> ort.InferenceSession:
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"])


def without_final_transpose_elision(heads: onnx.ModelProto) -> onnx.ModelProto:
    """The same heads with an Identity after the transpose (so it is not the last step)."""
    heads = onnx.ModelProto.FromString(heads.SerializeToString())
    for node in heads.graph.node:
        node.output[:] = ["logits_t" if o == "logits" else o for o in node.output]
    heads.graph.node.append(helper.make_node("Identity", ["logits_t"], ["logits"]))
    return heads


@pytest.fixture(scope="module")
def heads_path(tiny_model: Path) -> Path:
    """The heads graph as exported (float32) and as published (float16 in and out: the
    scoring graph casts the gathered hidden states to float16 and the logits back)."""
    path = tiny_model / "audio_heads_decoder.onnx"
    heads = onnx.load(str(path))
    types = {heads.graph.input[0].type.tensor_type.elem_type,
             heads.graph.output[0].type.tensor_type.elem_type}
    assert types == ({onnx.TensorProto.FLOAT16} if "fp16" in path.parent.name
                     else {onnx.TensorProto.FLOAT})
    return path


@pytest.mark.parametrize("elide", [True, False], ids=["untransposed", "as-published"])
@pytest.mark.parametrize("guidance", [2.0, 0.0])
def test_scoring_matches_numpy_reference(heads_path: Path, elide: bool, guidance: float
                                         ) -> None:
    heads = onnx.load(str(heads_path))
    if not elide:
        heads = without_final_transpose_elision(heads)
    hidden_size = heads.graph.input[0].type.tensor_type.shape.dim[-1].dim_value
    rng = np.random.default_rng(7)
    rows, length, batch, frames = 3, 30, 2, 11
    hidden = rng.standard_normal((rows, length, hidden_size)).astype(np.float32) * 4
    cond = np.stack([np.arange(5, 5 + frames), length + np.arange(2, 2 + frames)])
    uncond = np.stack([2 * length + np.arange(frames), 2 * length + 15 + np.arange(frames)])
    guided = guidance != 0
    sampling_model = build_scoring_model(heads, hidden_size, sampling=True, guided=guided)
    greedy_model = build_scoring_model(heads, hidden_size, sampling=False, guided=guided)
    transposes = [n for n in onnx.load_from_string(greedy_model).graph.node
                  if n.op_type == "Transpose"]
    # Elided: only the two small [B, T, 8] -> [B, 8, T] output transposes are left.
    assert len(transposes) == (2 if elide else 1)

    feeds = {HIDDEN: hidden, COND_INDEX: cond.astype(np.int64),
             UNCOND_INDEX: uncond.astype(np.int64),
             GUIDANCE: np.array(guidance, dtype=np.float32)}
    pred, conf = session(greedy_model).run([PRED, CONF], feeds)
    top_values, top_indices = session(sampling_model).run([TOPK_VALUES, TOPK_INDICES], feeds)

    # Reference: the heads graph on every gathered position, then upstream's CFG in numpy.
    flat = hidden.reshape(-1, hidden_size)
    heads_session = session(heads_path.read_bytes())
    in_type = heads_session.get_inputs()[0].type

    def logits_at(index: np.ndarray) -> np.ndarray:
        x = flat[index]
        if in_type == "tensor(float16)":
            x = x.astype(np.float16)
        return heads_session.run(None, {"hidden_states": x})[0].astype(np.float32)

    lc = log_softmax(logits_at(cond))  # [B, 8, T, V]
    if guided:
        lu = log_softmax(logits_at(uncond))
        log_probs = log_softmax(lc + guidance * (lc - lu))
    else:
        log_probs = lc
    codes = log_probs[..., :MASK_ID]
    assert pred.shape == conf.shape == (batch, 8, frames)
    np.testing.assert_array_equal(pred, codes.argmax(axis=-1))
    # float16 heads: the logits (about 10) hold 3 decimal digits, and another shape sums
    # the heads' products in another order.
    tolerance = 2e-2 if in_type == "tensor(float16)" else 1e-4
    np.testing.assert_allclose(conf, codes.max(axis=-1), rtol=tolerance, atol=tolerance)
    assert top_values.shape == top_indices.shape == (batch, 8, frames, TOP_K_CLASSES)
    expected_top = np.sort(codes, axis=-1)[..., ::-1][..., :TOP_K_CLASSES]
    np.testing.assert_allclose(top_values, expected_top, rtol=tolerance, atol=tolerance)
    np.testing.assert_array_equal(top_indices[..., 0], pred)
