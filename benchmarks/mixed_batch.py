#!/usr/bin/env python3
"""A mixed batch against a batch of copies, by phase, with the vocoder per item and in
frame buckets: where a batch of different replies spends the time copies do not.

    python -m benchmarks.mixed_batch --model-dir tests/fixtures/models/tiny
    python -m benchmarks.mixed_batch --model-dir /tmp/ov-gpu/model --device cuda \\
        --precision fp16 --steps 32,16          # the GPU check: same table on CUDA

Per column (one ``Engine.synthesize_batch`` of 8 requests, median of ``--repeats`` after
one unmeasured run): milliseconds per phase (``Engine.last_synthesis``: plan, decode with
its backbone/embeddings/scoring/host selection, vocoder, post-processing) and the
vocoder's calls and distinct shapes. ``mixed``: 8 different short replies (the GPU check's
texts); ``same``: 8 copies of the first. ``per-item``: one vocoder call per reply (the
shapes of 8 lengths, before); ``buckets``: the vocoder in frame buckets (few fixed
shapes, :mod:`wyoming_omnivoice.engine.audio.vocoder`). Load average printed first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.synthesis_stats import SynthesisStats, phase_table

TEXTS = ("The living room lights are now turned on.", "Turn on the heating in the bedroom.",
         "The front door is locked.", "It will rain tomorrow afternoon.",
         "Timer set for ten minutes.", "The garage door is closed.",
         "Good night, all lights are off.", "The kitchen is twenty one degrees.")


def batches(size: int) -> dict[str, list[SynthesisRequest]]:
    return {
        "mixed": [SynthesisRequest(text=TEXTS[i % len(TEXTS)], seed=i) for i in range(size)],
        "same": [SynthesisRequest(text=TEXTS[0], seed=i) for i in range(size)],
    }


def median_stats(runs: list[SynthesisStats]) -> SynthesisStats:
    """The run of median total time."""
    ordered = sorted(runs, key=lambda s: s.total_s)
    return ordered[len(ordered) // 2]


def measure(engine: Engine, requests: list[SynthesisRequest], options: DecodeOptions,
            repeats: int) -> SynthesisStats:
    engine.synthesize_batch(requests, options=options)  # shapes seen once
    runs = []
    for _ in range(repeats):
        engine.synthesize_batch(requests, options=options)
        runs.append(engine.last_synthesis)
    return median_stats(runs)


def phase_tables(engine: Engine, step_counts: list[int], batch: int, repeats: int) -> None:
    """The side-by-side phase table per step count (see the module doc)."""
    vocoder = engine.vocoder_runner
    asked = vocoder.bucketed
    for steps in step_counts:
        options = DecodeOptions(num_step=steps)
        columns: dict[str, SynthesisStats] = {}
        for mode in ("per-item", "buckets"):
            vocoder.bucketed = mode == "buckets"
            for name, requests in batches(batch).items():
                columns[f"{name} {mode}"] = measure(engine, requests, options, repeats)
        vocoder.bucketed = asked
        print(f"\n{steps} steps, batch of {batch} (median of {repeats}; vocoder "
              f"bucketed when active: {vocoder.active})")
        print(phase_table(columns), flush=True)
        total = {k: v.total_s for k, v in columns.items()}
        print("mixed/same total: per-item "
              f"{total['mixed per-item'] / total['same per-item']:.2f}x, buckets "
              f"{total['mixed buckets'] / total['same buckets']:.2f}x; median "
              f"{statistics.median(total.values()) * 1000:.0f} ms")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--steps", default="16", help="comma-separated step counts")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}", flush=True)
    started = time.perf_counter()
    engine = Engine.load(args.model_dir, device=args.device, precision=args.precision)
    engine.warm_up()
    vocoder = engine.vocoder_runner
    print(f"engine on {engine.device} ({args.precision}) loaded and warmed in "
          f"{time.perf_counter() - started:.1f} s; vocoder receptive radius "
          f"{vocoder.receptive_radius()} frames", flush=True)
    phase_tables(engine, [int(s) for s in args.steps.split(",")], args.batch,
                 args.repeats)

if __name__ == "__main__":
    main()
