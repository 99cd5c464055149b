#!/usr/bin/env python3
"""The fused backbone side by side with the prepared ones, on the CPU, at the real size.

    python -m benchmarks.random_model --out bench-out/real-random          # once (numpy only)
    python -m benchmarks.bench_fused --model-dir bench-out/real-random

Printed per variant (default ``fp32,fp32-fused,int8``; ``fp16-fused`` on request, the CPU
provider computes fp16 slowly): preparation seconds, node counts, backbone forward ms at
96/150/300 positions (one row, median of ``--repeats`` after a warm-up), and the agreement
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
from wyoming_omnivoice.engine.sessions import Graph, choose_providers

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


def time_forward(graph: Graph, feed: dict[str, np.ndarray], repeats: int) -> float:
    graph.run(feed, ["hidden_states"])  # warm-up: allocations
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        graph.run(feed, ["hidden_states"])
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def run(args: argparse.Namespace) -> dict[str, Any]:
    variants = args.variants.split(",")
    positions = [int(p) for p in args.positions.split(",")]
    report: dict[str, Any] = {"model": str(args.model_dir), "positions": positions,
                              "variants": {}}
    reference: dict[str, Any] = {}
    codes_options = DecodeOptions(num_step=args.steps, position_temperature=0.0,
                                  class_temperature=0.0)
    for variant in ["fp32", *[v for v in variants if v != "fp32"]]:
        started = time.perf_counter()
        found = prepare.prepare_backbone(args.model_dir, variant)
        prepared_s = time.perf_counter() - started
        import onnx

        ops = Counter(n.op_type for n in onnx.load(str(found.path),
                                                   load_external_data=False).graph.node)
        graph = Graph(found.path, choose_providers("cpu"), model_bytes=found.model_bytes(),
                      external_data_dir=found.weights_dir, threads=args.threads)
        hidden = int(graph.inputs["inputs_embeds"].shape[-1])
        figures: dict[str, Any] = {
            "prepare_s": round(prepared_s, 1), "nodes": sum(ops.values()),
            "matmuls": ops["MatMul"] + ops["MatMulInteger"] + ops["DynamicQuantizeMatMul"],
            "forward_ms": {}}
        for length in positions:
            figures["forward_ms"][length] = round(time_forward(
                graph, forward_feed(1, length, hidden, length, False), args.repeats), 1)
        figures["load"] = load_average()
        (states,) = graph.run(forward_feed(2, 96, hidden, 7, True), ["hidden_states"])
        del graph
        gc.collect()
        engine = Engine.load(args.model_dir, device="cpu", precision=variant,
                             threads=args.threads)
        codes = engine.generate_codes(TEXT, options=codes_options)
        del engine
        gc.collect()
        if variant == "fp32":
            reference = {"states": states, "codes": codes}
        live = forward_feed(2, 96, hidden, 7, True)["attention_mask"][:, 0].any(axis=-1)
        figures["hidden_rel_error"] = float(
            np.abs(states - reference["states"])[live].max() /
            np.abs(reference["states"][live]).max())
        figures["codes_equal_pct"] = round(100 * float(np.mean(codes == reference["codes"])), 2)
        report["variants"][variant] = figures
        print(f"{variant:>11}: prepared {figures['prepare_s']} s, {figures['nodes']} nodes "
              f"({figures['matmuls']} matrix products); forward ms " +
              ", ".join(f"{n}: {figures['forward_ms'][n]}" for n in positions) +
              f" (load {figures['load']})" +
              f"; hidden rel error {figures['hidden_rel_error']:.2e}, codes "
              f"{figures['codes_equal_pct']} % equal", flush=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--variants", default="fp32,fp32-fused,int8")
    parser.add_argument("--positions", default="96,150,300")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=4, help="decode steps for the codes")
    parser.add_argument("--threads", type=int, default=None)
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
