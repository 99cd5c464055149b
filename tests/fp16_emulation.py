"""fp16 arithmetic that really is fp16, for the fp16 tests.

onnxruntime's CPU provider has no fp16 kernels for most ops on x86: it inserts casts and
computes fp16 nodes in fp32, so a graph that overflows on a GPU returns finite numbers there.
These helpers run a graph with onnx's numpy reference evaluator instead, which computes
every node in the dtype the graph declares: an fp16 ``MatMul`` multiplies float16 arrays and
a value past 65504 becomes ``inf``, as it does on a GPU.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator


class EmulatedSession:
    """Stands in for an onnxruntime session (``run(names, feeds, run_options)``)."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.evaluator = ReferenceEvaluator(model)

    def run(self, names: Sequence[str] | None, feeds: Mapping[str, np.ndarray],
            run_options: Any = None) -> list[np.ndarray]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # fp16 overflow is the point
            return list(self.evaluator.run(list(names) if names else None, dict(feeds)))


def fp16_tensors(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]
                 ) -> dict[str, np.ndarray]:
    """Every float16 value the graph computes on ``feeds`` (float16 emulation)."""
    evaluator = ReferenceEvaluator(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        values = evaluator.run(None, dict(feeds), intermediate=True)
    assert isinstance(values, dict)
    return {name: value for name, value in values.items()
            if isinstance(value, np.ndarray) and value.dtype == np.float16}


def overflowed(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[str]:
    """The float16 tensors holding inf or NaN: where fp16 arithmetic overflowed."""
    return sorted(name for name, value in fp16_tensors(model, feeds).items()
                  if not np.all(np.isfinite(value)))
