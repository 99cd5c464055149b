#!/usr/bin/env python3
"""Prepare the backbone variants the GPU check loads, on the CPU, before any GPU minute.

    python -m tools.gpu.prepare MODEL_DIR [--variants auto|fp32,fp16] [--jobs N]

``auto``: every GPU precision this engine prepares (``tools.gpu.engine.detect_precisions``:
fp32, fp16 and the fused ones when present). ``--jobs`` prepares that many variants at once,
each in its own process (the GPU machine has 16 cores; a variant that fails is reported and
the others go on).

With the engine's preparation (``wyoming_omnivoice.engine.offline.prepare``) each variant is made
beside the model as the server would at first start; an engine without it gets
``llm_backbone_fp16.onnx`` from ``python -m wyoming_omnivoice.convert --fp16``.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--variants", default="fp32,fp16")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.variants == "auto":
        from tools.gpu.engine import detect_precisions

        args.variants = ",".join(detect_precisions("cuda"))
    variants = args.variants.split(",")
    if args.jobs > 1 and len(variants) > 1:
        return in_parallel(args.model_dir, variants, args.jobs)
    try:
        prepare = importlib.import_module("wyoming_omnivoice.engine.offline.prepare")
    except ImportError:
        prepare = None
    for variant in variants:
        started = time.perf_counter()
        if prepare is not None:
            from wyoming_omnivoice.engine.store.model_files import ModelPaths

            made = prepare.prepare_backbone(ModelPaths.from_dir(args.model_dir), variant)
            where = getattr(made, "path", made)
        elif variant == "fp16":
            target = args.model_dir / "llm_backbone_fp16.onnx"
            if not target.is_file():
                subprocess.run([sys.executable, "-m", "wyoming_omnivoice.convert", "--fp16",
                                str(args.model_dir), "--no-verify"], check=True)
            where = target
        else:
            where = args.model_dir / "llm_backbone_fp32.onnx"  # published file, as is
        print(f"{variant}: {where} ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


def in_parallel(model_dir: Path, variants: list[str], jobs: int) -> int:
    """One process per variant, ``jobs`` at a time; their output as each one ends."""
    started = time.perf_counter()
    pending = list(variants)
    running: dict[str, subprocess.Popen[str]] = {}
    failed: list[str] = []
    while pending or running:
        while pending and len(running) < jobs:
            variant = pending.pop(0)
            running[variant] = subprocess.Popen(
                [sys.executable, "-m", "tools.gpu.prepare", str(model_dir), "--variants",
                 variant], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for variant, process in list(running.items()):
            if process.poll() is None:
                continue
            out = process.stdout.read() if process.stdout else ""
            print(out.rstrip() or f"{variant}: (no output)", flush=True)
            if process.returncode:
                failed.append(variant)
                print(f"{variant}: FAILED (exit {process.returncode})", flush=True)
            del running[variant]
        time.sleep(0.2)
    print(f"prepared {len(variants) - len(failed)}/{len(variants)} variants in "
          f"{time.perf_counter() - started:.1f} s" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
