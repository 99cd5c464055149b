#!/usr/bin/env python3
"""The decode's step loop on the device against the host loop: same codes, time per
decode and per step, and where the selection session's nodes run (the GPU check).

    python -m benchmarks.device_loop --model-dir /tmp/ov-gpu/model --device cuda \\
        --precision fp16
    python -m benchmarks.device_loop --model-dir tests/fixtures/models/tiny --device cpu

For a short reply and a batch of 8 mixed replies, deterministic (position temperature 0)
and seeded Gumbel (the noisy path requests take): the host loop (a stepper kept on the
host, ``host_only``: scores copied to the host each step, numpy selection; the same engine,
so the same backbone and buckets) and the device loop
(:func:`wyoming_omnivoice.engine.decoding.device_check.decode_on_device`: the backbone and
one step session per step, nothing copied). Prints whether the codes are equal, the
medians of ``--repeats`` decodes, and the step session's node placement (providers,
Memcpy) and whether it captures CUDA graphs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.decoding.decoder import DecodeItem
from wyoming_omnivoice.engine.decoding.device_check import decode_on_device
from wyoming_omnivoice.engine.decoding.device_selection import step_model, step_session
from wyoming_omnivoice.engine.decoding.stepping import run_to_end
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, node_placement

TEXTS = ("The living room lights are now turned on.", "Turn on the heating in the bedroom.",
         "The front door is locked.", "It will rain tomorrow afternoon.",
         "Timer set for ten minutes.", "The garage door is closed.",
         "Good night, all lights are off.", "The kitchen is twenty one degrees.")


def items_of(engine: Engine, requests: list[SynthesisRequest]) -> list[DecodeItem]:
    plans = [engine.planner.plan(r) for r in requests]
    return [DecodeItem(prompt=engine.planner.prompt(p, True), rng=p.rng) for p in plans]


def host_decode(engine: Engine, items: list[DecodeItem], options: DecodeOptions
                ) -> list[np.ndarray]:
    """The host loop on this engine (its device loop set aside for this decode)."""
    stepper = engine.decoder.stepper(options, host_only=True)
    states = [stepper.start(item.prompt, item.rng) for item in items]
    run_to_end(stepper)
    engine.decoder.last_stats = stepper.stats
    return [state.codes for state in states]


def placement(engine: Engine, noisy: bool) -> str:
    """Provider counts of the step session's nodes (a session that records them)."""
    graphs = engine.graphs
    model = step_model(graphs, guided=True, noisy=noisy)
    try:
        graph = Graph(graphs.heads_path, graphs.providers, model_bytes=model,
                      record_placement=True)
        placed = node_placement(graph.session)
    except Exception as err:  # older onnxruntime: no placement record
        return f"placement not recorded ({err})"
    counts: dict[str, int] = {}
    for provider, _op, _ in placed:
        counts[provider] = counts.get(provider, 0) + 1
    off = sorted({op for provider, op, _ in placed if provider != "CUDAExecutionProvider"})
    memcpy = sum(1 for _, op, _ in placed if op.startswith("Memcpy"))
    return f"{counts}; {memcpy} Memcpy; ops off CUDA: {off or 'none'}"


def compare_loops(engine: Engine, steps: int, repeats: int) -> None:
    """Host vs device loop lines (see the module doc)."""
    print(f"step session placement (noisy): {placement(engine, True)}", flush=True)
    batches = {"short reply": [SynthesisRequest(text=TEXTS[0], seed=1)],
               "8 mixed": [SynthesisRequest(text=t, seed=i) for i, t in enumerate(TEXTS)]}
    for mode, temperature in (("deterministic", 0.0), ("gumbel", 5.0)):
        options = DecodeOptions(num_step=steps, position_temperature=temperature)
        session = step_session(engine.graphs, guided=True, noisy=temperature > 0)
        for name, requests in batches.items():
            times: dict[str, list[float]] = {"host": [], "device": []}
            equal = True
            for _ in range(repeats + 1):
                t0 = time.perf_counter()
                host = host_decode(engine, items_of(engine, requests), options)
                t1 = time.perf_counter()
                device = decode_on_device(engine.decoder, session,
                                          items_of(engine, requests), options)
                t2 = time.perf_counter()
                equal &= all(np.array_equal(a, b) for a, b in zip(host, device, strict=True))
                times["host"].append(t1 - t0)
                times["device"].append(t2 - t1)
            extra = engine.last_stats.extra
            print(f"  {mode:<13} {name:<11} device prepare (uploads, noise "
                  f"{extra.get('noise_mib', 0.0):.2f} MiB once): "
                  f"{1000 * extra.get('prepare_s', 0.0):.2f} ms", flush=True)
            host_ms = 1000 * statistics.median(times["host"][1:])
            device_ms = 1000 * statistics.median(times["device"][1:])
            captured = [key for key, slot in session.slots.items() if slot.graph_ids[0] >= 0]
            print(f"  {mode:<13} {name:<11} host loop {host_ms:8.1f} ms "
                  f"({host_ms / steps:.2f}/step)  device loop {device_ms:8.1f} ms "
                  f"({device_ms / steps:.2f}/step)  codes equal {equal}; step session "
                  f"CUDA graphs {session.capture} (captured shapes: {captured or 'none'})",
                  flush=True)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--precision", default="fp16")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    engine = Engine.load(args.model_dir, device=args.device, precision=args.precision,
                         io_binding=True, buckets=True, device_loop=True)
    engine.warm_up(batch_sizes=(1, 8))
    print(f"engine on {engine.device} ({engine.precision})", flush=True)
    compare_loops(engine, args.steps, args.repeats)

if __name__ == "__main__":
    main()
