#!/usr/bin/env python3
"""The bucketed vocoder's shapes, time and memory: one shape per batch against the former
grouping (one call per frame bucket), with and without the arena shrink after each call.

    python -m benchmarks.vocoder_memory --model-dir bench-out/real-random --device cuda
    python -m benchmarks.vocoder_memory --model-dir tests/fixtures/models/tiny --device cpu

Each configuration runs in its own process (its memory from zero): the same mixed batches
(8 replies of 40-260 frames, then one batch with a 30 s reply), through the bucketed
vocoder. Printed per configuration: calls, distinct shapes and shape changes from one call
to the next (a CUDA Conv sets up again at each change: onnxruntime#23006), milliseconds per
batch (median), and the memory: on the CPU the process's peak and final resident size, on
CUDA the device memory in use (NVML) after the batches and its largest value between them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.audio.vocoder import (
    FRAME_BUDGET,
    Vocoder,
    VocoderStats,
    frame_bucket,
    row_bucket,
)
from wyoming_omnivoice.engine.runtime.onnx_sessions import (
    Graph,
    choose_providers,
    import_onnxruntime,
)
from wyoming_omnivoice.engine.store.model_files import ModelPaths

CONFIGS = ("one-shape,kept", "one-shape,shrink", "per-bucket,kept", "per-bucket,shrink")


class PerBucket(Vocoder):
    """The former grouping: one call (or more, within the frame budget) per frame bucket."""

    def _bucketed(self, items: Any, stats: VocoderStats) -> list[np.ndarray]:
        reach = self.reach
        waves: list[np.ndarray | None] = [None] * len(items)
        groups: dict[int, list[int]] = {}
        for i, codes in enumerate(items):
            if codes.shape[1] < 2 * reach:
                waves[i] = self.decode(codes)
                stats.calls.append((1, codes.shape[1]))
            else:
                groups.setdefault(frame_bucket(codes.shape[1]), []).append(i)
        for frames, members in sorted(groups.items()):
            pairs = 1
            while pairs * 4 * frames <= FRAME_BUDGET:
                pairs *= 2
            for first in range(0, len(members), pairs):
                chunk = members[first:first + pairs]
                self.decode_stitched(items, chunk, row_bucket(2 * len(chunk)), frames,
                                     waves, stats)
        return [w for w in waves if w is not None]


def batches(seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    mixed = [[rng.integers(0, 1024, (8, int(t)), dtype=np.int64)
              for t in rng.integers(40, 260, 8)] for _ in range(6)]
    long = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in (750, 60, 120)]
    return [*mixed, long]


def memory(device: str) -> float:
    """MiB: the process's resident size (CPU) or the device memory in use (CUDA)."""
    if device == "cuda":
        import pynvml

        pynvml.nvmlInit()
        info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0))
        return float(info.used) / 2**20
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one(model_dir: Path, device: str, config: str) -> dict[str, Any]:
    grouping, arena = config.split(",")
    providers = choose_providers(device)
    before = memory(device)
    graph = Graph(ModelPaths.from_dir(model_dir).vocoder, providers)
    if arena == "shrink":
        options = import_onnxruntime().RunOptions()
        options.add_run_config_entry("memory.enable_memory_arena_shrinkage",
                                     "gpu:0" if graph.device == "cuda" else "cpu:0")
        graph.run_options = options
    else:
        graph.run_options = None
    vocoder = (PerBucket if grouping == "per-bucket" else Vocoder)(graph, bucketed=True)
    if not vocoder.active:
        return {"config": config, "error": "the vocoder does not run in buckets"}
    calls: list[tuple[int, int]] = []
    times, peaks = [], []
    for items in batches():
        started = time.perf_counter()
        vocoder.decode_many(items)
        times.append(1000 * (time.perf_counter() - started))
        calls += vocoder.last_stats.calls
        peaks.append(memory(device))
    changes = sum(a != b for a, b in itertools.pairwise(calls))
    return {"config": config, "device": graph.device, "calls": len(calls),
            "shapes": len(set(calls)), "shape_changes": changes,
            "ms_per_batch": statistics.median(times),
            "mib_after": memory(device) - before, "mib_largest": max(peaks) - before,
            "peak_rss_mib": peak_rss()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.model_dir, args.device, args.one)))
        return 0
    print(f"{'configuration':<20}{'calls':>6}{'shapes':>8}{'changes':>9}{'ms/batch':>10}"
          f"{'MiB after':>11}{'MiB largest':>13}{'peak RSS MiB':>14}")
    for config in CONFIGS:
        done = subprocess.run([sys.executable, "-m", "benchmarks.vocoder_memory",
                               "--model-dir", str(args.model_dir), "--device", args.device,
                               "--one", config], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{config:<20} FAILED: {done.stderr.strip().splitlines()[-1:]}")
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        if "error" in got:
            print(f"{config:<20} {got['error']}")
            continue
        print(f"{config:<20}{got['calls']:>6}{got['shapes']:>8}{got['shape_changes']:>9}"
              f"{got['ms_per_batch']:>10.1f}{got['mib_after']:>11.1f}"
              f"{got['mib_largest']:>13.1f}{got['peak_rss_mib']:>14.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
