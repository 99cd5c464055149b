"""Where an anchored short reply's time goes, and what the anchor's length costs per request.

    python -m benchmarks.reply_profile --model-dir bench-out/real-random
    python -m benchmarks.reply_profile --model-dir DIR --anchors 1.5,2,3,4 --repeats 3

Loads the model with the CPU defaults (int8, 16 steps unless told otherwise), builds one
anchor per anchor length (the English anchor sentence cut to fit, decoded on that many
frames), then decodes "Done." and the short reply with each anchor, interleaved so machine
load hits all alike. Printed per anchor (medians): the prompt's positions, and the
request's seconds split into text preparation (cleanup, sentences, normalisation), prompt
building (with the anchor), embeddings, backbone, scoring, the host loop (noise, top-k,
token updates), vocoder and post-processing. The worker's queueing is its batching window
(``--batch-window-ms``, 5 ms, only when other requests are known to be coming).

The opt-in prefix cache (``--prefix-cache N``) against the exact decode, with its code
agreement, is :mod:`benchmarks.bench_prefix_cache`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine import estimate_num_frames
from wyoming_omnivoice.engine.forward.layouts import forward_cost
from wyoming_omnivoice.text.normalize import normalize_text
from wyoming_omnivoice.text.prepare import prepare_one_shot

REPLIES = {"done": "Done.", "short": "The living room lights are now turned on."}
#: Anchor texts by length in seconds: the English anchor sentence, cut or extended.
ANCHOR_TEXTS = {
    1.5: "Hello! This is my voice.",
    2.0: "Hello! This is how my voice sounds.",
    3.0: "Hello! This is how my voice sounds when I read aloud.",
    4.0: "Hello! This is how my voice sounds when I read aloud to you at home.",
}
DEFAULT_ANCHOR_S = 3.0


def _anchor(engine: Engine, seconds: float, options: DecodeOptions) -> tuple[np.ndarray, str]:
    text = ANCHOR_TEXTS.get(seconds) or ANCHOR_TEXTS[DEFAULT_ANCHOR_S]
    codes = engine.generate_codes(text, language="en", num_frames=int(seconds * 25),
                                  options=options, seed=1)
    return codes, text


def _profile(engine: Engine, text: str, anchor: tuple[np.ndarray, str] | None,
             options: DecodeOptions) -> dict[str, float]:
    """One request's seconds by stage."""
    from wyoming_omnivoice.engine.audio.postprocess import post_process
    from wyoming_omnivoice.engine.decoding.decoder import DecodeItem

    began, cpu = time.perf_counter(), time.process_time()
    pieces = prepare_one_shot(text, first_clause=True)
    spoken = normalize_text(" ".join(pieces), "en")
    t_text = time.perf_counter()
    ref_codes, ref_text = anchor if anchor is not None else (None, None)
    frames = max(engine.min_canvas_frames, estimate_num_frames(
        spoken, ref_text, None if ref_codes is None else int(ref_codes.shape[1])))
    prompt = engine.prompts.build(spoken, num_target=frames, language="en", instruct=None,
                                  ref_text=ref_text, ref_codes=ref_codes)
    t_prompt = time.perf_counter()
    (codes,) = engine.decoder.decode([DecodeItem(prompt, np.random.default_rng(3))], options)
    t_decode = time.perf_counter()
    stats = engine.last_stats
    raw = engine.decode_audio(codes)
    t_vocoder = time.perf_counter()
    post_process(raw, None)
    t_post = time.perf_counter()
    host = stats.total_s - stats.backbone_s - stats.embed_s - stats.scoring_s
    return {
        "positions": float(stats.length), "frames": float(frames),
        "cost": forward_cost(stats.grids), "cpu": time.process_time() - cpu,
        "text": t_text - began, "prompt": t_prompt - t_text, "embed": stats.embed_s,
        "backbone": stats.backbone_s, "scoring": stats.scoring_s, "host": host,
        "vocoder": t_vocoder - t_decode, "post": t_post - t_vocoder,
        "total": t_post - began,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=Path("bench-out/real-random"))
    parser.add_argument("--precision", default="int8")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--anchors", default="1.5,2,3,4",
                        help="anchor lengths in seconds (0: no anchor)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    options = DecodeOptions(num_step=args.steps)
    loaded = time.perf_counter()
    engine = Engine.load(args.model_dir, device="cpu", precision=args.precision)
    print(f"model {args.model_dir} ({engine.precision}, {args.steps} steps) loaded in "
          f"{time.perf_counter() - loaded:.0f} s; {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)
    engine.warm_up()
    lengths = [float(s) for s in args.anchors.split(",")]
    anchors = {s: (_anchor(engine, s, options) if s > 0 else None) for s in lengths}
    runs: dict[tuple[float, str], list[dict[str, float]]] = {}
    for _ in range(args.repeats):
        for seconds, anchor in anchors.items():
            for name, text in REPLIES.items():
                runs.setdefault((seconds, name), []).append(
                    _profile(engine, text, anchor, options))
    stages = ("text", "prompt", "embed", "backbone", "scoring", "host", "vocoder", "post")
    print(f"\nmedian seconds of {args.repeats} interleaved runs (load average now "
          f"{os.getloadavg()[0]:.1f}; the vocoder is the model folder's own: the tiny one "
          "in a random-weight folder)")
    print(f"{'anchor':>6} {'reply':>5} {'pos':>4} {'frames':>6} "
          + " ".join(f"{s:>8}" for s in stages)
          + f" {'total':>7} {'CPU-s':>6} {'not bb':>6} {'cost x':>6}")
    medians = {key: {k: statistics.median(v[k] for v in values) for k in values[0]}
               for key, values in runs.items()}
    for (seconds, name), med in medians.items():
        outside = 1 - med["backbone"] / med["total"]
        # The forward cost model (layouts.forward_cost): load-independent, relative to the
        # default anchor's (3 s) for the same reply.
        default = medians.get((DEFAULT_ANCHOR_S, name), med)
        print(f"{seconds:>5.1f}s {name:>5} {med['positions']:>4.0f} {med['frames']:>6.0f} "
              + " ".join(f"{med[s]:>8.3f}" for s in stages)
              + f" {med['total']:>7.2f} {med['cpu']:>6.1f} {outside:>6.1%} "
              f"{med['cost'] / default['cost']:>6.2f}")


if __name__ == "__main__":
    main()
