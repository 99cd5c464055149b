"""Capacity on paper: how many replicas N satellites need at a p95 first-audio target.

Two modes.

**Plan** (default): reads per-replica figures from ``bench_server.py --json`` (one replica,
throughput at 1, 2, 4, 8 ... concurrent clients) and prints, for each number of satellites,
the replicas needed::

    python -m benchmarks.bench_server --model-dir MODEL --device cuda \\
        --clients 1 2 4 8 16 --json bench.json
    python -m benchmarks.capacity bench.json --target-p95-ms 1000 --satellites 10 100 1000

The model (docs/capacity.md explains it):

- per-replica capacity ``k``: the most concurrent requests one replica served with its p95
  first audio within the target (measured points only, no extrapolation);
- offered load ``A = satellites x requests per satellite per busy hour x S / 3600``
  (Erlangs: the mean number of requests in progress), ``S`` the mean time a request holds a
  replica at that concurrency (``total_s`` of the bench);
- independent satellites make the number in progress Poisson(A) (M/G/inf), so the busy-hour
  peak is its ``--quantile`` (default 0.99) ``c``; replicas = ceil(c / k) + ``--spare``
  (default 1: one replica may be draining for an update or have failed);
- a *burst* line for "every satellite at once" (an announcement to the whole building).

**Window** (``--compare-window MODEL_DIR``): starts two servers side by side, one with
``--batch-window-ms 0`` and one with the given window, and alternates rounds between them
at each concurrency, printing first-audio p50/p95, requests per second and the ratios: what
the batching window trades (a few ms of waiting for a shared decode).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class LoadPoint:
    """One replica at ``clients`` concurrent requests."""

    clients: int
    requests_per_s: float
    ttfa_p50_s: float
    ttfa_p95_s: float
    mean_total_s: float


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def load_points(bench: dict[str, Any]) -> list[LoadPoint]:
    """The ``throughput xN`` entries of a bench_server.py JSON result."""
    points = []
    for key, entry in bench.items():
        if not key.startswith("throughput x"):
            continue
        runs = entry["runs"]
        ttfa = [run["ttfa_s"] for run in runs]
        points.append(LoadPoint(
            clients=int(key.removeprefix("throughput x")),
            requests_per_s=entry["requests"] / entry["wall_s"],
            ttfa_p50_s=statistics.median(ttfa), ttfa_p95_s=p95(ttfa),
            mean_total_s=statistics.fmean(run["total_s"] for run in runs)))
    if not points:
        raise SystemExit("no 'throughput xN' results in the bench JSON (bench_server.py "
                         "--clients 1 2 4 8 --json FILE)")
    return sorted(points, key=lambda point: point.clients)


def replica_capacity(points: list[LoadPoint], target_s: float) -> LoadPoint | None:
    """The highest measured concurrency whose p95 first audio meets the target."""
    fitting = [point for point in points if point.ttfa_p95_s <= target_s]
    return fitting[-1] if fitting else None


def poisson_quantile(mean: float, quantile: float) -> int:
    """Smallest c with P(Poisson(mean) <= c) >= quantile."""
    if mean <= 0:
        return 0
    term = cumulative = math.exp(-mean) if mean < 700 else 0.0
    if term == 0.0:  # large mean: normal approximation
        return math.ceil(mean + statistics.NormalDist().inv_cdf(quantile) * math.sqrt(mean))
    c = 0
    while cumulative < quantile:
        c += 1
        term *= mean / c
        cumulative += term
    return c


def replicas_needed(satellites: int, per_hour: float, point: LoadPoint, quantile: float,
                    spare: int) -> tuple[float, int, int]:
    """(offered load in Erlangs, peak concurrent requests, replicas) for ``satellites``."""
    erlangs = satellites * per_hour * point.mean_total_s / 3600.0
    peak = max(1, poisson_quantile(erlangs, quantile))
    return erlangs, peak, math.ceil(peak / point.clients) + spare


def plan(args: argparse.Namespace) -> None:
    target = args.target_p95_ms / 1000.0
    for path in args.bench:
        bench = json.loads(Path(path).read_text(encoding="utf-8"))
        points = load_points(bench)
        print(f"{path}: model {bench.get('model_dir', '?')}, {bench.get('num_steps', '?')} "
              "steps, one replica")
        for point in points:
            print(f"  {point.clients:3d} concurrent: {point.requests_per_s:6.2f} req/s  "
                  f"first audio p50 {point.ttfa_p50_s * 1000:7.0f} ms  "
                  f"p95 {point.ttfa_p95_s * 1000:7.0f} ms  request {point.mean_total_s:6.2f} s")
        best = replica_capacity(points, target)
        if best is None:
            print(f"  no measured concurrency meets p95 <= {args.target_p95_ms:g} ms: a "
                  "faster replica (GPU, fewer --num-steps) is needed, not more replicas")
            continue
        print(f"  capacity at p95 <= {args.target_p95_ms:g} ms: {best.clients} concurrent "
              f"requests per replica")
        print(f"  {'satellites':>10s} {'Erlangs':>8s} {'peak':>5s} {'replicas':>8s}  "
              f"(busy hour: {args.per_hour:g} requests per satellite, {args.quantile:g} "
              f"quantile, +{args.spare} spare)")
        for satellites in args.satellites:
            erlangs, peak, replicas = replicas_needed(satellites, args.per_hour, best,
                                                      args.quantile, args.spare)
            burst = math.ceil(satellites / best.clients) + args.spare
            print(f"  {satellites:10d} {erlangs:8.2f} {peak:5d} {replicas:8d}  "
                  f"(all at once: {burst})")


# --------------------------------------------------------------------------- window mode


def load_bench_server() -> ModuleType:
    """``benchmarks.bench_server``, imported only by the window comparison (the arithmetic
    mode needs neither its client nor its server start-up)."""
    from benchmarks import bench_server

    return bench_server


async def _round(bench: ModuleType, uri: str, clients: int, tag: str) -> tuple[list[float],
                                                                              float]:
    started = time.perf_counter()
    runs = await asyncio.gather(*(bench.one_shot(uri, f"{bench.SHORT_TEXT} {tag} {i}.")
                                  for i in range(clients)))
    return [run.ttfa_s for run in runs], time.perf_counter() - started


async def compare_window(args: argparse.Namespace, uris: dict[str, str]) -> None:
    bench = load_bench_server()
    for uri in uris.values():  # warm both
        await _round(bench, uri, max(args.clients), "warm")
    print(f"{'clients':>7s} {'window':>8s} {'TTFA p50':>9s} {'TTFA p95':>9s} {'req/s':>7s}")
    for clients in args.clients:
        ttfa: dict[str, list[float]] = {name: [] for name in uris}
        wall: dict[str, float] = dict.fromkeys(uris, 0.0)
        for index in range(args.rounds):  # interleaved: A B A B ...
            for name, uri in uris.items():
                values, seconds = await _round(bench, uri, clients, f"{name}-{index}")
                ttfa[name] += values
                wall[name] += seconds
        rates = {name: clients * args.rounds / wall[name] for name in uris}
        for name in uris:
            print(f"{clients:7d} {name:>8s} {statistics.median(ttfa[name]) * 1000:7.0f} ms "
                  f"{p95(ttfa[name]) * 1000:7.0f} ms {rates[name]:7.2f}")
        base, other = list(uris)
        p50_ratio = statistics.median(ttfa[other]) / statistics.median(ttfa[base])
        p95_ratio = p95(ttfa[other]) / p95(ttfa[base])
        print(f"{'':7s} {'ratio':>8s} {p50_ratio:9.2f} {p95_ratio:9.2f} "
              f"{rates[other] / rates[base]:7.2f}   ({other} / {base})")


def window(args: argparse.Namespace) -> None:
    bench = load_bench_server()
    processes = []
    uris: dict[str, str] = {}
    try:
        for window_ms in (0.0, args.window_ms):
            name = f"{window_ms:g}ms"
            log = Path(tempfile.mkdtemp(prefix="capacity-")) / "server.log"
            server_args = argparse.Namespace(
                model_dir=args.compare_window, device=args.device, num_steps=args.num_steps,
                data_dir=args.data_dir, server_args=[f"--batch-window-ms={window_ms:g}"])
            process, uri = bench.start_server(server_args, log)
            processes.append(process)
            uris[name] = uri
        asyncio.run(compare_window(args, uris))
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
            process.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", nargs="*", help="bench_server.py --json results")
    parser.add_argument("--target-p95-ms", type=float, default=1000.0)
    parser.add_argument("--satellites", type=int, nargs="+", default=[10, 50, 100, 500, 1000])
    parser.add_argument("--per-hour", type=float, default=20.0,
                        help="requests per satellite in the busy hour (default: %(default)s)")
    parser.add_argument("--quantile", type=float, default=0.99)
    parser.add_argument("--spare", type=int, default=1)
    parser.add_argument("--compare-window", type=Path, default=None, metavar="MODEL_DIR",
                        help="measure the batching window instead (two servers side by side)")
    parser.add_argument("--window-ms", type=float, default=5.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    if args.compare_window is not None:
        window(args)
    elif args.bench:
        plan(args)
    else:
        parser.error("give bench_server.py JSON results, or --compare-window MODEL_DIR")


if __name__ == "__main__":
    main()
