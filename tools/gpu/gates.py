"""The GPU check's gates: the engine really runs on CUDA, and where the backbone's nodes run.

A check that reports a CPU run as a CUDA figure is worse than none: onnxruntime silently
falls back to the CPU provider when the CUDA libraries do not load. :func:`device_verdict`
reads what the sessions really use; :func:`placement_verdict` reads onnxruntime's own node
assignment (``session.record_ep_graph_assignment_info``, see
``wyoming_omnivoice.engine.runtime.onnx_sessions.node_placement``): every node must be on the CUDA
provider and no Memcpy node may exist (onnxruntime refuses CUDA graph capture otherwise).
The prepared ``fp32`` and ``fp16`` backbones keep 144 shape-arithmetic nodes (Concat,
Slice) on the CPU provider with no Memcpy: onnxruntime places them there itself, and the
first run captured and replayed their CUDA graphs in every bucket. Their gate
(``shape_nodes_known``) passes with those nodes listed as known; any other node off CUDA, or
any Memcpy, fails it. The fused backbones have no shape arithmetic: every node on CUDA.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

CUDA_PROVIDER = "CUDAExecutionProvider"
SHOWN = 6
#: Shape arithmetic onnxruntime may keep on the CPU provider without a Memcpy node.
SHAPE_OPS = frozenset({"Shape", "Concat", "Slice", "Gather", "Range", "Expand", "Squeeze",
                       "Unsqueeze", "ConstantOfShape", "Size", "Reshape"})
#: Verdict names that are gates: a run passes only when every one of them passes.
GATE_PREFIXES = ("device is CUDA", "node placement", "CUDA graph capture")


@dataclass
class Verdict:
    name: str
    ok: bool
    detail: str
    figures: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        return f"[{'PASS' if self.ok else 'FAIL'}] {self.name}: {self.detail}"


def device_verdict(available: list[str], engine_device: str,
                   session_providers: dict[str, list[str]],
                   label: str = "device is CUDA") -> Verdict:
    """PASS only when onnxruntime has the CUDA provider, the engine says CUDA and every
    session's first provider is CUDA (``session_providers``: graph label -> providers)."""
    problems = []
    if CUDA_PROVIDER not in available:
        problems.append(f"onnxruntime has no {CUDA_PROVIDER} (available: {available})")
    if engine_device != "cuda":
        problems.append(f"engine device is {engine_device!r}")
    off = {label: p[:1] for label, p in session_providers.items() if p[:1] != [CUDA_PROVIDER]}
    if off:
        problems.append(f"sessions not on CUDA: {off}")
    detail = "; ".join(problems) if problems else (
        f"engine on CUDA, all {len(session_providers)} sessions lead with {CUDA_PROVIDER}")
    return Verdict(label, not problems, detail,
                   {"available": available, "engine_device": engine_device,
                    "sessions": session_providers})


def placement_verdict(label: str, placed: list[tuple[str, str, str]] | str,
                      shape_nodes_known: bool = False) -> Verdict:
    """``placed``: ``(provider, op_type, node name)`` per node, or why it is unknown;
    ``shape_nodes_known``: shape arithmetic on the CPU provider passes (no Memcpy)."""
    name = f"node placement, {label}"
    if isinstance(placed, str):
        return Verdict(name, False, placed)
    if not placed:
        return Verdict(name, False, "no nodes reported (placement not recorded?)")
    by_provider = Counter(ep for ep, _, _ in placed)
    memcpy = [(ep, op, n) for ep, op, n in placed if op.startswith("Memcpy")]
    off_cuda = [(ep, op, n) for ep, op, n in placed if ep != CUDA_PROVIDER]
    counts = ", ".join(f"{ep} {count}" for ep, count in by_provider.most_common())
    figures = {"providers": dict(by_provider), "memcpy": len(memcpy), "off_cuda": len(off_cuda),
               "off_cuda_ops": dict(Counter(op for _, op, _ in off_cuda)),
               "off_cuda_nodes": [f"{n} ({op}) on {ep}" for ep, op, n in memcpy + off_cuda]}
    if not memcpy and not off_cuda:
        return Verdict(name, True, f"all {len(placed)} nodes on {CUDA_PROVIDER}, no Memcpy",
                       figures)
    ops = ", ".join(f"{op} {n}" for op, n in Counter(
        op for _, op, _ in off_cuda).most_common())
    if shape_nodes_known and not memcpy and all(op in SHAPE_OPS for _, op, _ in off_cuda):
        figures["known_shape_nodes"] = len(off_cuda)
        return Verdict(name, True, f"{counts}; no Memcpy; {len(off_cuda)} shape nodes on "
                       f"the CPU provider, known ({ops})", figures)
    shown = ", ".join(f"{n} ({op}) on {ep}" for ep, op, n in (memcpy + off_cuda)[:SHOWN])
    return Verdict(name, False, f"{counts}; {len(memcpy)} Memcpy, {len(off_cuda)} off CUDA "
                   f"({ops or '-'}): {shown}", figures)


def target_verdict(name: str, value: float, limit: float, unit: str = "",
                   higher_is_better: bool = False) -> Verdict:
    """A figure against its target (NaN, e.g. not measured, fails)."""
    ok = value >= limit if higher_is_better else value <= limit
    sign = ">=" if higher_is_better else "<="
    return Verdict(name, bool(ok), f"{value:.4g}{unit} (target {sign} {limit:g}{unit})",
                   {"value": value, "target": limit})
