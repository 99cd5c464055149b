"""The opt-in prefix cache against the exact decode, side by side in one run.

    python -m benchmarks.bench_prefix_cache --model-dir bench-out/real-random
    python -m benchmarks.bench_engine --model-dir DIR --precision int8 --steps 16 \\
        --no-upstream --sections prefix_cache --prefix-cache 2,4,8

For an anchored short reply and a longer one (a 3 s anchor decoded first, as a designed
voice's): the exact decode and ``DecodeOptions(prefix_cache=N)`` for each N, interleaved
per repeat so machine load hits all alike, the same seed each time. Printed (medians):
the prompt's positions and the constant prefix, backbone and whole-decode seconds, the
speed-up over exact, and code agreement: the share of the ``[8, T]`` codes equal to the
exact decode's. For scale, the agreement of the exact decode with another seed.

On random weights the codes are noise and small changes cascade through the unmasking
order, so agreement says how far the cache moves a decode, not how it sounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine

ANCHOR_TEXT = "Hello! This is how my voice sounds when I read aloud."
ANCHOR_FRAMES = 75  # 3 s, the default anchor's length
REPLIES = {
    "short": "The living room lights are now turned on.",
    "longer": "Good morning. Today will be mostly sunny with a high of twenty four degrees.",
}


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def forward_ms(engine: Engine, text: str, anchor: np.ndarray, frames: int, repeats: int
               ) -> dict[str, float]:
    """Median ms of one backbone forward on the reply's conditional grid: exact, a refresh
    (the cache graph over every position) and a cached step (from the first target column
    on), interleaved."""
    from wyoming_omnivoice.engine.forward.layouts import Batch

    prompt = engine.prompts.build(text, num_target=frames, language="en", instruct=None,
                                  ref_text=ANCHOR_TEXT, ref_codes=anchor)
    batch = Batch([prompt], engine.decoder.layout_for([prompt]))
    grid = batch.grids[0]
    (embeds,) = engine.decoder.embeddings.run(
        {"input_ids": grid.ids, "audio_mask": grid.audio_mask}, ["inputs_embeds"])
    cached = engine.decoder.cached_backbone()  # type: ignore[misc]
    start = int(batch.target_cells(grid)[1].min())
    tail_embeds = np.ascontiguousarray(embeds[:, start:])
    tail_mask = np.ascontiguousarray(grid.mask[:, :, start:, :])
    times: dict[str, list[float]] = {"exact": [], "refresh": [], "cached": []}
    for _ in range(repeats):
        began = time.perf_counter()
        engine.decoder.run_backbone(grid, embeds)
        times["exact"].append(time.perf_counter() - began)
        began = time.perf_counter()
        _, presents = cached.full(embeds, grid.mask)
        cache = [np.ascontiguousarray(p[:, :, :start]) for p in presents]
        times["refresh"].append(time.perf_counter() - began)
        began = time.perf_counter()
        cached.tail(tail_embeds, tail_mask, start, cache)
        times["cached"].append(time.perf_counter() - began)
    return {key: 1000 * statistics.median(values) for key, values in times.items()}


def section_prefix_cache(engine: Engine, intervals: list[int], steps: int, repeats: int,
                         report: dict[str, Any]) -> None:
    """Exact vs prefix cache every N steps; figures into ``report["prefix_cache"]``."""
    print(f"\n== Prefix cache ({engine.precision}, {steps} steps, 3 s anchor; load average "
          f"{os.getloadavg()[0]:.1f}) ==")
    base = DecodeOptions(num_step=steps)
    anchor = engine.generate_codes(ANCHOR_TEXT, language="en", num_frames=ANCHOR_FRAMES,
                                   options=base, seed=1)
    rss = _rss_mib()
    # The cache's session is loaded on first use: load and warm it before timing.
    engine.generate_codes(REPLIES["short"], language="en", ref_codes=anchor,
                          ref_text=ANCHOR_TEXT, options=DecodeOptions(num_step=2,
                                                                      prefix_cache=2))
    cache_mib = _rss_mib() - rss
    configs = [0, *intervals]
    runs: dict[tuple[str, int], list[tuple[float, float, np.ndarray]]] = {}
    shape: dict[str, tuple[int, int, str]] = {}
    for _ in range(repeats):
        for name, text in REPLIES.items():
            for every in configs:
                codes = engine.generate_codes(
                    text, language="en", ref_codes=anchor, ref_text=ANCHOR_TEXT, seed=3,
                    options=DecodeOptions(num_step=steps, prefix_cache=every))
                stats = engine.last_stats
                runs.setdefault((name, every), []).append(
                    (stats.backbone_s, stats.total_s, codes))
                prompt = engine.prompts.build(text, num_target=codes.shape[1], language="en",
                                              instruct=None, ref_text=ANCHOR_TEXT,
                                              ref_codes=anchor)
                shape[name] = (stats.length, prompt.length - codes.shape[1], stats.layout)
    other_seed = {name: engine.generate_codes(text, language="en", ref_codes=anchor,
                                              ref_text=ANCHOR_TEXT, seed=4, options=base)
                  for name, text in REPLIES.items()}
    print(f"load average after: {os.getloadavg()[0]:.1f}; the cache's session added "
          f"{cache_mib:.0f} MiB resident")
    print(f"{'reply':>7} {'layout':>6} {'pos':>4} {'prefix':>6} {'config':>8} {'backbone s':>10} "
          f"{'decode s':>8} {'speed-up':>8} {'agreement':>9}")
    figures: dict[str, Any] = {"cache_session_mib": cache_mib}
    for name in REPLIES:
        exact_codes = runs[(name, 0)][0][2]
        exact_total = statistics.median(r[1] for r in runs[(name, 0)])
        positions, prefix, layout = shape[name]
        for every in configs:
            values = runs[(name, every)]
            backbone = statistics.median(r[0] for r in values)
            total = statistics.median(r[1] for r in values)
            agreement = float(np.mean(values[0][2] == exact_codes))
            label = "exact" if every == 0 else f"N={every}"
            print(f"{name:>7} {layout:>6} {positions:>4} {prefix:>6} {label:>8} {backbone:>10.2f} "
                  f"{total:>8.2f} {exact_total / total:>7.2f}x {agreement:>9.1%}")
            figures[f"{name} {label}"] = {"backbone_s": backbone, "decode_s": total,
                                          "agreement": agreement, "positions": positions,
                                          "prefix": prefix, "layout": layout}
        ms = forward_ms(engine, REPLIES[name], anchor, exact_codes.shape[1], 2 * repeats + 1)
        print(f"{name:>7} one forward of grid 0 (median of {2 * repeats + 1}): exact "
              f"{ms['exact']:.0f} ms, refresh {ms['refresh']:.0f} ms, cached step "
              f"{ms['cached']:.0f} ms ({ms['cached'] / ms['exact']:.2f}x)")
        figures[f"{name} forward ms"] = ms
        chance = float(np.mean(other_seed[name] == exact_codes))
        print(f"{name:>7} {'':>6} {'':>4} {'':>6} {'seed 4':>8} {'':>10} {'':>8} {'':>8} "
              f"{chance:>9.1%}  (exact, another seed: the scale of agreement)")
        figures[f"{name} other seed agreement"] = chance
    report["prefix_cache"] = figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=Path("bench-out/real-random"))
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--prefix-cache", default="2,4,8",
                        help="refresh intervals to compare with the exact decode")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--prepared-dir", type=Path, default=None,
                        help="where the prepared backbone goes (default: beside the model)")
    args = parser.parse_args()
    engine = Engine.load(args.model_dir, device="cpu", precision=args.precision,
                         prepared_dir=args.prepared_dir)
    engine.warm_up()
    print(f"model {args.model_dir} ({engine.precision}); {os.cpu_count()} CPUs")
    section_prefix_cache(engine, [int(v) for v in args.prefix_cache.split(",")], args.steps,
                         args.repeats, {})


if __name__ == "__main__":
    main()
