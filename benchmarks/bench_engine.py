#!/usr/bin/env python3
"""Engine benchmark: our onnxruntime engine against upstream PyTorch on the same weights.

    python -m benchmarks.bench_engine --preset mid                # CPU, builds bench-out/mid
    python -m benchmarks.bench_engine --preset real --out bench-out   # CPU targets
    python -m benchmarks.bench_engine --preset real --device cuda --precision fp16
    python -m benchmarks.bench_engine --model-dir DIR --no-upstream   # any model directory

The model directory is built once with ``tools/build_fixtures.py --preset P --out DIR``
(``mid``: real width, 4 layers; ``real``: 28 layers), which also saves the upstream torch
model under ``DIR/upstream``; later runs reuse it. Printed, side by side in one run:

1. seconds per utterance, ours and upstream ``_generate_iterative``, interleaved, in
   deterministic and default (Gumbel) mode, with the ratio, the share of our time outside
   backbone calls (``engine.last_stats``) and upstream's (forward hooks on ``model.llm``);
2. backbone ms per forward by sequence length and batch (ours and torch);
3. time to first audio for a short Home Assistant reply and a long multi-sentence reply
   (ours streams sentence by sentence as the server does; upstream ``generate`` returns
   the whole text), and the real-time factor;
4. throughput with 1/4/8 concurrent requests decoded as one batch;
5. peak host memory (and GPU memory on CUDA);

and on request (``--sections prefix_cache --prefix-cache 2,4,8``) the opt-in prefix cache
against the exact decode (:mod:`bench_prefix_cache`).

``--preset real`` on the CPU without ``--sections`` runs the prepared-backbone targets instead
(:mod:`bench_targets`: published vs prepared fp32 vs int8 forwards, a short reply with the
CPU defaults vs upstream at 32 steps, first audio of a two-sentence reply), with prepared
variants stored under ``--prepared-dir`` (default ``OUT/engine/prepared``).

Figures are medians. Nothing here is a test: take final figures on a quiet machine.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_prefix_cache import section_prefix_cache
from tools.upstream_torch import Upstream
from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine import PRECISIONS
from wyoming_omnivoice.engine.forward.layouts import natural_length
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

REPO = Path(__file__).resolve().parent.parent

SHORT = "The living room lights are on and it is 21 degrees inside."
LONG = ("Good morning. Today will be mostly sunny with a high of twenty four degrees. "
        "Your first meeting starts at nine thirty in the small conference room. "
        "Remember to take the recycling out before you leave the house.")
DETERMINISTIC = DecodeOptions(position_temperature=0.0, class_temperature=0.0)
DEFAULT = DecodeOptions()

logger = logging.getLogger("bench_engine")


# -- helpers ---------------------------------------------------------------------------
def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def rss_mib() -> float:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def grid_text(engine: Engine) -> str:
    """The backbone input shapes of the last decode, e.g. ``1x420+1x317``."""
    return "+".join(f"{rows}x{length}" for rows, length in engine.last_stats.grids)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def gpu_memory_mib() -> float | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        pid, _, used = line.partition(",")
        if pid.strip() == str(os.getpid()):
            return float(used)
    return None


def split_sentences(text: str) -> list[str]:
    parts, current = [], ""
    for char in text:
        current += char
        if char in ".!?" and current.strip():
            parts.append(current.strip())
            current = ""
    if current.strip():
        parts.append(current.strip())
    return parts


def ensure_model(args: argparse.Namespace) -> Path:
    if args.model_dir is not None:
        return args.model_dir
    model_dir = args.out / args.preset
    if not (model_dir / "llm_backbone_fp32.onnx").is_file():
        logger.info("building %s model in %s (once)", args.preset, model_dir)
        subprocess.run([sys.executable, str(REPO / "tools" / "build_fixtures.py"),
                        "--preset", args.preset, "--out", str(model_dir)], check=True)
    return model_dir


# -- sections ----------------------------------------------------------------------------
def section_utterance(engine: Engine, upstream: Upstream | None, repeats: int,
                      steps: int, report: dict[str, Any]) -> None:
    print(f"\n== 1. Seconds per utterance ({steps} steps, interleaved, median of {repeats}) ==")
    print(f"{'mode':<14}{'text':<7}{'ours s':>9}{'upstr s':>9}{'ratio':>7}"
          f"{'ours out-bb':>12}{'upstr out-bb':>13}{'same codes':>11}  layout")
    for mode, base in (("deterministic", DETERMINISTIC), ("default", DEFAULT)):
        options = DecodeOptions(**{**base.__dict__, "num_step": steps})
        for label, text in (("short", SHORT), ("long", LONG)):
            ours, ours_out, theirs, theirs_out, same = [], [], [], [], []
            for rep in range(repeats):
                start = time.perf_counter()
                codes = engine.generate_codes(text, options=options, seed=rep)
                ours.append(time.perf_counter() - start)
                ours_out.append(engine.last_stats.outside_backbone_share)
                if upstream is not None:
                    ref, took, bb = upstream.codes([text], options, seed=rep)
                    theirs.append(took)
                    theirs_out.append(1 - bb / took)
                    if mode == "deterministic":
                        same.append(float(np.mean(ref[0] == codes)))
            o, u = median(ours), median(theirs)
            ratio = o / u if theirs else float("nan")
            same_txt = f"{100 * min(same):.1f} %" if same else "-"
            print(f"{mode:<14}{label:<7}{o:>9.3f}{u:>9.3f}{ratio:>7.2f}"
                  f"{100 * median(ours_out):>11.1f}%{100 * median(theirs_out):>12.1f}%"
                  f"{same_txt:>11}  {engine.last_stats.layout} {grid_text(engine)}")
            report.setdefault("utterance", []).append({
                "mode": mode, "text": label, "ours_s": o, "upstream_s": u, "ratio": ratio,
                "ours_outside_backbone": median(ours_out),
                "upstream_outside_backbone": median(theirs_out),
                "code_agreement": min(same) if same else None,
                "ours_runs": ours, "upstream_runs": theirs,
            })


def section_backbone(engine: Engine, upstream: Upstream | None, lengths: list[int],
                     batches: list[int], repeats: int, report: dict[str, Any]) -> None:
    print(f"\n== 2. Backbone ms per forward (median of {repeats}) ==")
    print("(ours: the graph as the engine loads it; file: the backbone file as published, "
          "without the load-time clean-up of graph_rewrite)")
    print(f"{'batch':>6}{'length':>8}{'ours ms':>10}{'torch ms':>10}{'ratio':>7}"
          f"{'file ms':>10}{'ours/file':>10}")
    backbone = engine.decoder.backbone
    as_published = Graph(engine.paths.backbone, engine.graphs.providers,
                         threads=engine.graphs.threads)
    hidden = engine.hidden_size
    rng = np.random.default_rng(0)
    for batch in batches:
        for length in lengths:
            embeds = rng.standard_normal((batch, length, hidden)).astype(np.float32)
            mask = np.ones((batch, 1, length, length), dtype=bool)
            feeds = {"inputs_embeds": embeds, "attention_mask": mask}
            backbone.run(feeds, ["hidden_states"])  # warm the shape
            if upstream is not None:
                upstream.backbone_forward(batch, length, hidden)
            as_published.run(feeds, ["hidden_states"])
            ours, theirs, file_graph = [], [], []
            for _ in range(repeats):
                start = time.perf_counter()
                backbone.run(feeds, ["hidden_states"])
                ours.append(time.perf_counter() - start)
                start = time.perf_counter()
                as_published.run(feeds, ["hidden_states"])
                file_graph.append(time.perf_counter() - start)
                if upstream is not None:
                    theirs.append(upstream.backbone_forward(batch, length, hidden))
            o, u, f = 1000 * median(ours), 1000 * median(theirs), 1000 * median(file_graph)
            ratio = o / u if theirs else float("nan")
            print(f"{batch:>6}{length:>8}{o:>10.1f}{u:>10.1f}{ratio:>7.2f}{f:>10.1f}{o / f:>10.2f}")
            report.setdefault("backbone", []).append(
                {"batch": batch, "length": length, "ours_ms": o, "torch_ms": u, "file_ms": f})


def section_first_audio(engine: Engine, upstream: Upstream | None, repeats: int,
                        steps: int, report: dict[str, Any]) -> None:
    options = DecodeOptions(num_step=steps)
    print(f"\n== 3. Time to first audio and RTF ({steps} steps, median of {repeats}) ==")
    print(f"{'text':<7}{'chars':>6}{'ours TTFA s':>12}{'upstr TTFA s':>13}{'ratio':>7}"
          f"{'ours RTF':>9}{'upstr RTF':>10}")
    for label, text in (("short", SHORT), ("long", LONG)):
        sentences = split_sentences(text)
        first, rtf, theirs, theirs_rtf = [], [], [], []
        for rep in range(repeats):
            start = time.perf_counter()
            audio = engine.synthesize(sentences[0], options=options, seed=rep)
            first.append(time.perf_counter() - start)
            total_audio = audio.size
            for sentence in sentences[1:]:
                total_audio += engine.synthesize(sentence, options=options, seed=rep).size
            rtf.append((time.perf_counter() - start) / (total_audio / engine.sample_rate))
            if upstream is not None:
                try:
                    wave, took = upstream.generate(text, options)
                except Exception as err:
                    logger.warning("upstream generate failed: %s", err)
                    upstream = None
                    continue
                theirs.append(took)
                theirs_rtf.append(took / max(wave.size / 24000, 1e-9))
        o, u = median(first), median(theirs)
        ratio = o / u if theirs else float("nan")
        print(f"{label:<7}{len(text):>6}{o:>12.3f}{u:>13.3f}{ratio:>7.2f}"
              f"{median(rtf):>9.3f}{median(theirs_rtf):>10.3f}")
        report.setdefault("first_audio", []).append({
            "text": label, "chars": len(text), "ours_ttfa_s": o, "upstream_ttfa_s": u,
            "ours_rtf": median(rtf), "upstream_rtf": median(theirs_rtf),
        })


def section_throughput(engine: Engine, upstream: Upstream | None, sizes: list[int],
                       steps: int, report: dict[str, Any]) -> None:
    options = DecodeOptions(num_step=steps)
    print(f"\n== 4. Throughput, N concurrent short requests as one batch ({steps} steps) ==")
    print(f"{'N':>3}{'ours s':>9}{'utt/s':>8}{'agg RTF':>9}{'upstr s':>9}{'utt/s':>8}"
          f"{'ratio':>7}{'rows x len':>12}")
    texts = [SHORT, "Turn on the heating in the bedroom.", "The front door is locked.",
             "It will rain tomorrow afternoon."]
    for size in sizes:
        batch = [texts[i % len(texts)] for i in range(size)]
        from wyoming_omnivoice import SynthesisRequest

        requests = [SynthesisRequest(text=t, seed=i) for i, t in enumerate(batch)]
        start = time.perf_counter()
        audios = engine.synthesize_batch(requests, options=options)
        took = time.perf_counter() - start
        shape = grid_text(engine)
        seconds = sum(a.size for a in audios) / engine.sample_rate
        u = float("nan")
        if upstream is not None:
            _, u, _ = upstream.codes(batch, options)
        ratio = took / u if upstream is not None else float("nan")
        print(f"{size:>3}{took:>9.3f}{size / took:>8.2f}{took / seconds:>9.3f}{u:>9.3f}"
              f"{size / u:>8.2f}{ratio:>7.2f}{shape:>12}")
        report.setdefault("throughput", []).append({
            "n": size, "ours_s": took, "aggregate_rtf": took / seconds, "upstream_s": u,
        })


def section_soak(engine: Engine, count: int, steps: int, report: dict[str, Any]) -> None:
    """Many short requests one after another: TTFA percentiles and memory drift."""
    options = DecodeOptions(num_step=steps)
    texts = [SHORT, "Turn on the heating in the bedroom.", "The front door is locked.",
             "It will rain tomorrow afternoon.", "Timer set for ten minutes."]
    gpu_start, rss_start = gpu_memory_mib(), rss_mib()
    times, rtfs = [], []
    for index in range(count):
        start = time.perf_counter()
        audio = engine.synthesize(texts[index % len(texts)], options=options, seed=index)
        took = time.perf_counter() - start
        times.append(took)
        rtfs.append(took / (audio.size / engine.sample_rate))
    gpu_end, rss_end = gpu_memory_mib(), rss_mib()
    ordered = sorted(times)
    p50, p95 = ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(0.95 * count))]
    print(f"\n== 6. Soak: {count} short replies one after another ({steps} steps) ==")
    print(f"TTFA p50 {1000 * p50:.1f} ms, p95 {1000 * p95:.1f} ms; RTF p50 {median(rtfs):.4f}; "
          f"RSS {rss_start:.0f} -> {rss_end:.0f} MiB"
          + (f"; GPU {gpu_start:.0f} -> {gpu_end:.0f} MiB" if gpu_start is not None else ""))
    report["soak"] = {"count": count, "ttfa_p50_s": p50, "ttfa_p95_s": p95,
                      "rtf_p50": median(rtfs), "rss_start_mib": rss_start,
                      "rss_end_mib": rss_end, "gpu_start_mib": gpu_start,
                      "gpu_end_mib": gpu_end}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=("mid", "real"), default="mid")
    parser.add_argument("--out", type=Path, default=REPO / "bench-out")
    parser.add_argument("--model-dir", type=Path, default=None,
                        help="use this model directory instead of building a preset")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--precision", choices=PRECISIONS,
                        default="fp32")
    parser.add_argument("--prepared-dir", type=Path, default=None,
                        help="where prepared backbones go (default: beside the model; "
                             "OUT/engine/prepared for the --preset real targets)")
    parser.add_argument("--layout", choices=("auto", "packed", "rows", "split"), default="auto")
    parser.add_argument("--io-binding", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--buckets", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction, default=None,
                        help="CUDA graphs per bucket (default: on with a prepared backbone)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=None,
                        help="runs per figure (default 3; 2 for the --preset real targets)")
    parser.add_argument("--no-upstream", action="store_true",
                        help="skip the PyTorch side (no torch, or no DIR/upstream)")
    parser.add_argument("--sections", default=None,
                        help="utterance,backbone,first_audio,throughput (the default; "
                             "prefix_cache on request; "
                             "--preset real on the CPU: the targets run)")
    parser.add_argument("--lengths", default="64,96,128,256,512")
    parser.add_argument("--batches", default="1,4")
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--prefix-cache", default="2,4,8",
                        help="refresh intervals of the prefix_cache section (exact vs "
                             "DecodeOptions(prefix_cache=N), benchmarks/bench_prefix_cache)")
    parser.add_argument("--soak", type=int, default=0,
                        help="also run N short replies back to back (TTFA p50/p95, memory)")
    parser.add_argument("--json", type=Path, default=None, help="also write figures here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logger.setLevel(logging.INFO)
    logging.getLogger("wyoming_omnivoice.engine.offline.prepare").setLevel(logging.INFO)
    model_dir = ensure_model(args)
    if args.sections is None and args.preset == "real" and args.device == "cpu" \
            and args.model_dir is None:
        return run_real_targets(args, model_dir)
    args.sections = args.sections or "utterance,backbone,first_audio,throughput"
    args.repeats = args.repeats or 3
    report: dict[str, Any] = {"model": str(model_dir), "device": args.device,
                              "precision": args.precision, "steps": args.steps}
    base_rss = rss_mib()
    start = time.perf_counter()
    engine = Engine.load(model_dir, device=args.device, precision=args.precision,
                         prepared_dir=args.prepared_dir, layout=args.layout,
                         threads=args.threads, io_binding=args.io_binding,
                         buckets=args.buckets, cuda_graph=args.cuda_graph)
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    warmed = engine.warm_up()
    warm_s = time.perf_counter() - start
    engine.generate_codes(SHORT, options=DecodeOptions(num_step=2))
    engine_rss = rss_mib() - base_rss
    upstream = None
    upstream_dir = model_dir / "upstream"
    if not args.no_upstream and upstream_dir.is_dir():
        upstream = Upstream(upstream_dir, args.device, args.threads)
    elif not args.no_upstream:
        print(f"(no {upstream_dir}: upstream columns skipped)")
    prompt = engine.prompts.build(SHORT, num_target=100, language=None, instruct=None)
    print(f"model {model_dir} | device {engine.device} | precision {args.precision} | "
          f"hidden {engine.hidden_size} | io binding {engine.decoder.runner is not None} | "
          f"buckets {bool(engine.decoder.buckets)} | load {load_s:.1f} s | warm-up "
          f"{warmed} shapes in {warm_s:.2f} s | short prompt row length "
          f"{natural_length([prompt], engine.decoder.layout_for([prompt]))}")
    report.update(load_s=load_s, warm_up_s=warm_s, engine_rss_mib=engine_rss)
    sections: dict[str, Callable[[], None]] = {
        "utterance": lambda: section_utterance(engine, upstream, args.repeats, args.steps,
                                               report),
        "backbone": lambda: section_backbone(
            engine, upstream, [int(v) for v in args.lengths.split(",")],
            [int(v) for v in args.batches.split(",")], args.repeats, report),
        "first_audio": lambda: section_first_audio(engine, upstream, args.repeats, args.steps,
                                                   report),
        "prefix_cache": lambda: section_prefix_cache(
            engine, [int(v) for v in args.prefix_cache.split(",")], args.steps, args.repeats,
            report),
        "throughput": lambda: section_throughput(
            engine, upstream, [int(v) for v in args.concurrency.split(",")], args.steps,
            report),
    }
    for name in filter(None, args.sections.split(",")):
        sections[name.strip()]()
        gc.collect()
    if args.soak:
        section_soak(engine, args.soak, args.steps, report)
    gpu = gpu_memory_mib()
    print(f"\n== 5. Memory ==\nengine load + warm-up RSS {engine_rss:.0f} MiB; process peak "
          f"RSS {peak_rss_mib():.0f} MiB (includes torch when upstream ran)"
          + (f"; GPU memory {gpu:.0f} MiB" if gpu is not None else ""))
    report.update(peak_rss_mib=peak_rss_mib(), gpu_mib=gpu)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


def run_real_targets(args: argparse.Namespace, model_dir: Path) -> int:
    from benchmarks.bench_targets import run_targets

    prepared_dir = args.prepared_dir or args.out / "engine" / "prepared"
    report: dict[str, Any] = {"model": str(model_dir), "prepared_dir": str(prepared_dir)}
    upstream_dir = model_dir / "upstream"

    def upstream() -> Upstream | None:
        if args.no_upstream or not upstream_dir.is_dir():
            print(f"(upstream skipped: {upstream_dir})")
            return None
        return Upstream(upstream_dir, "cpu", args.threads)

    run_targets(model_dir, prepared_dir, upstream, args.repeats or 2, args.threads, report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
