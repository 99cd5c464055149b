#!/usr/bin/env python3
"""Upstream OmniVoice in PyTorch on the same random weights: the GPU check's side by side.

    python -m tools.gpu.upstream MODEL_DIR --device cuda --json OUT.json

``MODEL_DIR/upstream`` is the torch model saved by ``tools/build_fixtures.py`` (same weights
as the ONNX graphs). Measures what ``figures.py`` measures for our engine: backbone
forward ms at 96/150/300 positions, first audio of the short reply (``generate``, p50/p95),
single-stream RTF, aggregate RTF of 8 requests in one ``_generate_iterative`` batch. It
runs in its own process (call 1 of the check), so torch and onnxruntime never share a GPU
context.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from tools.gpu.figures import BATCH_TEXTS, POSITIONS, SHORT, percentile
from tools.upstream_torch import Upstream
from wyoming_omnivoice import DecodeOptions

SAMPLE_RATE = 24000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    upstream = Upstream(args.model_dir / "upstream", args.device, args.threads)
    import torch

    hidden = upstream.model.config.llm_config.hidden_size
    device = upstream.device
    name = torch.cuda.get_device_name(0) if device == "cuda" else "cpu"
    figures: dict[str, Any] = {"device": f"{device} ({name})", "steps": args.steps,
                               "torch": torch.__version__,
                               "note": f"fp32, TF32 matmul {torch.backends.cuda.matmul.allow_tf32}"}
    print(f"upstream on {figures['device']}, torch {torch.__version__}, {figures['note']}")
    forward = {}
    for length in POSITIONS:
        upstream.backbone_forward(1, length, hidden)
        times = [upstream.backbone_forward(1, length, hidden) for _ in range(args.repeats)]
        forward[str(length)] = 1000 * statistics.median(times)
        print(f"  forward at {length:>3} positions: {forward[str(length)]:8.2f} ms")
    options = DecodeOptions(num_step=args.steps)
    first, rtf = [], []
    for _ in range(args.repeats):
        wave, took = upstream.generate(SHORT, options)
        first.append(took)
        rtf.append(took / max(wave.size / SAMPLE_RATE, 1e-9))
    p50, p95 = 1000 * percentile(first, 0.5), 1000 * percentile(first, 0.95)
    print(f"  first audio (generate, short reply): p50 {p50:.1f} ms, p95 {p95:.1f} ms; "
          f"RTF {statistics.median(rtf):.4f}")
    aggregate = []
    texts = [BATCH_TEXTS[i % len(BATCH_TEXTS)] for i in range(8)]
    for rep in range(3):
        codes, took, _ = upstream.codes(texts, options, seed=rep)
        # codes only (no vocoder): a lower bound of upstream's time for 8 requests
        seconds = sum(c.shape[-1] for c in codes) * 960 / SAMPLE_RATE
        aggregate.append(took / seconds)
    print(f"  aggregate RTF, 8 requests in one batch (codes only): "
          f"{statistics.median(aggregate):.4f}")
    figures.update(forward_ms=forward, first_audio_p50_ms=p50, first_audio_p95_ms=p95,
                   rtf_single=statistics.median(rtf), rtf_aggregate_8=statistics.median(aggregate),
                   seconds=time.perf_counter() - started)
    args.json.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"upstream figures in {args.json} ({figures['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
