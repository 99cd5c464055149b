"""benchmarks/capacity.py: the replica arithmetic on bench_server.py-shaped results."""

from __future__ import annotations

import math

from benchmarks import capacity


def bench_result(ttfa_by_clients: dict[int, list[float]], total_s: float) -> dict:
    result: dict = {"model_dir": "m", "num_steps": 32}
    for clients, ttfa in ttfa_by_clients.items():
        runs = [{"ttfa_s": value, "total_s": total_s, "audio_s": 2.0, "cycles": 1}
                for value in ttfa]
        result[f"throughput x{clients}"] = {"wall_s": 10.0, "requests": len(runs),
                                            "audio_s": 2.0 * len(runs), "runs": runs}
    return result


def test_capacity_is_the_highest_concurrency_within_the_target() -> None:
    points = capacity.load_points(bench_result(
        {1: [0.2] * 10, 4: [0.5] * 9 + [0.9], 8: [1.5] * 10}, total_s=2.0))
    assert [p.clients for p in points] == [1, 4, 8]
    assert capacity.replica_capacity(points, 1.0).clients == 4
    assert capacity.replica_capacity(points, 0.8).clients == 1
    assert capacity.replica_capacity(points, 0.1) is None


def test_poisson_quantile_and_replicas() -> None:
    assert capacity.poisson_quantile(0.0, 0.99) == 0
    # P(Poisson(1) <= 3) = 0.981, <= 4: 0.996
    assert capacity.poisson_quantile(1.0, 0.99) == 4
    # large means: the normal approximation stays close to mean + 2.33 sd
    assert abs(capacity.poisson_quantile(10000.0, 0.99) - (10000 + 2.326 * 100)) < 5
    point = capacity.LoadPoint(clients=4, requests_per_s=2.0, ttfa_p50_s=0.3, ttfa_p95_s=0.5,
                               mean_total_s=1.8)
    erlangs, peak, replicas = capacity.replicas_needed(100, 20.0, point, 0.99, spare=1)
    assert math.isclose(erlangs, 100 * 20 * 1.8 / 3600)  # 1.0 Erlang
    assert peak == 4
    assert replicas == 1 + 1
