#!/usr/bin/env python3
"""What one decode step asks of onnxruntime: session runs by kind and copies from and to
the host, per step, on the device loop and on the host loop (counted at onnxruntime's own
Python API, as tests/engine/test_device_step_calls.py does), and the warm-up's cost with
the device loop's check and captures.

    python -m benchmarks.step_calls --model-dir tests/fixtures/models/tiny --device cpu
    python -m benchmarks.step_calls --model-dir /tmp/ov-gpu/model --device cuda \\
        --precision fp16-fused
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import onnxruntime as ort

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

REQUESTS = [SynthesisRequest(text="The first one is here.", language="en", seed=1),
            SynthesisRequest(text="A second, rather longer sentence.", language="en", seed=2)]
STEPS = 6


def kind(session: Any) -> str:
    names = {i.name for i in session.get_inputs()}
    for key, label in (("schedule", "step"), ("attention_mask", "backbone"),
                       ("input_ids", "embeddings"), ("target_ids", "embeddings"),
                       ("hidden_states", "scoring"), ("x", "cast")):
        if key in names:
            return label
    return "other"


class Counted:
    """onnxruntime's runs and copies, counted while :attr:`on`."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.up = self.down = 0
        session, value = ort.InferenceSession, ort.OrtValue
        run, bound = session.run, session.run_with_iobinding
        update, numpy, copy = value.update_inplace, value.numpy, ort.IOBinding.copy_outputs_to_cpu
        counts = self

        def counted_run(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts.runs[kind(self)] += 1
            return run(self, *args, **kwargs)

        def counted_bound(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts.runs[kind(self)] += 1
            return bound(self, *args, **kwargs)

        def counted_update(self: Any, data: Any) -> None:
            counts.up += 1
            update(self, data)

        def counted_numpy(self: Any) -> Any:
            counts.down += 1
            return numpy(self)

        def counted_copy(self: Any) -> Any:
            counts.down += 1
            return copy(self)

        session.run, session.run_with_iobinding = counted_run, counted_bound  # type: ignore[method-assign]
        value.update_inplace, value.numpy = counted_update, counted_numpy  # type: ignore[method-assign]
        ort.IOBinding.copy_outputs_to_cpu = counted_copy  # type: ignore[method-assign]

    def clear(self) -> None:
        self.runs.clear()
        self.up = self.down = 0


def per_step(engine: Engine, options: DecodeOptions, host_only: bool, counts: Counted) -> str:
    stepper = engine.decoder.stepper(options, host_only=host_only)
    for plan in (engine.planner.plan(r) for r in REQUESTS):
        stepper.start(engine.planner.prompt(plan, options.denoise), plan.rng)
    stepper.step()  # binds the items (uploads once)
    counts.clear()
    started = time.perf_counter()
    for _ in range(STEPS):
        stepper.step()
    took = 1000 * (time.perf_counter() - started) / STEPS
    runs = {k: v / STEPS for k, v in counts.runs.items()}
    up, down = counts.up / STEPS, counts.down / STEPS
    while stepper.active:
        stepper.step()
    return (f"runs {sum(runs.values()):.1f} ({', '.join(f'{k} {v:g}' for k, v in runs.items())})"
            f", uploads {up:g}, downloads {down:g}, {took:.2f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--warm-sizes", default="1,2,4,8")
    parser.add_argument("--steps", type=int, default=32, help="the requests' steps (warm-up)")
    args = parser.parse_args(argv)
    counts = Counted()

    def load(loop: bool) -> Engine:
        return Engine.load(args.model_dir, device=args.device, precision=args.precision,
                           io_binding=True, buckets=True, device_loop=loop)

    engine = load(True)
    for mode, options in (("noisy", DecodeOptions(num_step=12)),
                          ("deterministic", DecodeOptions(num_step=12,
                                                          position_temperature=0.0))):
        for loop, host_only in (("device", False), ("host", True)):
            print(f"{mode:<13} {loop:<6} loop, per step: "
                  f"{per_step(engine, options, host_only, counts)}", flush=True)
    sizes = tuple(int(s) for s in args.warm_sizes.split(","))
    for loop in (False, True):
        times = []
        for _ in range(3):
            fresh = load(loop)
            started = time.perf_counter()
            fresh.warm_up(batch_sizes=sizes, options=DecodeOptions(num_step=args.steps))
            times.append(time.perf_counter() - started)
        print(f"warm-up at row buckets {sizes}, device loop {loop}: "
              f"{statistics.median(times):.2f} s (median of 3)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
