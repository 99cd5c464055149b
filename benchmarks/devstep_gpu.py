#!/usr/bin/env python3
"""The devstep figures in one process, one engine (for the GPU check):

1. GPU memory stage by stage (:mod:`benchmarks.gpu_memory`);
2. a mixed batch against copies, by phase, vocoder per item and in buckets
   (:mod:`benchmarks.mixed_batch`);
3. the host step loop against the device step loop (:mod:`benchmarks.device_loop`), and
   onnxruntime's runs and copies per step of each (:mod:`benchmarks.step_calls`);
4. a second engine with the text-embedding table on the host: its memory, codes, speed.

    python -m benchmarks.devstep_gpu --model-dir /tmp/ov-gpu/model --precision fp16

Each part prints as it goes; a part that fails prints its error and the next one runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import traceback

import numpy as np

from benchmarks.device_loop import compare_loops
from benchmarks.gpu_memory import memory_stages, used_mib
from benchmarks.mixed_batch import TEXTS, phase_tables
from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--precision", default="fp16")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--steps", default="32,16", help="phase tables at these steps")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"== devstep GPU figures (load average {os.getloadavg()[0]:.2f}) ==", flush=True)
    print("\n-- 1. GPU memory --", flush=True)
    engine = memory_stages(args.model_dir, args.device, args.precision, args.requests, [8],
                           16)
    print(f"\n-- 2. mixed batch by phase (vocoder receptive radius "
          f"{engine.vocoder_runner.receptive_radius()} frames) --", flush=True)
    try:
        phase_tables(engine, [int(s) for s in args.steps.split(",")], 8, args.repeats)
    except Exception:
        traceback.print_exc()
    print("\n-- 3. step loop: host vs device --", flush=True)
    try:
        looped = engine
        if engine.decoder.runner is None or engine.decoder.selection_graph is None:
            print("this engine has no device loop (the CPU default): a second one with IO "
                  "binding, buckets and the device loop")
            looped = Engine.load(args.model_dir, device=args.device, precision=args.precision,
                                 io_binding=True, buckets=True, device_loop=True)
            looped.warm_up()
        compare_loops(looped, int(args.steps.split(",")[0]), args.repeats)
        from benchmarks.step_calls import Counted, per_step

        counts = Counted()  # onnxruntime's runs and copies per step, counted at its API
        for loop, host_only in (("device", False), ("host", True)):
            print(f"  noisy, {loop} loop, per step: "
                  f"{per_step(looped, DecodeOptions(num_step=12), host_only, counts)}",
                  flush=True)
    except Exception:
        traceback.print_exc()
    print("\n-- 4. text table on the host (a second engine) --", flush=True)
    try:
        host_table(engine, args)
    except Exception:
        traceback.print_exc()
    print(f"\n== devstep GPU figures done in {time.perf_counter() - started:.0f} s ==",
          flush=True)


def host_table(engine: Engine, args: argparse.Namespace) -> None:
    """A second engine with ``host_text_table``: what its load added, its codes against
    the first engine's, and a short reply's decode time on both."""
    before, source = used_mib(engine.device)
    hosted = Engine.load(args.model_dir, device=args.device, precision=args.precision,
                         host_text_table=True)
    hosted.warm_up()
    after, _ = used_mib(engine.device)
    print(f"  second engine (text table on the host) loaded and warmed: {after - before:+.0f} MiB "
          f"({source}; the first engine: part 1, engine loaded + warm-up)")
    options = DecodeOptions(num_step=16, position_temperature=0.0)
    requests = [SynthesisRequest(text=t, seed=i) for i, t in enumerate(TEXTS)]
    same = all(np.array_equal(a, b) for a, b in zip(
        engine.generate_codes_batch(requests, options=options),
        hosted.generate_codes_batch(requests, options=options), strict=True))
    times = {}
    for name, which in (("device table", engine), ("host table", hosted)):
        runs = []
        for index in range(args.repeats + 1):
            t0 = time.perf_counter()
            which.generate_codes(TEXTS[0], options=options, seed=index)
            runs.append(time.perf_counter() - t0)
        times[name] = 1000 * statistics.median(runs[1:])
    print(f"  codes equal on 8 mixed replies: {same}; short reply, 16 steps: "
          + ", ".join(f"{k} {v:.1f} ms" for k, v in times.items()), flush=True)


if __name__ == "__main__":
    main()
