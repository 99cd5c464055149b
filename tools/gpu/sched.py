#!/usr/bin/env python3
"""The GPU check's continuous-batching section: whole batches against step scheduling at 1,
4 and 16 concurrent clients with spread arrivals, through ``benchmarks.concurrency`` when
this project has it (its servers with ``--canonical-anchors never``: no second engine making
anchors while the clients wait).

    python -m tools.gpu.sched MODEL_DIR --device cuda --json OUT/concurrency.json

``benchmarks.concurrency`` comes from another branch (``sched``); without it this section
prints "not present" and writes that to the JSON. Its command line was not known when this
was written: :func:`run_concurrency` is the ONE place that calls it. Adjust it there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

CLIENTS = (1, 4, 16)


# ---------------------------------------------------------------------------------------
# THE CALL INTO benchmarks.concurrency: adjust here once the sched branch is merged.
# It must return {"header": [...], "rows": [[...], ...]} (a table the summary prints) and
# may add any other figures; raise to report a failure.
# ---------------------------------------------------------------------------------------
def run_concurrency(module: Any, model_dir: Path, device: str, steps: int,
                    clients: tuple[int, ...], json_path: Path,
                    precision: str | None = None) -> dict[str, Any]:
    """Whole batches against step scheduling (continuous batching), one server each,
    through the real ``wyoming`` client, with Poisson arrivals."""
    raw = json_path.with_suffix(".raw.json")
    argv = ["--model-dir", str(model_dir), "--device", device, "--num-steps", str(steps),
            "--clients", *map(str, clients), "--replies", "2", "--mean-gap-s", "0.2",
            "--modes", "batch", "step", "--json", str(raw), "--log-dir", "/tmp/ov-gpu",
            "--server-arg=--canonical-anchors=never"]
    if precision:
        argv.append(f"--server-arg=--precision={precision}")
    print(f"benchmarks.concurrency.main({argv})", flush=True)
    try:
        status = module.main(argv)
    except SystemExit as stop:  # its argparse or its own exit: a failure, reported
        status = stop.code
    if status not in (None, 0):
        raise RuntimeError(f"benchmarks.concurrency exited {status}")
    data: dict[str, Any] = json.loads(raw.read_text()) if raw.is_file() else {}
    results: dict[str, dict[str, dict[str, float]]] = data.get("results", {})
    header = ["clients"] + [f"{mode}: {figure}" for mode in results
                            for figure in ("replies/s", "first audio p50 s", "RTF")]
    rows = []
    for count in clients:
        row: list[Any] = [count]
        for figures in results.values():
            one = figures.get(str(count)) or figures.get(count) or {}  # type: ignore[call-overload]
            row += [round(one.get("replies_per_s", float("nan")), 2),
                    round(one.get("first_audio_p50_s", float("nan")), 3),
                    round(one.get("aggregate_rtf", float("nan")), 4)]
        rows.append(row)
    return {"header": header, "rows": rows, "raw": data}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)))
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--precision", default=None, help="the servers' --precision")
    args = parser.parse_args(argv)
    clients = tuple(int(c) for c in args.clients.split(","))
    try:
        module = importlib.import_module("benchmarks.concurrency")
    except ImportError as err:
        status = f"continuous batching: not present (no benchmarks.concurrency: {err})"
        print(status, flush=True)
        args.json.write_text(json.dumps({"status": status}) + "\n")
        return 0
    started = time.perf_counter()
    try:
        result = run_concurrency(module, args.model_dir, args.device, args.steps, clients,
                                 args.json, args.precision)
    except Exception as err:  # reported, and the check goes on
        status = f"continuous batching: FAILED {type(err).__name__}: {err}"
        print(status, flush=True)
        args.json.write_text(json.dumps({"status": status}) + "\n")
        return 1
    result["status"] = f"measured in {time.perf_counter() - started:.0f} s"
    args.json.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(f"continuous batching: {result['status']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
