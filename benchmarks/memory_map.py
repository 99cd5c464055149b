"""Where a process's resident memory is: ``/proc/PID/smaps`` grouped by what is mapped.

Groups: the heap and other anonymous memory (onnxruntime's arenas and prepacked weights,
numpy arrays, Python objects), each model file mapped (weights onnxruntime reads in place),
shared libraries (onnxruntime's, numpy's, Python's) and the rest. Used by
``benchmarks/smallhost.py`` after the replies.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

#: Mapped files under these name endings are model files (listed one by one).
MODEL_SUFFIXES = (".onnx", ".onnx.data", ".data", ".json", ".npz")


def _group(name: str) -> str:
    if not name or name.startswith("[heap]") or name.startswith("[anon"):
        return "anonymous (heap, arenas, prepacked weights, arrays, objects)"
    if name.startswith("["):
        return "other (stack, vdso)"
    if name.endswith(MODEL_SUFFIXES):
        return f"mapped model file {Path(name).parent.name}/{Path(name).name}"
    if ".so" in Path(name).name:
        return "shared libraries"
    return "other mapped files"


def resident_by_mapping(pid: int) -> dict[str, int]:
    """Resident bytes per group (see the module), largest first; {} when unreadable."""
    totals: dict[str, int] = defaultdict(int)
    current = ""
    try:
        lines = Path(f"/proc/{pid}/smaps").read_text().splitlines()
    except OSError:
        return {}
    for line in lines:
        fields = line.split()
        if not fields:
            continue
        if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
            current = _group(fields[5] if len(fields) > 5 else "")
        elif fields[0] == "Rss:":
            totals[current] += int(fields[1]) * 1024
    return dict(sorted(totals.items(), key=lambda item: -item[1]))
