#!/usr/bin/env python3
"""The GPU check's engine figures (issue 30, items 7-9), one section per process.

    python -m tools.gpu.figures MODEL_DIR --device cuda --precisions fp16 --json FIG.json
    python -m tools.gpu.figures MODEL_DIR --device cuda --agreement --json FIG.json
    python -m tools.gpu.figures MODEL_DIR --device cpu --gates-only     # a CPU run FAILs

Per precision (``auto``: every backbone this engine prepares that runs on a GPU, see
``engine.detect_precisions``): the gates (onnxruntime's CUDA provider present, the engine's
device and every session's first provider CUDA; the backbone's node placement: every node
off CUDA and every Memcpy listed), CUDA graph capture and replay per length bucket, backbone
forward ms at 96/150/300 positions, first audio of a short reply at 32 steps (p50/p95),
single-stream RTF, 8 different replies in one batch and 8 copies of one reply (replies/s,
aggregate RTF, the engine's phase timers), GPU memory of the CUDA context plus this engine
after warm-up and over the requests. ``--agreement``: each precision against fp32 on the
device (and fp32 there against the CPU). Figures are merged into ``--json`` as they come,
so a section cut short keeps what it measured; ``tools.gpu.summary`` prints the verdicts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from tools.gpu.correctness import agreement, probe_inputs
from tools.gpu.engine import (
    available_providers,
    backbone_placement,
    detect_precisions,
    gpu_used_mib,
    load_engine,
    session_providers,
    time_forward,
)
from tools.gpu.gates import (
    CUDA_PROVIDER,
    GATE_PREFIXES,
    Verdict,
    device_verdict,
    placement_verdict,
)
from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

SHORT = "The living room lights are now turned on."
BATCH_TEXTS = (SHORT, "Turn on the heating in the bedroom.", "The front door is locked.",
               "It will rain tomorrow afternoon.", "Timer set for ten minutes.",
               "The garage door is closed.", "Good night, all lights are off.",
               "The kitchen is twenty one degrees.")
POSITIONS = (96, 150, 300)
def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if values else \
        float("nan")


def section(title: str) -> None:
    print(f"\n== {title} ==", flush=True)


def report(verdict: Verdict, verdicts: list[Verdict]) -> None:
    verdicts.append(verdict)
    print(verdict.line(), flush=True)


def capture_and_forwards(engine: Engine, buckets: list[int], repeats: int,
                         precision: str, figures: dict[str, Any]) -> None:
    backbone, hidden = engine.decoder.backbone, engine.hidden_size
    graphs_on = bool(getattr(backbone, "cuda_graph", False))
    print(f"backbone session with CUDA graphs: {graphs_on}")
    capture = {}
    for bucket in buckets:
        result = time_forward(backbone, bucket, hidden, 3)
        ok = "error" not in result and (not graphs_on or result.get("replay_ok", False))
        capture[bucket] = {**result, "ok": ok}
        state = "captured, replay equal" if ok and graphs_on else (
            "ran (no CUDA graphs)" if ok else f"FAILED {result.get('error', result)}")
        print(f"  bucket {bucket:>4}: {state} ({result['ms']:.2f} ms)")
    figures["capture"] = capture
    figures["capture_all_ok"] = graphs_on and all(c["ok"] for c in capture.values())
    forward = {}
    for length in POSITIONS:
        result = time_forward(backbone, length, hidden, repeats)
        forward[length] = result
        print(f"  forward {precision} at {length:>3} positions: {result['ms']:8.2f} ms "
              f"(median of {repeats}, bound, CUDA graph {result['cuda_graph']})"
              + (f" ERROR {result['error']}" if "error" in result else ""))
    figures["forward_ms"] = {str(k): v["ms"] for k, v in forward.items()}
    figures["forward_cuda_graph"] = {str(k): v["cuda_graph"] for k, v in forward.items()}


def phases(engine: Engine, wall_s: float) -> dict[str, float]:
    """The engine's own timers of its last decode (``engine.last_stats``: whatever fields
    this version has), in ms, plus the wall time outside the decode (vocoder, text)."""
    stats = getattr(engine, "last_stats", None)
    if stats is None:
        return {}
    found: dict[str, float] = {}
    values = asdict(stats) if is_dataclass(stats) and not isinstance(stats, type) else \
        dict(vars(stats))
    for name, value in values.items():
        if isinstance(value, float) and name.endswith("_s"):
            found[name[:-2] + "_ms"] = 1000 * value
        elif isinstance(value, dict):
            found.update({f"{k}_ms": 1000 * float(v) for k, v in value.items()
                          if isinstance(v, (int, float))})
    if "total_ms" in found:
        found["outside_decode_ms"] = 1000 * wall_s - found["total_ms"]
    return found


def batch_of_8(engine: Engine, texts: list[str], options: DecodeOptions, label: str,
               rounds: int) -> tuple[float, float, dict[str, float]]:
    """Median seconds and aggregate RTF of 8 requests in one ``synthesize_batch``, and the
    phase table of the last round."""
    batch = [SynthesisRequest(text=text, seed=i) for i, text in enumerate(texts)]
    took_all, rtf = [], []
    table: dict[str, float] = {}
    for _ in range(rounds):
        start = time.perf_counter()
        audios = engine.synthesize_batch(batch, options=options)
        took = time.perf_counter() - start
        took_all.append(took)
        rtf.append(took / (sum(a.size for a in audios) / engine.sample_rate))
        table = phases(engine, took)
    took_med = statistics.median(took_all)
    print(f"  {label}: {1000 * took_med:.0f} ms for 8 ({8 / took_med:.1f} replies/s), "
          f"aggregate RTF {statistics.median(rtf):.4f} (median of {rounds})")
    if table:
        print("    phases of the last round (engine.last_stats): " + ", ".join(
            f"{k} {v:.1f}" for k, v in table.items()))
    else:
        print("    phases: this engine has no last_stats")
    return took_med, statistics.median(rtf), table


def speed(engine: Engine, steps: int, repeats: int, requests: int,
          figures: dict[str, Any], checkpoint: Callable[[], None] = lambda: None) -> None:
    """First audio, RTF, the two batches of 8 and memory; each part is kept in ``figures``
    (and ``checkpoint`` called) as soon as it is measured."""
    options = DecodeOptions(num_step=steps)
    started = time.perf_counter()
    warmed = engine.warm_up()
    figures["warm_up_s"] = time.perf_counter() - started
    print(f"warm-up: {warmed} forward shapes in {figures['warm_up_s']:.1f} s; backbone keeps "
          f"CUDA graphs: {getattr(engine.decoder.backbone, 'cuda_graph', False)}")
    base = figures.get("gpu_mib_baseline", float("nan"))
    figures["gpu_mib_warm"] = gpu_used_mib() - base
    first, rtf = [], []
    for index in range(repeats):
        start = time.perf_counter()
        audio = engine.synthesize(SHORT, options=options, seed=index)
        took = time.perf_counter() - start
        first.append(took)
        rtf.append(took / (audio.size / engine.sample_rate))
    p50, p95 = 1000 * percentile(first, 0.5), 1000 * percentile(first, 0.95)
    print(f"  first audio, short reply ({len(SHORT)} chars, {steps} steps): p50 {p50:.1f} ms,"
          f" p95 {p95:.1f} ms of {repeats}; single-stream RTF {statistics.median(rtf):.4f}")
    figures.update(first_audio_p50_ms=p50, first_audio_p95_ms=p95,
                   rtf_single=statistics.median(rtf))
    checkpoint()
    rounds = max(2, min(4, repeats // 3))
    mixed_s, mixed_rtf, mixed_phases = batch_of_8(
        engine, list(BATCH_TEXTS), options, "8 different short replies at once", rounds)
    figures.update(rtf_aggregate_8=mixed_rtf, replies_per_s_8=8 / mixed_s,
                   batch_8_ms=1000 * mixed_s, phases_mixed_8=mixed_phases)
    checkpoint()
    copies_s, copies_rtf, copies_phases = batch_of_8(
        engine, [SHORT] * 8, options, "8 copies of one reply at once", rounds)
    figures.update(rtf_copies_8=copies_rtf, copies_8_ms=1000 * copies_s,
                   phases_copies_8=copies_phases)
    checkpoint()
    started = time.perf_counter()
    marks = {}
    for index in range(requests):
        engine.synthesize(BATCH_TEXTS[index % len(BATCH_TEXTS)], options=options, seed=index)
        if index + 1 in (requests // 2, requests):
            marks[index + 1] = gpu_used_mib() - base
    half, end = marks.get(requests // 2, float("nan")), marks.get(requests, float("nan"))
    print(f"  GPU memory (CUDA context + this engine): after warm-up "
          f"{figures['gpu_mib_warm']:.0f} MiB, after {requests // 2} requests {half:.0f} MiB,"
          f" after {requests} {end:.0f} MiB ({time.perf_counter() - started:.1f} s)")
    figures.update(gpu_mib_half=half, gpu_mib_end=end, gpu_mib_engine=end,
                   gpu_mib_growth=end - half, requests=requests)


def measure_precision(args: argparse.Namespace, precision: str, verdicts: list[Verdict],
                      figures: dict[str, Any]) -> Engine | None:
    section(f"{precision} backbone on {args.device}")
    graphs = True if args.device == "cuda" else None
    ours: dict[str, Any] = figures.setdefault(precision, {})
    ours["gpu_mib_baseline"] = figures.get("gpu_mib_before", float("nan"))
    started = time.perf_counter()
    try:
        engine = load_engine(args.model_dir, args.device, precision, cuda_graph=graphs)
    except Exception as err:
        report(Verdict(f"{precision} engine loads", False, f"{type(err).__name__}: {err}"),
               verdicts)
        return None
    ours["load_s"] = time.perf_counter() - started
    runs = getattr(engine, "precision", precision)
    if runs != precision:  # a fallback (a variant not prepared): no figure under this name
        report(Verdict(f"device is CUDA, {precision} engine runs {precision}", False,
                       f"the engine runs {runs!r}, not {precision!r}: its figures would "
                       "carry the wrong label; none measured"), verdicts)
        ours["runs"] = runs
        return None
    ours["runs"] = runs
    report(device_verdict(available_providers(), engine.device, session_providers(engine),
                          label=f"device is CUDA, {precision} engine"), verdicts)
    placement = placement_verdict(f"{precision} backbone", backbone_placement(engine),
                                  shape_nodes_known="fused" not in precision)
    report(placement, verdicts)
    ours["placement"] = placement.figures
    buckets = [b for b in (engine.decoder.buckets or ()) if b <= args.max_bucket]
    for name, run in (
            ("capture and forwards", lambda: capture_and_forwards(
                engine, buckets or list(POSITIONS), args.repeats, precision, ours)),
            ("first audio, RTF, batches, memory", lambda: speed(
                engine, args.steps, args.repeats, args.requests, ours,
                lambda: save(args, figures, verdicts)))):
        try:
            run()
        except Exception as err:  # keep measuring the rest
            report(Verdict(f"{precision} {name}", False, f"{type(err).__name__}: {err}"),
                   verdicts)
        save(args, figures, verdicts)
    if args.device == "cuda":
        report(Verdict(f"CUDA graph capture in every bucket, {precision}",
                       bool(ours.get("capture_all_ok")), str(ours.get("capture_all_ok"))),
               verdicts)
    return engine


def agreements(args: argparse.Namespace, precisions: list[str],
               figures: dict[str, Any]) -> None:
    """Every precision against fp32 on this device, and fp32 here against the CPU."""
    section(f"agreement (deterministic decodes, {args.agree_steps} steps)")
    cpu32 = load_engine(args.model_dir, "cpu", "fp32")
    feeds = probe_inputs(cpu32)
    agree = figures.setdefault("agreement", {})
    ref = cpu32 if args.device == "cpu" else load_engine(args.model_dir, args.device, "fp32")
    if args.device != "cpu":
        agree["fp32 vs cpu fp32"] = agreement(f"{args.device} fp32 vs cpu fp32", cpu32, ref,
                                              args.agree_steps, feeds)
    others = [p for p in precisions if p != "fp32"]
    if args.device == "cuda" and args.tf32:
        others.append("fp32+tf32")
    for precision in others:
        try:
            other = load_engine(args.model_dir, args.device, precision.split("+")[0],
                                allow_tf32=precision.endswith("tf32"))
            agree[f"{precision} vs fp32"] = agreement(
                f"{args.device} {precision} vs fp32", ref, other, args.agree_steps, feeds)
            del other
        except Exception as err:  # report every pair, even when one fails
            print(f"  {precision} vs fp32: FAILED {type(err).__name__}: {err}", flush=True)
            agree[f"{precision} vs fp32"] = {"error": f"{type(err).__name__}: {err}"}


def save(args: argparse.Namespace, figures: dict[str, Any], verdicts: list[Verdict]) -> None:
    """Merge this process's figures into ``--json`` (other sections' keys kept)."""
    if args.json is None:
        return
    merged: dict[str, Any] = {}
    if args.json.is_file():
        try:
            merged = json.loads(args.json.read_text())
        except ValueError:
            merged = {}
    old = [v for v in merged.get("verdicts", []) if v["name"] not in {x.name for x in verdicts}]
    merged.update(figures)
    merged["verdicts"] = old + [{"name": v.name, "ok": v.ok, "detail": v.detail}
                                for v in verdicts]
    args.json.write_text(json.dumps(merged, indent=1, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--agree-steps", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--max-bucket", type=int, default=512)
    parser.add_argument("--precisions", default="auto",
                        help="comma-separated, or auto: every backbone this engine has")
    parser.add_argument("--agreement", action="store_true",
                        help="only the agreement of every precision with fp32")
    parser.add_argument("--gates-only", action="store_true", help="device + placement only")
    parser.add_argument("--tf32", action="store_true",
                        help="with --agreement: fp32 with TF32 against fp32 too")
    parser.add_argument("--json", type=Path, default=None, help="merged into, not replaced")
    args = parser.parse_args(argv)
    import onnxruntime as ort

    started = time.perf_counter()
    precisions = detect_precisions(args.device) if args.precisions == "auto" else \
        args.precisions.split(",")
    verdicts: list[Verdict] = []
    figures: dict[str, Any] = {"device": args.device, "gpu_mib_before": gpu_used_mib()}
    if args.agreement:
        agreements(args, precisions, figures)
        save(args, figures, verdicts)
        return 0
    section(f"gates: device and placement (onnxruntime {ort.__version__}), precisions "
            f"{', '.join(precisions)}")
    if CUDA_PROVIDER not in ort.get_available_providers():
        report(Verdict("device is CUDA", False, f"onnxruntime has no {CUDA_PROVIDER} "
                       f"(available: {ort.get_available_providers()})"), verdicts)
        if args.device == "cuda":
            print("\nGPU CHECK FAIL: the engine is not on CUDA; no figure after this would "
                  "be a GPU figure. Stopping.")
            save(args, figures, verdicts)
            return 1
    for precision in precisions:
        engine = measure_precision(args, precision, verdicts, figures)
        del engine
        save(args, figures, verdicts)
        if args.gates_only:
            break
    gates = [v for v in verdicts if v.name.startswith(GATE_PREFIXES)]
    gates_ok = bool(gates) and all(v.ok for v in gates)
    print(f"\ngates of this section {'PASS' if gates_ok else 'FAIL'}: "
          f"{', '.join(v.name for v in gates if not v.ok) or 'none failed'}; "
          f"{time.perf_counter() - started:.0f} s")
    if args.gates_only:
        print(f"GPU CHECK {'PASS' if gates_ok else 'FAIL'}")
    return 0 if gates_ok else 1


if __name__ == "__main__":
    sys.exit(main())
