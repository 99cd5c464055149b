#!/usr/bin/env python3
"""The fused backbone side by side with the prepared ones, on the CPU, at the real size.

    python -m benchmarks.random_model --out bench-out/real-random          # once (numpy only)
    python -m benchmarks.bench_fused --model-dir bench-out/real-random

Printed per variant (default ``fp32,fp32-fused,int8``; ``fp16-fused`` on request, the CPU
provider computes fp16 slowly): preparation seconds, node counts, backbone forward ms at
96/150/300 positions (one row, median of ``--repeats`` after a warm-up, the variants
interleaved so a busy machine slows them alike), and the agreement
with the prepared fp32 backbone: hidden states' relative error (two rows with a padded
mask, as a decode step has) and the share of equal codes over a short deterministic decode
(``--steps``). The CPU figures say what the fusion costs or saves there and that it is
exact; the CUDA gain (kernels per forward) is measured by the GPU check. Keep the machine
quiet: figures are medians, nothing here is a test.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline import prepare
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers

TEXT = "The living room lights are on."


def forward_feed(rows: int, length: int, hidden: int, seed: int,
                 padded: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = np.ones((rows, 1, length, length), dtype=bool)
    if padded and rows > 1:  # the second row: a shorter block, its padding to itself
        cut = length * 2 // 3
        mask[1:, 0] = False
        mask[1:, 0, :cut, :cut] = True
        mask[1:, 0, np.arange(cut, length), np.arange(cut, length)] = True
    return {"inputs_embeds": rng.standard_normal((rows, length, hidden)).astype(np.float32),
            "attention_mask": mask}


def time_forwards(graphs: dict[str, Graph], feed: dict[str, np.ndarray],
                  repeats: int) -> dict[str, float]:
    """Median ms per variant, the variants interleaved (each repeat runs every variant once,
    so a busy machine slows them alike), after one warm-up each."""
    times: dict[str, list[float]] = {name: [] for name in graphs}
    for graph in graphs.values():
        graph.run(feed, ["hidden_states"])  # warm-up: allocations
    for _ in range(repeats):
        for name, graph in graphs.items():
            start = time.perf_counter()
            graph.run(feed, ["hidden_states"])
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: round(statistics.median(values), 1) for name, values in times.items()}


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def run(args: argparse.Namespace) -> dict[str, Any]:
    import onnx

    variants = ["fp32", *[v for v in args.variants.split(",") if v != "fp32"]]
    positions = [int(p) for p in args.positions.split(",")]
    report: dict[str, Any] = {"model": str(args.model_dir), "positions": positions,
                              "variants": {v: {"forward_ms": {}} for v in variants}}
    graphs: dict[str, Graph] = {}
    for variant in variants:
        started = time.perf_counter()
        found = prepare.prepare_backbone(args.model_dir, variant)
        figures = report["variants"][variant]
        figures["prepare_s"] = round(time.perf_counter() - started, 1)
        ops = Counter(n.op_type for n in onnx.load(str(found.path),
                                                   load_external_data=False).graph.node)
        figures["nodes"] = sum(ops.values())
        figures["matmuls"] = ops["MatMul"] + ops["MatMulInteger"] + \
            ops["DynamicQuantizeMatMul"]
        graphs[variant] = Graph(found.path, choose_providers("cpu"),
                                model_bytes=found.model_bytes(),
                                external_data_dir=found.weights_dir, threads=args.threads)
    hidden = int(graphs["fp32"].inputs["inputs_embeds"].shape[-1])
    for length in positions:
        feed = forward_feed(1, length, hidden, length, False)
        for variant, ms in time_forwards(graphs, feed, args.repeats).items():
            report["variants"][variant]["forward_ms"][length] = ms
        print(f"forward ms at {length} positions: " + ", ".join(
            f"{v} {report['variants'][v]['forward_ms'][length]}" for v in variants) +
            f" (load {load_average()})", flush=True)
    if args.forward_only:
        return report
    agreement = forward_feed(2, 96, hidden, 7, True)
    live = agreement["attention_mask"][:, 0].any(axis=-1)
    states = {v: g.run(agreement, ["hidden_states"])[0] for v, g in graphs.items()}
    graphs.clear()
    gc.collect()
    options = DecodeOptions(num_step=args.steps, position_temperature=0.0,
                            class_temperature=0.0)
    codes = {}
    for variant in variants:
        engine = Engine.load(args.model_dir, device="cpu", precision=variant,
                             threads=args.threads)
        codes[variant] = engine.generate_codes(TEXT, options=options)
        del engine
        gc.collect()
    for variant in variants:
        figures = report["variants"][variant]
        exact = states["fp32"][live]
        figures["hidden_rel_error"] = float(np.abs(states[variant][live] - exact).max() /
                                            np.abs(exact).max())
        figures["codes_equal_pct"] = round(
            100 * float(np.mean(codes[variant] == codes["fp32"])), 2)
        print(f"{variant:>11}: prepared {figures['prepare_s']} s, {figures['nodes']} nodes "
              f"({figures['matmuls']} matrix products); hidden rel error "
              f"{figures['hidden_rel_error']:.2e}, codes {figures['codes_equal_pct']} % "
              f"equal over {args.steps} steps", flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--variants", default="fp32,fp32-fused,int8")
    parser.add_argument("--positions", default="96,150,300")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=4, help="decode steps for the codes")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--forward-only", action="store_true",
                        help="forward times only (no decode, no agreement)")
    parser.add_argument("--json", type=Path, default=None, help="also write figures here")
    args = parser.parse_args(argv)
    print(f"load average at start: {load_average()}", flush=True)
    report = run(args)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
