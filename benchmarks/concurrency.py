"""Concurrent clients against the server, under each worker scheduling, side by side.

Starts one server per worker scheduling (the ``WYOMING_OMNIVOICE_SCHEDULING`` development
switch of ``app/cli.py``) on the same model (``batch``: the former worker,
a batch decoded to the end before the next; ``gated``: step scheduling where a request
starts when the requests decoding are done; ``step``: a request joins the running decode at
the next diffusion step; ``auto``, the default: step on CUDA, gated on the CPU), then
for each number of concurrent clients (1, 2, 4, 8, 16 by default) runs the same load on
each server in turn (interleaved, so a busy shared machine slows all alike): every client
sends one-shot short replies over the real ``wyoming`` client, one after the other, with
exponential pauses between them (Poisson arrivals, seeded: the same schedule for every
mode) and starts at a random offset. It prints, per mode and client count:

- replies/s: replies finished over the wall time of the round;
- first audio p50/p95: request sent -> first ``audio-chunk`` (the gap guard is off,
  ``--max-gap 0``, so that chunk is speech, never keep-alive silence);
- aggregate RTF: wall time of the round over the seconds of audio it returned.

Usage (from the repository root)::

    python -m benchmarks.concurrency --model-dir tests/fixtures/models/tiny --device cpu
    python -m benchmarks.concurrency --model-dir MODEL --device cuda --clients 1 2 4 8 16 \\
        --replies 8 --json out.json

``--modes step`` (or ``batch``) measures one mode only; ``--server-arg=--precision=fp16``
(repeatable) passes flags to both servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from benchmarks import bench_server

#: Short Home Assistant replies, all different (a mixed batch, as in real use).
REPLIES = (
    "Turned on the kitchen lights.",
    "The living room is at twenty-one degrees.",
    "Done.",
    "The front door is locked.",
    "It will rain tomorrow afternoon.",
    "Set a timer for ten minutes.",
    "The garage door is open.",
    "Playing music in the bedroom.",
    "The washing machine has finished.",
    "Good morning! It is seven thirty.",
    "I turned off three lights.",
    "The heating is set to nineteen degrees.",
)
READ_TIMEOUT_S = 600.0


@dataclass
class Reply:
    first_audio_s: float
    total_s: float
    audio_s: float


async def one_reply(uri: str, text: str) -> Reply:
    async with AsyncClient.from_uri(uri) as client:
        started = time.perf_counter()
        await client.write_event(Synthesize(text=text).event())
        first = None
        audio_bytes = 0
        rate, width = 24000, 2
        while True:
            event = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
            if event is None:
                raise ConnectionError("the server closed the connection")
            if event.type == "error":
                raise RuntimeError(f"server error: {event.data}")
            if event.type == "audio-start":
                rate, width = event.data.get("rate", rate), event.data.get("width", width)
            elif event.type == "audio-chunk":
                if first is None:
                    first = time.perf_counter() - started
                audio_bytes += len(event.payload or b"")
            elif event.type == "audio-stop":
                break
        total = time.perf_counter() - started
    return Reply(first if first is not None else total, total, audio_bytes / width / rate)


def schedule(clients: int, replies: int, mean_gap_s: float, seed: int
             ) -> list[list[tuple[float, str]]]:
    """Per client: (pause before the request, text); the same for every mode."""
    rng = random.Random(seed * 1000 + clients)
    plan = []
    for client in range(clients):
        pauses = [rng.uniform(0, mean_gap_s)] + [rng.expovariate(1 / mean_gap_s)
                                                  for _ in range(replies - 1)]
        texts = [REPLIES[(client * replies + i) % len(REPLIES)] for i in range(replies)]
        plan.append(list(zip(pauses, texts, strict=True)))
    return plan


async def run_round(uri: str, plan: list[list[tuple[float, str]]]) -> dict[str, Any]:
    results: list[Reply] = []

    async def client(steps: list[tuple[float, str]]) -> None:
        for pause, text in steps:
            await asyncio.sleep(pause)
            results.append(await one_reply(uri, text))

    started = time.perf_counter()
    await asyncio.gather(*(client(steps) for steps in plan))
    wall = time.perf_counter() - started
    firsts = sorted(r.first_audio_s for r in results)
    audio = sum(r.audio_s for r in results)
    return {
        "replies": len(results),
        "wall_s": wall,
        "replies_per_s": len(results) / wall,
        "first_audio_p50_s": statistics.median(firsts),
        "first_audio_p95_s": firsts[min(len(firsts) - 1, round(0.95 * (len(firsts) - 1)))],
        "aggregate_rtf": wall / audio if audio else float("inf"),
        "total_p50_s": statistics.median(r.total_s for r in results),
    }


def table(results: dict[str, dict[int, dict[str, Any]]], clients: list[int]) -> str:
    modes = list(results)
    head = f"{'clients':>7} | " + " | ".join(
        f"{mode + ': replies/s  1st p50  1st p95    RTF':>42}" for mode in modes)
    lines = [head, "-" * len(head)]
    for count in clients:
        cells = []
        for mode in modes:
            r = results[mode][count]
            cells.append(f"{'':>{len(mode) + 2}}{r['replies_per_s']:>9.2f} "
                         f"{r['first_audio_p50_s']:>7.3f}s {r['first_audio_p95_s']:>7.3f}s "
                         f"{r['aggregate_rtf']:>6.3f}")
        lines.append(f"{count:>7} | " + " | ".join(f"{c:>42}" for c in cells))
    return "\n".join(lines)


async def measure(args: argparse.Namespace, uris: dict[str, str]) -> dict[str, Any]:
    results: dict[str, dict[int, dict[str, Any]]] = {mode: {} for mode in uris}
    for uri in uris.values():  # every graph once, outside the figures
        await one_reply(uri, REPLIES[0])
    for index, count in enumerate(args.clients):
        plan = schedule(count, args.replies, args.mean_gap_s, args.seed)
        order = list(uris.items())
        for mode, uri in order[::-1] if index % 2 else order:  # no mode always first
            results[mode][count] = await run_round(uri, plan)
            r = results[mode][count]
            print(f"{mode:>5} x{count:<2}: {r['replies_per_s']:.2f} replies/s, first audio "
                  f"p50 {r['first_audio_p50_s']:.3f} s p95 {r['first_audio_p95_s']:.3f} s, "
                  f"RTF {r['aggregate_rtf']:.3f}", flush=True)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    parser.add_argument("--num-steps", type=int, default=None,
                        help="diffusion steps (default: the device's)")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--replies", type=int, default=4, help="replies per client and round")
    parser.add_argument("--mean-gap-s", type=float, default=0.5,
                        help="mean pause between a client's replies (exponential)")
    parser.add_argument("--max-batch-size", type=int, default=16)
    parser.add_argument("--modes", nargs="+", default=["batch", "gated", "step"],
                        choices=["batch", "gated", "step"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="a flag for both servers (repeat; --server-arg=--precision=fp32)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp"))
    args = parser.parse_args(argv)
    most = max(args.clients)
    # No background anchors (only the default voice's, before ready): a steady state.
    extra = ["--max-gap", "0", "--max-batch-size", str(args.max_batch_size),
             "--max-concurrent", str(max(16, most)), "--max-connections", str(4 * most + 8),
             "--preload-languages", "none", *args.server_arg]
    processes = []
    uris: dict[str, str] = {}
    try:
        for mode in args.modes:
            process, uri = start(args, extra, args.log_dir / f"concurrency-{mode}.log",
                                 {"WYOMING_OMNIVOICE_SCHEDULING": mode})
            processes.append(process)
            uris[mode] = uri
        results = asyncio.run(measure(args, uris))
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(60)
            except Exception:
                process.kill()
    print()
    print(f"model {args.model_dir}, device {args.device}, {args.replies} replies per client, "
          f"mean pause {args.mean_gap_s} s, max batch {args.max_batch_size}")
    print(table(results, args.clients))
    if args.json is not None:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "results": results}, indent=2))


def start(args: argparse.Namespace, extra: list[str], log: Path, env: dict[str, str]
          ) -> tuple[Any, str]:
    """A server on a free loopback port, once it says it is ready."""
    port = bench_server._free_port()
    uri = f"tcp://127.0.0.1:{port}"
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-data-"))
    steps = ["--num-steps", str(args.num_steps)] if args.num_steps else []
    command = [sys.executable, "-m", "wyoming_omnivoice", "--uri", uri, "--model-dir",
               str(args.model_dir), "--device", args.device, "--data-dir", str(data_dir),
               *steps, *extra]
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = log.open("wb")
    process = subprocess.Popen(command, cwd=bench_server.REPO_ROOT, stdout=handle,
                               stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1", **env})
    started = time.perf_counter()
    while "Ready" not in log.read_text(errors="replace"):
        if process.poll() is not None:
            raise SystemExit(f"server exited:\n{log.read_text(errors='replace')}")
        if time.perf_counter() - started > 1800:
            process.kill()
            raise SystemExit("server not ready after 30 min")
        time.sleep(0.2)
    print(f"server ready in {time.perf_counter() - started:.1f} s (log {log})", flush=True)
    return process, uri


if __name__ == "__main__":
    main()
