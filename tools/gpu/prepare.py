#!/usr/bin/env python3
"""Prepare the backbone variants the GPU check loads, on the CPU, before any GPU minute.

    python -m tools.gpu.prepare MODEL_DIR [--variants fp32,fp16]

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
    args = parser.parse_args(argv)
    try:
        prepare = importlib.import_module("wyoming_omnivoice.engine.offline.prepare")
    except ImportError:
        prepare = None
    for variant in args.variants.split(","):
        started = time.perf_counter()
        if prepare is not None:
            from wyoming_omnivoice.engine.model_files import ModelPaths

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


if __name__ == "__main__":
    sys.exit(main())
