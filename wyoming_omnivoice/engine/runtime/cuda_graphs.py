"""Why onnxruntime would not capture a CUDA graph, in one log line naming nodes and providers.

onnxruntime captures a session in a CUDA graph only when every compute node runs on the
CUDA provider and the partitioned graph has no Memcpy node (shape computations may stay on
the CPU). When it refuses, its own message says only that; this module adds which nodes
are the reason, read from a session made without capture with
``session.record_ep_graph_assignment_info``. The message never blames the file: the file
loaded, only capture was refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wyoming_omnivoice.engine.runtime.onnx_sessions import (
    CUDA_PROVIDER,
    Graph,
    ProviderChoice,
    node_placement,
)

#: ``(provider, op_type, node name)`` of each node, or why placement could not be read.
Placement = list[tuple[str, str, str]] | str
#: Nodes named in one message at most.
SHOWN = 8
#: Shape ops onnxruntime may leave on the CPU without preventing capture.
_SHAPE_OPS = frozenset({"Shape", "Size"})


def placement_of(path: Path, providers: ProviderChoice, **source: Any) -> Placement:
    """The node placement of a session made without capture (``source`` as for Graph)."""
    try:
        graph = Graph(path, providers, record_placement=True, **source)
        return node_placement(graph.session)
    except Exception as err:  # the reason is only for the log
        # onnxruntime's own words, not the loader's advice about the file (it was loaded
        # once already; this second session is only for reading the placement)
        return f"node placement unavailable ({_first_line(err.__cause__ or err)})"


def blocking_nodes(placed: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Nodes that can stop capture, Memcpy nodes first (onnxruntime refuses any), then nodes
    off the CUDA provider (CPU nodes that only compute shapes are harmless, the others are
    what the Memcpy nodes copy for)."""
    memcpy = [(ep, op, name) for ep, op, name in placed if op.startswith("Memcpy")]
    off_cuda = [(ep, op, name) for ep, op, name in placed
                if ep != CUDA_PROVIDER and op not in _SHAPE_OPS and not op.startswith("Memcpy")]
    return memcpy + off_cuda


def capture_failure_message(label: str, error: BaseException | str,
                            placement: Placement) -> str:
    """One line: what onnxruntime said, and the nodes and providers that are the reason."""
    said = _first_line(error)
    head = (f"CUDA graphs unavailable for the {label}: onnxruntime refused capture "
            f"({said}); running without CUDA graphs (slower, same results).")
    if isinstance(placement, str):
        return f"{head} Cause: {placement}."
    blocking = blocking_nodes(placement)
    if not blocking:
        return (f"{head} Cause: not the node placement (all {len(placement)} nodes on "
                f"{CUDA_PROVIDER}, no Memcpy).")
    memcpy = [b for b in blocking if b[1].startswith("Memcpy")]
    shown = ", ".join(f"{name} ({op}) on {ep}" for ep, op, name in blocking[:SHOWN])
    more = f" and {len(blocking) - SHOWN} more" if len(blocking) > SHOWN else ""
    return (f"{head} Cause: {len(blocking)} of {len(placement)} nodes are not CUDA compute "
            f"nodes ({len(memcpy)} Memcpy): {shown}{more}.")


def _first_line(error: BaseException | str) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
