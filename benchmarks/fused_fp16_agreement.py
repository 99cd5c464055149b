#!/usr/bin/env python3
"""fp16-fused against fp32: the calibration's report and the agreement, on a model's own
activations (the GPU check measures the same on CUDA).

    python -m benchmarks.random_model --out bench-out/mid --layers 4 --text-vocab 32768
    python -m benchmarks.fused_fp16_agreement --model-dir bench-out/mid

Prepares ``fp32`` and the calibrated ``fp16-fused`` (its report: the products kept float32
and the largest float16 tensor against the limit), then compares their hidden states on the
calibration feeds (the model's own embeddings of the calibration prompts, some target cells
known: what the calibration measured) and on prompts it did not see, and the codes of a
deterministic decode of a few replies. On the CPU provider the float16 products run in
float32 (no overflow can show here): the figures say what float16 storage and casts cost in
agreement; the CUDA figures are the GPU check's (``tools.gpu.figures --agreement``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline import prepare
from wyoming_omnivoice.engine.offline.calibration_prompts import (
    CalibrationRequest,
    calibration_feeds,
)
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.store.model_files import ModelPaths

UNSEEN = (CalibrationRequest("Set an alarm for a quarter past seven tomorrow morning."),
          CalibrationRequest("Bonjour, la porte du garage est fermée.", "fr"),
          CalibrationRequest("Die Heizung im Wohnzimmer ist auf einundzwanzig Grad.", "de"))
TEXTS = ("The living room lights are on.", "The front door is locked and the alarm is set.",
         "It will rain tomorrow afternoon, so take an umbrella.")


def relative(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> float:
    live = mask[:, 0].any(axis=-1)
    return float(np.abs(a - b)[live].max() / np.abs(b[live]).max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=8, help="decode steps for the codes")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    graphs = {}
    for variant in ("fp32", "fp16-fused"):
        started = time.perf_counter()
        found = prepare.prepare_backbone(args.model_dir, variant)
        print(f"{variant}: prepared in {time.perf_counter() - started:.1f} s "
              f"({found.path.parent.name})", flush=True)
        if variant == "fp16-fused":
            print(found.info.get("fp16_report", "(no calibration report)"), flush=True)
        graphs[variant] = Graph(found.path, choose_providers("cpu"),
                                model_bytes=found.model_bytes(),
                                external_data_dir=found.weights_dir, threads=args.threads)
    paths = ModelPaths.from_dir(args.model_dir)
    for label, feeds in (
            ("calibration feeds (the model's own prompts)",
             calibration_feeds(paths.embeddings, paths.tokenizer)),
            ("prompts the calibration did not see",
             calibration_feeds(paths.embeddings, paths.tokenizer, requests=UNSEEN, seed=7))):
        errors = []
        for feed in feeds:
            (exact,) = graphs["fp32"].run(feed, ["hidden_states"])
            (half,) = graphs["fp16-fused"].run(feed, ["hidden_states"])
            errors.append(relative(half, exact, feed["attention_mask"]))
        print(f"hidden states, {label}: {len(feeds)} feeds, relative error median "
              f"{np.median(errors):.2e}, largest {max(errors):.2e}; all finite "
              f"{all(np.isfinite(e) for e in errors)}", flush=True)
    graphs.clear()
    options = DecodeOptions(num_step=args.steps, position_temperature=0.0,
                            class_temperature=0.0)
    codes = {}
    for variant in ("fp32", "fp16-fused"):
        engine = Engine.load(args.model_dir, device="cpu", precision=variant,
                             threads=args.threads)
        codes[variant] = [engine.generate_codes(text, options=options) for text in TEXTS]
        del engine
    equal = [float(np.mean(a == b)) for a, b in zip(codes["fp32"], codes["fp16-fused"],
                                                      strict=True)]
    print(f"codes of {len(TEXTS)} deterministic decodes ({args.steps} steps): "
          f"{100 * float(np.mean(equal)):.2f} % equal to fp32's (per reply: "
          + ", ".join(f"{100 * e:.1f} %" for e in equal) + ")", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
