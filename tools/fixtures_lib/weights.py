"""Weight post-processing shared by the model builders."""

from __future__ import annotations

from typing import Any


def round_to_bfloat16_values(module: Any) -> None:
    """Round every float parameter (and RVQ codebook buffer) to the nearest value that
    bfloat16 can represent, keeping the fp32 dtype.

    The torch model, its ONNX exports and every golden then share the same weights, while
    the low 16 bits of each stored float are zero and compress well in git.
    """
    import torch

    with torch.no_grad():
        tensors = [p for p in module.parameters() if p.is_floating_point()]
        tensors += [
            b for name, b in module.named_buffers()
            if name.endswith("codebook.embed") or name.endswith("codebook.embed_avg")
        ]
        for tensor in tensors:
            tensor.copy_(tensor.to(torch.bfloat16).to(torch.float32))
