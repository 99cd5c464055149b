#!/usr/bin/env python3
"""Agreement between two engines: backbone hidden states and deterministic decode codes.

    python -m tools.gpu.correctness MODEL_DIR [--device cuda] [--steps 16]

Used by ``figures.py`` for fp32-CUDA vs CPU, fp16 vs fp32 and ``--allow-tf32`` vs exact
fp32. Printed per pair: relative and largest absolute hidden-state error on a real prompt
layout (150 positions, cond + uncond of a short reply), whether the outputs are finite, the
share of codes equal in deterministic decodes, and the share equal after one step.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from tools.gpu.engine import load_engine
from wyoming_omnivoice import DecodeOptions, Engine

TEXTS = ("The living room lights are on.", "Good morning, it is seven o'clock.")


def probe_inputs(engine: Engine, length: int = 150) -> dict[str, np.ndarray]:
    """Embeddings of a real prompt, cut or padded to ``length`` positions, full mask."""
    prompt = engine.prompts.build(TEXTS[0], num_target=length, language=None, instruct=None)
    (embeds,) = engine.decoder.embeddings.run(
        {"input_ids": prompt.ids[None], "audio_mask": prompt.audio_mask[None]},
        ["inputs_embeds"])
    embeds = np.ascontiguousarray(embeds[:, :length], dtype=np.float32)
    if embeds.shape[1] < length:
        pad = np.zeros((1, length - embeds.shape[1], embeds.shape[2]), np.float32)
        embeds = np.concatenate([embeds, pad], axis=1)
    mask = np.ones((1, 1, length, length), dtype=bool)
    return {"inputs_embeds": embeds, "attention_mask": mask}


def hidden(engine: Engine, feeds: dict[str, np.ndarray]) -> np.ndarray:
    (out,) = engine.decoder.backbone.run(feeds, ["hidden_states"])
    return np.asarray(out, dtype=np.float32)


_CODES: dict[tuple[int, str, int], np.ndarray] = {}


def codes_of(engine: Engine, text: str, steps: int) -> np.ndarray:
    key = (id(engine), text, steps)
    if key not in _CODES:
        options = DecodeOptions(num_step=steps, position_temperature=0.0,
                                class_temperature=0.0)
        _CODES[key] = engine.generate_codes(text, options=options, seed=0)
    return _CODES[key]


def agreement(name: str, ref: Engine, other: Engine, steps: int,
              feeds: dict[str, np.ndarray]) -> dict[str, Any]:
    """Compare ``other`` against ``ref``; prints one line and returns the figures."""
    h_ref, h_other = hidden(ref, feeds), hidden(other, feeds)
    rel = float(np.linalg.norm(h_other - h_ref) / max(float(np.linalg.norm(h_ref)), 1e-30))
    same = first = total = 0
    for text in TEXTS:
        a, b = codes_of(ref, text, steps), codes_of(other, text, steps)
        same += int(np.sum(a == b))
        total += a.size
        first += int(np.sum(codes_of(ref, text, 1) == codes_of(other, text, 1)))
    result = {"hidden_rel": rel, "hidden_max_abs": float(np.abs(h_other - h_ref).max()),
              "finite": bool(np.all(np.isfinite(h_other))), "code_agreement": same / total,
              "first_step_agreement": first / total, "steps": steps}
    print(f"  {name:<30} hidden rel {rel:.2e} max {result['hidden_max_abs']:.2e} "
          f"finite {result['finite']} | codes {100 * same / total:6.2f} % at {steps} steps"
          f" | first step {100 * first / total:6.2f} %", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    cpu32 = load_engine(args.model_dir, "cpu", "fp32")
    feeds = probe_inputs(cpu32)
    results: dict[str, Any] = {}
    for label, precision, tf32 in (("fp32", "fp32", False), ("fp32 tf32", "fp32", True),
                                   ("fp16", "fp16", False)):
        try:
            engine = load_engine(args.model_dir, args.device, precision, allow_tf32=tf32)
            results[label] = agreement(f"{args.device} {label} vs cpu fp32", cpu32, engine,
                                       args.steps, feeds)
        except Exception as err:  # report every pair, even when one fails
            print(f"  {label}: FAILED {type(err).__name__}: {err}", flush=True)
            results[label] = {"error": f"{type(err).__name__}: {err}"}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
