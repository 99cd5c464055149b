"""The streaming int8 step (engine/offline/int8_streaming.py) writes exactly the files
onnxruntime's quantize_dynamic writes, from the graph alone and one weight at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from conftest import FIXTURES
from onnxruntime.quantization.quant_utils import quantize_data

from wyoming_omnivoice.engine.offline import int8_onnxruntime, int8_streaming, prepare
from wyoming_omnivoice.engine.store.model_files import BACKBONE

SOURCE = FIXTURES / "models" / "tiny" / BACKBONE


def test_streamed_int8_files_are_byte_identical_to_onnxruntimes(tmp_path: Path) -> None:
    (tmp_path / "ort").mkdir()
    (tmp_path / "ours").mkdir()
    model, _ = prepare.rewrite_backbone(SOURCE)
    int8_onnxruntime.quantize_int8_onnxruntime(model, SOURCE.parent, tmp_path / "ort" / "b.onnx")
    model, _ = prepare.rewrite_backbone(SOURCE)
    count = int8_streaming.quantize_int8(model, SOURCE.parent, tmp_path / "ours" / "b.onnx")
    assert count == 14  # 2 layers x 7 weight products
    for name in ("b.onnx", "b.onnx.data"):
        theirs = (tmp_path / "ort" / name).read_bytes()
        ours = (tmp_path / "ours" / name).read_bytes()
        assert len(ours) == len(theirs), name
        assert ours == theirs, name
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == ["b.onnx", "b.onnx.data"]
    # The graph really is quantized (not two copies of an unchanged graph).
    ops = [n.op_type for n in onnx.load(str(tmp_path / "ours" / "b.onnx"),
                                        load_external_data=False).graph.node]
    assert ops.count("MatMulInteger") == 14 and "DynamicQuantizeLinear" in ops


def test_column_rules_match_onnxruntimes_per_channel_quantization() -> None:
    """Edge columns: all zeros (scale 1), one value (ties), ties at .5, negative-only,
    subnormal-sized values, and ordinary random ones."""
    rng = np.random.default_rng(3)
    weights = rng.standard_normal((64, 8)).astype(np.float32)
    weights[:, 0] = 0
    weights[:, 1] = 0
    weights[5, 1] = 2.5
    weights[:, 2] = np.linspace(-1, 1, 64, dtype=np.float32)
    weights[:, 3] = -np.abs(weights[:, 3])
    weights[:, 4] = np.float32(1e-39) * np.arange(64, dtype=np.float32)
    weights[:, 5] = np.float32(64 / 2) * np.round(weights[:, 5])  # values on half steps
    scales = int8_streaming.column_scales(weights)
    values = int8_streaming.quantize_columns(weights, scales)
    for column in range(weights.shape[1]):
        zero, scale, quantized = quantize_data(weights[:, column].flatten(),
                                               onnx.TensorProto.INT8, True,
                                               reduce_range=True)
        assert int(zero) == 0
        assert scales[column].tobytes() == np.asarray(scale, np.float32).tobytes(), column
        np.testing.assert_array_equal(values[:, column], quantized, err_msg=str(column))
