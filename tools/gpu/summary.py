#!/usr/bin/env python3
"""The GPU check's last section: every figure next to its target, the first run and the peers.

    python -m tools.gpu.summary OUT_DIR [--upstream UP.json]

Reads what the sections wrote under ``OUT_DIR`` (``figures.json`` from ``tools.gpu.figures``,
``server.json`` from ``benchmarks.server_gpu``, ``concurrency.json`` from
``tools.gpu.sched``; any of them may be missing when a section failed or ran out of time),
prints the agreement and phase tables, the side by side with upstream PyTorch eager (the
first run's figures, or ``--upstream`` from a fresh ``tools.gpu.upstream`` run), and the
summary table (figure, target, now, first run, verdict). Writes it all into
``OUT_DIR/figures.json`` (key ``summary``) and ends with ``GPU CHECK PASS`` only when every
gate passed (engine on CUDA, node placement, CUDA graph capture), else ``GPU CHECK FAIL``.
Exit status 0 on PASS, 1 on FAIL.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tools.gpu.gates import GATE_PREFIXES
from tools.gpu.targets import FIRST_RUN, PEERS, UPSTREAM_EAGER, fmt, summary_rows, table

#: Agreement bounds (ours, not issue 30's): TF32 off, so CUDA fp32 is the CPU result up to
#: summation order; a reduced precision keeps most codes.
BOUNDS = {"fp32_hidden_rel": 1e-4, "fp32_codes": 0.99, "reduced_codes": 0.9}


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def precisions_of(figures: dict[str, Any]) -> list[str]:
    return [k for k, v in figures.items() if isinstance(v, dict) and "placement" in v]


def agreement_verdicts(figures: dict[str, Any]) -> list[dict[str, Any]]:
    verdicts = []
    for name, got in figures.get("agreement", {}).items():
        if "error" in got:
            verdicts.append({"name": f"agreement {name}", "ok": False, "detail": got["error"]})
            continue
        codes = got["code_agreement"]
        if name.startswith("fp32 vs cpu"):
            ok = got["hidden_rel"] <= BOUNDS["fp32_hidden_rel"] and \
                codes >= BOUNDS["fp32_codes"]
            bound = f"hidden rel <= {BOUNDS['fp32_hidden_rel']:g}, codes >= 99 %"
        elif "tf32" in name:
            ok, bound = True, "printed"
        else:
            ok, bound = codes >= BOUNDS["reduced_codes"], "codes >= 90 %"
        verdicts.append({"name": f"agreement {name}", "ok": ok, "detail":
                         f"hidden rel {got['hidden_rel']:.2e}, codes {100 * codes:.2f} % "
                         f"({bound}), finite {got['finite']}"})
    return verdicts


def gates_by_precision(verdicts: list[dict[str, Any]], precisions: list[str]
                       ) -> list[tuple[str, ...]]:
    """One row per precision: its own device, placement and capture gates (a precision's
    gates read on their own: fp32's known shape nodes never fail fp16-fused's run)."""
    rows = []
    for precision in precisions:
        row = [precision]
        for prefix in GATE_PREFIXES:
            mine = [v for v in verdicts if v["name"].startswith(prefix) and
                    precision in v["name"].removeprefix(prefix).replace(",", " ").split()]
            row.append("-" if not mine else "PASS" if all(v["ok"] for v in mine) else "FAIL")
        rows.append(tuple(row))
    return rows


def print_phases(figures: dict[str, Any], precisions: list[str]) -> None:
    print("\n== mixed batch by phase (engine.last_stats, ms; last round of each batch) ==")
    for precision in precisions:
        for key, label in (("phases_mixed_8", "8 different"), ("phases_copies_8", "8 copies")):
            phases = figures[precision].get(key)
            wall = figures[precision].get("batch_8_ms" if "mixed" in key else "copies_8_ms")
            if phases:
                print(f"  {precision:<11}{label:<13} wall {fmt(wall)}: " + ", ".join(
                    f"{k} {v:.1f}" for k, v in phases.items()))
            else:
                print(f"  {precision:<11}{label:<13} wall {fmt(wall)}: no phase timers")


def print_side_by_side(figures: dict[str, Any], precisions: list[str],
                       upstream: dict[str, Any]) -> None:
    print("\n== side by side: upstream PyTorch eager fp32, same GPU class "
          f"({upstream.get('source')}) ==")
    rows = []
    for label, key in (("forward ms at 96", "forward_ms.96"), ("forward ms at 300",
                       "forward_ms.300"), ("first audio p50 ms", "first_audio_p50_ms"),
                       ("single-stream RTF", "rtf_single"),
                       ("aggregate RTF, 8 at once", "rtf_aggregate_8")):
        node: Any = upstream
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        ours = []
        for p in precisions:
            value: Any = figures[p]
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            ours.append(fmt(value if isinstance(value, (int, float)) else None))
        rows.append((label, *ours, fmt(node if isinstance(node, (int, float)) else None)))
    print(table(rows, ("figure", *precisions, "upstream eager")))
    for name, peer in PEERS.items():
        print(f"  peer {name}: " + ", ".join(f"{k} {v:g}" for k, v in peer.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--upstream", type=Path, default=None,
                        help="a fresh tools.gpu.upstream JSON (default: the first run's)")
    args = parser.parse_args(argv)
    figures = load(args.out_dir / "figures.json")
    figures["server"] = load(args.out_dir / "server.json")
    figures["concurrency"] = load(args.out_dir / "concurrency.json")
    precisions = precisions_of(figures)
    upstream = load(args.upstream) if args.upstream else {}
    upstream = {**(upstream or UPSTREAM_EAGER), "source": str(args.upstream) if upstream
                else f"first run, {FIRST_RUN}"}
    print(f"precisions measured: {', '.join(precisions) or 'none'}")
    if precisions:
        print_phases(figures, precisions)
        print_side_by_side(figures, precisions, upstream)
    conc = figures["concurrency"]
    print("\n== continuous batching (spread arrivals) ==")
    print(f"  {conc.get('status', 'not present')}" if not conc.get("rows") else
          table([tuple(str(v) for v in row) for row in conc["rows"]],
                tuple(conc.get("header") or ())))
    verdicts = list(figures.get("verdicts", [])) + agreement_verdicts(figures)
    print("\n== verdicts (gates and agreement) ==")
    for v in verdicts:
        print(f"[{'PASS' if v['ok'] else 'FAIL'}] {v['name']}: {v['detail']}")
    print("\n== gates by precision (each read on its own) ==")
    print(table(gates_by_precision(verdicts, precisions),
                ("precision", "engine on CUDA", "node placement", "CUDA graph capture")))
    rows = summary_rows(figures, precisions)
    print(f"\n== summary (H200 targets of issue 30; first run: {FIRST_RUN}) ==")
    print(table(rows))
    gates = [v for v in verdicts if v["name"].startswith(GATE_PREFIXES)]
    failed = [v["name"] for v in gates if not v["ok"]]
    ok = bool(gates) and not failed and bool(precisions)
    met = sum(r[-1] in ("MET", "AHEAD") for r in rows)
    judged = sum(r[-1] in ("MET", "MISSED", "AHEAD", "BEHIND") for r in rows)
    figures["summary"] = {"rows": rows, "gates_failed": failed, "pass": ok}
    (args.out_dir / "figures.json").write_text(json.dumps(figures, indent=1, default=str) + "\n")
    print(f"\nGPU CHECK {'PASS' if ok else 'FAIL'}: gates failed: {', '.join(failed) or 'none'}"
          f"{'' if gates else ' (no gate ran)'}; targets met {met}/{judged}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
