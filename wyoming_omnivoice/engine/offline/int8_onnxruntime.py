"""onnxruntime's own ``quantize_dynamic`` on the prepared graph: the path
:mod:`.int8_streaming` reproduces byte for byte, kept only to compare the two
(``tests/engine/test_int8_streaming.py``, ``benchmarks/int8_compare.py``)."""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
from onnx import TensorProto, external_data_helper

from wyoming_omnivoice.engine.offline.int8_streaming import SIZE_THRESHOLD


def quantize_int8_onnxruntime(model: onnx.ModelProto, weights_dir: Path, target: Path) -> None:
    """onnxruntime's own ``quantize_dynamic`` on the same graph: the path this module
    reproduces, kept to compare the two (the test and the benchmark). It holds the whole
    model in memory, several times over."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rewritten = target.with_name("rewritten.onnx")
    full = onnx.ModelProto()
    full.CopyFrom(model)
    external_data_helper.load_external_data_for_model(full, str(weights_dir))
    for tensor in full.graph.initializer:
        tensor.ClearField("data_location")
        del tensor.external_data[:]
    onnx.save_model(full, str(rewritten), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=rewritten.name + ".data",
                    size_threshold=SIZE_THRESHOLD)
    del full
    logging.disable(logging.WARNING)  # it logs every skipped tensor on the root logger
    try:
        quantize_dynamic(
            rewritten, target, op_types_to_quantize=["MatMul"], per_channel=True,
            reduce_range=True, weight_type=QuantType.QInt8, use_external_data_format=True,
            # Only products with a weight matrix; the attention products stay fp32. ONNX
            # shape inference does not know SimplifiedLayerNormalization: its outputs are fp32.
            extra_options={"MatMulConstBOnly": True,
                           "DefaultTensorType": TensorProto.FLOAT},
        )
    finally:
        logging.disable(logging.NOTSET)
        rewritten.unlink(missing_ok=True)
        rewritten.with_name(rewritten.name + ".data").unlink(missing_ok=True)
