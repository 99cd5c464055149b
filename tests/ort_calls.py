"""Counts what a decode asks of onnxruntime, at onnxruntime's own Python API: session runs
(by session kind), copies from the host into OrtValues and copies back to the host.

Used by the device step loop's tests (tests/engine/test_device_step_calls.py and others)
to hold its Run calls and host copies per step at their minimum, and to know that the
device loop really ran.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import onnxruntime as ort
import pytest


def session_kind(session: Any) -> str:
    """Which of the decode's sessions this is, by its inputs."""
    names = {i.name for i in session.get_inputs()}
    if "schedule" in names:
        return "step"
    if "attention_mask" in names:
        return "backbone"
    if "input_ids" in names:
        return "embeddings"
    if "hidden_states" in names:
        return "scoring"
    if "x" in names:
        return "cast"
    return "other"


@dataclass
class OrtCalls:
    """What was counted (see the module doc)."""

    runs: Counter[str] = field(default_factory=Counter)
    uploads: int = 0
    downloads: int = 0

    def clear(self) -> None:
        self.runs.clear()
        self.uploads = self.downloads = 0


@contextmanager
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[OrtCalls]:
    """Count onnxruntime calls inside the ``with``."""
    calls = OrtCalls()
    session = ort.InferenceSession
    run, bound_run = session.run, session.run_with_iobinding
    update, numpy = ort.OrtValue.update_inplace, ort.OrtValue.numpy
    from_numpy = ort.OrtValue.ortvalue_from_numpy
    copy_out = ort.IOBinding.copy_outputs_to_cpu

    def counted_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.runs[session_kind(self)] += 1
        return run(self, *args, **kwargs)

    def counted_bound_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.runs[session_kind(self)] += 1
        return bound_run(self, *args, **kwargs)

    def counted_update(self: Any, data: Any) -> None:
        calls.uploads += 1
        update(self, data)

    def counted_numpy(self: Any) -> Any:
        calls.downloads += 1
        return numpy(self)

    def counted_from_numpy(*args: Any, **kwargs: Any) -> Any:
        calls.uploads += 1
        return from_numpy(*args, **kwargs)

    def counted_copy_out(self: Any) -> Any:
        calls.downloads += 1
        return copy_out(self)

    monkeypatch.setattr(session, "run", counted_run)
    monkeypatch.setattr(session, "run_with_iobinding", counted_bound_run)
    monkeypatch.setattr(ort.OrtValue, "update_inplace", counted_update)
    monkeypatch.setattr(ort.OrtValue, "numpy", counted_numpy)
    monkeypatch.setattr(ort.OrtValue, "ortvalue_from_numpy", staticmethod(counted_from_numpy))
    monkeypatch.setattr(ort.IOBinding, "copy_outputs_to_cpu", counted_copy_out)
    try:
        yield calls
    finally:
        monkeypatch.undo()
