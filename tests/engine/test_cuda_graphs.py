"""The CUDA-graph capture failure message: it names the nodes and providers, never the file.

No GPU here: the message builder gets onnxruntime's real refusal text, and a real session's
node placement is read on the CPU provider (where every node is, by force, off CUDA).
"""

from __future__ import annotations

from conftest import FIXTURES

from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
from wyoming_omnivoice.engine.runtime.cuda_graphs import (
    blocking_nodes,
    capture_failure_message,
    placement_of,
)
from wyoming_omnivoice.engine.runtime.onnx_sessions import (
    CPU_PROVIDER,
    CUDA_PROVIDER,
    choose_providers,
)

TINY = FIXTURES / "models" / "tiny"
#: What onnxruntime raises when a CUDA-graph session has nodes off the CUDA provider.
ORT_REFUSAL = (
    "[ONNXRuntimeError] : 1 : FAIL : This session cannot use the CUDA Graph feature as "
    "requested by the user  as all compute graph nodes have not been partitioned to the "
    "CUDA EP.")


def test_message_names_memcpy_and_cpu_nodes_with_their_provider() -> None:
    placement = [
        (CUDA_PROVIDER, "MatMul", "node_linear"),
        (CPU_PROVIDER, "Shape", "node_Shape_0"),  # shape ops on the CPU do not block
        (CPU_PROVIDER, "Range", "node_arange"),
        (CUDA_PROVIDER, "MemcpyFromHost", "Memcpy_token_3"),
        (CPU_PROVIDER, "Cos", "node_cos"),
    ]
    message = capture_failure_message("fp32 backbone", RuntimeError(ORT_REFUSAL), placement)
    print(message)
    assert "cannot use the CUDA Graph feature" in message
    assert f"node_arange (Range) on {CPU_PROVIDER}" in message
    assert f"node_cos (Cos) on {CPU_PROVIDER}" in message
    assert f"Memcpy_token_3 (MemcpyFromHost) on {CUDA_PROVIDER}" in message
    assert "3 of 5 nodes" in message and "(1 Memcpy)" in message
    assert message.index("Memcpy_token_3") < message.index("node_arange")  # Memcpy first
    assert "node_Shape_0" not in message and "node_linear" not in message
    assert "truncated" not in message and "download" not in message


def test_message_from_a_real_sessions_placement() -> None:
    found = prepare_backbone(TINY, "fp32")
    placement = placement_of(found.path, choose_providers("cpu"),
                             model_bytes=found.model_bytes(),
                             external_data_dir=found.weights_dir)
    assert isinstance(placement, list) and placement
    assert {provider for provider, _, _ in placement} == {CPU_PROVIDER}
    assert blocking_nodes(placement)
    message = capture_failure_message("fp32 backbone", ORT_REFUSAL, placement)
    print(message)
    assert f"on {CPU_PROVIDER}" in message and "and " in message  # more than 8, counted
    assert "truncated" not in message


def test_message_when_placement_cannot_be_read() -> None:
    placement = placement_of(TINY / "missing.onnx", choose_providers("cpu"))
    assert isinstance(placement, str) and "unavailable" in placement
    message = capture_failure_message("fp32 backbone", ORT_REFUSAL, placement)
    assert "node placement unavailable" in message and "truncated" not in message


def test_message_when_every_node_is_on_cuda() -> None:
    placement = [(CUDA_PROVIDER, "MatMul", "a"), (CPU_PROVIDER, "Shape", "b")]
    message = capture_failure_message("fp32 backbone", "cudaErrorStreamCaptureUnsupported",
                                      placement)
    assert "not the node placement" in message and "cudaErrorStreamCapture" in message
