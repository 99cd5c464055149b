"""Time to build voice anchors (what a first start and a voice's first use cost).

Loads a model, then builds the anchors of a few voices one at a time (as the server does on
first use), at each step count given, interleaved so that machine load hits all alike.
Prints seconds per anchor (wall and CPU seconds: on a shared machine the CPU seconds divided
by the cores give the time on an idle one) and what the preloaded languages cost at the
first start.

    python -m benchmarks.bench_anchors --model-dir bench-out/real \\
        --voices de-female,fr-male --steps 16,32
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.anchors.cache import ANCHOR_SEED, anchor_text_for
from wyoming_omnivoice.voices.config import build_catalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--voices", default="de-female,fr-male")
    parser.add_argument("--steps", default="16,32")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    catalog = build_catalog()
    presets = [catalog.get(name) for name in args.voices.split(",")]
    start = time.perf_counter()
    engine = Engine.load(args.model_dir, device=args.device)
    print(f"model loaded in {time.perf_counter() - start:.1f} s on {engine.device} "
          f"({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
    steps = [int(s) for s in args.steps.split(",")]
    times: dict[int, list[float]] = {s: [] for s in steps}
    for preset in presets:
        assert preset is not None
        for num_step in steps:
            began, cpu = time.perf_counter(), time.process_time()
            engine.generate_codes(anchor_text_for(preset), language=preset.language,
                                  instruct=preset.instruct, speed=preset.speed,
                                  options=DecodeOptions(num_step=num_step), seed=ANCHOR_SEED)
            seconds = time.perf_counter() - began
            cpu_seconds = time.process_time() - cpu
            times[num_step].append(seconds)
            print(f"{preset.name:>12} {num_step:>2} steps: {seconds:6.1f} s wall, "
                  f"{cpu_seconds:6.1f} CPU-s (load average {os.getloadavg()[0]:.1f})",
                  flush=True)
    english = sum(1 for preset in catalog if preset.uses_anchor and preset.language == "en")
    for num_step, values in times.items():
        each = statistics.median(values)
        print(f"{num_step} steps: {each:.1f} s per anchor (median of {len(values)}); first "
              f"start with --preload-languages en ({english} voices): about "
              f"{each * english / 60:.1f} min; a voice of another language: {each:.0f} s "
              "on its first use")
    if len(steps) == 2:
        print(f"ratio {steps[1]}/{steps[0]} steps: "
              f"{statistics.median(times[steps[1]]) / statistics.median(times[steps[0]]):.2f}")


if __name__ == "__main__":
    main()
