#!/usr/bin/env python3
"""Correctness on a CUDA machine: CUDA fp32 vs CPU fp32, fp16 vs fp32, bound/bucketed paths.

    python benchmarks/gpu_correctness.py MODEL_DIR [--steps 16] [--json OUT.json]

Prints one line per comparison: backbone hidden-state error on a real prompt layout, code
agreement of deterministic decodes and first-step (teacher-forced) argmax agreement. With
``--device cpu`` it runs the same comparisons on CPU only (dry run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from wyoming_omnivoice import DecodeOptions, Engine  # noqa: E402

TEXTS = ("The living room lights are on.", "Good morning, it is seven o'clock.",
         "The washing machine has finished.")


def hidden(engine: Engine, embeds: np.ndarray, mask: np.ndarray) -> np.ndarray:
    (out,) = engine.decoder.backbone.run({"inputs_embeds": embeds, "attention_mask": mask},
                                         ["hidden_states"])
    return out


_REFERENCE: dict[tuple[str, int], np.ndarray] = {}


def reference_codes(ref: Engine, text: str, options: DecodeOptions) -> np.ndarray:
    """The CPU fp32 decode, computed once per text and step count."""
    key = (text, options.num_step)
    if key not in _REFERENCE:
        _REFERENCE[key] = ref.generate_codes(text, options=options)
    return _REFERENCE[key]


def compare(name: str, ref: Engine, other: Engine, steps: int, embeds: np.ndarray,
            mask: np.ndarray, results: dict[str, Any]) -> None:
    h_ref, h_other = hidden(ref, embeds, mask), hidden(other, embeds, mask)
    rel = float(np.linalg.norm(h_other - h_ref) / max(np.linalg.norm(h_ref), 1e-30))
    options = DecodeOptions(num_step=steps, position_temperature=0.0, class_temperature=0.0)
    one = DecodeOptions(num_step=1, position_temperature=0.0, class_temperature=0.0)
    same = first = total = 0
    for text in TEXTS:
        a = reference_codes(ref, text, options)
        b = other.generate_codes(text, options=options)
        same += int(np.sum(a == b))
        total += a.size
        first += int(np.sum(reference_codes(ref, text, one)
                            == other.generate_codes(text, options=one)))
    results[name] = {"hidden_rel": rel, "hidden_max_abs": float(np.abs(h_other - h_ref).max()),
                     "finite": bool(np.all(np.isfinite(h_other))),
                     "code_agreement": same / total, "first_step_agreement": first / total}
    print(f"{name:<34} hidden rel {rel:.2e} max {results[name]['hidden_max_abs']:.2e} "
          f"finite {results[name]['finite']} | codes {100 * same / total:6.2f} % | "
          f"first step {100 * first / total:6.2f} %", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    dev = args.device
    cpu32 = Engine.load(args.model_dir, device="cpu")
    prompt = cpu32.prompts.build(TEXTS[0], num_target=60, language=None, instruct=None)
    (embeds,) = cpu32.decoder.embeddings.run(
        {"input_ids": prompt.ids[None], "audio_mask": prompt.audio_mask[None]},
        ["inputs_embeds"])
    length = embeds.shape[1]
    mask = np.ones((1, 1, length, length), dtype=bool)
    results: dict[str, Any] = {}
    variants = [
        (f"{dev} fp32 (bound, buckets) vs cpu fp32", dict(precision="fp32")),
        (f"{dev} fp32 plain vs cpu fp32", dict(precision="fp32", io_binding=False,
                                               buckets=False)),
        (f"{dev} fp16 vs cpu fp32", dict(precision="fp16")),
    ]
    if dev == "cuda":
        variants.append((f"{dev} fp16 cuda-graph vs cpu fp32",
                         dict(precision="fp16", cuda_graph=True)))
    for name, kwargs in variants:
        try:
            engine = Engine.load(args.model_dir, device=dev, **kwargs)
            if kwargs.get("cuda_graph"):
                print(f"(backbone CUDA graphs active: {engine.decoder.backbone.cuda_graph})")
                engine.warm_up()
            compare(name, cpu32, engine, args.steps, embeds, mask, results)
        except Exception as err:  # report every variant, even when one fails
            print(f"{name:<34} FAILED: {type(err).__name__}: {err}", flush=True)
            results[name] = {"error": f"{type(err).__name__}: {err}"}
        finally:
            engine = None
    print(f"correctness done in {time.perf_counter() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
