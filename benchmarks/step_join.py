"""Continuous batching in the engine: requests arriving while a decode runs, whole batches
against joining at the next step, on one engine (no server), and exactness on the device.

Requests (different short replies, codes only) arrive every ``--gap-ms`` on the wall clock.
``batch``: like the former worker, every request that has arrived is decoded in one
``generate_codes_batch`` to the end, then the next batch. ``step``: one engine
``SynthesisSession``; before every step the requests that have arrived join it. Per mode it
prints each request's time from arrival to its codes (p50, p95, max), the requests per
second, and whether every request got exactly the codes it gets decoded alone.

    python -m benchmarks.step_join --model-dir tests/fixtures/models/tiny --device cpu
    python -m benchmarks.step_join --model-dir MODEL --device cuda --precision fp32 --steps 32
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine import SessionItem

TEXTS = (
    "Turned on the kitchen lights.", "The living room is at twenty-one degrees.", "Done.",
    "The front door is locked.", "It will rain tomorrow afternoon.",
    "Set a timer for ten minutes.", "The garage door is open.", "Playing music upstairs.",
    "The washing machine has finished.", "Good morning! It is seven thirty.",
    "I turned off three lights.", "The heating is set to nineteen degrees.",
)


def requests(count: int) -> list[SynthesisRequest]:
    return [SynthesisRequest(text=TEXTS[i % len(TEXTS)], language="en", seed=100 + i)
            for i in range(count)]


def run_batch(engine: Engine, reqs: list[SynthesisRequest], gap_s: float,
              options: DecodeOptions, max_batch: int) -> tuple[list[float], list[Any], float]:
    started = time.perf_counter()
    arrivals = [started + i * gap_s for i in range(len(reqs))]
    latency: list[float] = [0.0] * len(reqs)
    codes: list[Any] = [None] * len(reqs)
    nxt = 0
    while nxt < len(reqs):
        now = time.perf_counter()
        if arrivals[nxt] > now:
            time.sleep(arrivals[nxt] - now)
            continue
        members = [i for i in range(nxt, len(reqs)) if arrivals[i] <= now][:max_batch]
        results = engine.generate_codes_batch([reqs[i] for i in members], options=options)
        done = time.perf_counter()
        for i, result in zip(members, results, strict=True):
            latency[i], codes[i] = done - arrivals[i], result
        nxt = members[-1] + 1
    return latency, codes, time.perf_counter() - started


def run_step(engine: Engine, reqs: list[SynthesisRequest], gap_s: float,
             options: DecodeOptions, max_batch: int) -> tuple[list[float], list[Any], float]:
    session = engine.open_session(options)
    started = time.perf_counter()
    arrivals = [started + i * gap_s for i in range(len(reqs))]
    latency: list[float] = [0.0] * len(reqs)
    codes: list[Any] = [None] * len(reqs)
    nxt = 0
    while nxt < len(reqs) or session.active:
        now = time.perf_counter()
        while nxt < len(reqs) and arrivals[nxt] <= now and session.decoding < max_batch:
            session.add(reqs[nxt], codes_only=True, tag=nxt)
            nxt += 1
        if not session.active:
            time.sleep(max(0.0, arrivals[nxt] - now))
            continue
        finished: list[SessionItem] = session.step()
        done = time.perf_counter()
        for item in finished:
            if item.error is not None:
                raise item.error
            latency[item.tag], codes[item.tag] = done - arrivals[item.tag], item.result
    return latency, codes, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--steps", type=int, default=None, help="default: the device's")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--gap-ms", type=float, nargs="+", default=[0.0, 20.0, 100.0])
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    engine = Engine.load(args.model_dir, device=args.device, precision=args.precision)
    from wyoming_omnivoice.engine import default_num_steps
    steps = args.steps or default_num_steps(engine.device, engine.precision)
    options = DecodeOptions(num_step=steps)
    engine.warm_up(batch_sizes=(1, 2, 4, 8, 16) if engine.device == "cuda" else (1,))
    reqs = requests(args.requests)
    alone = [engine.generate_codes_batch([r], options=options)[0] for r in reqs]
    print(f"{engine.device} {engine.precision}, {steps} steps, {args.requests} requests, "
          f"max batch {args.max_batch}")
    print(f"{'gap ms':>7} {'mode':>5} {'req/s':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}"
          f" exact")
    for gap in args.gap_ms:
        for _ in range(args.rounds):
            for mode, run in (("batch", run_batch), ("step", run_step)):
                latency, codes, wall = run(engine, reqs, gap / 1000.0, options, args.max_batch)
                ordered = sorted(latency)
                exact = all(np.array_equal(c, a) for c, a in zip(codes, alone, strict=True))
                print(f"{gap:>7.0f} {mode:>5} {len(reqs) / wall:>7.2f} "
                      f"{statistics.median(ordered) * 1000:>8.1f} "
                      f"{ordered[round(0.95 * (len(ordered) - 1))] * 1000:>8.1f} "
                      f"{ordered[-1] * 1000:>8.1f} {'yes' if exact else 'NO'}", flush=True)


if __name__ == "__main__":
    main()
