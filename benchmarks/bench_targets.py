"""The CPU targets of the prepared backbone (``bench_engine.py --preset real`` on the CPU).

Side by side in one run, interleaved, printing ratios (machine load moves absolute times):

1. backbone forward at 150 and 300 positions: the published fp32 file as it is, the prepared
   fp32 backbone and the prepared int8 backbone (target: int8 <= 0.5x and prepared fp32
   <= 0.9x of published), plus their hidden-state agreement and the preparation cost;
2. a short Home Assistant reply end to end (text to audio) with the CPU defaults (int8, 16
   steps) against upstream PyTorch ``generate`` at 32 steps fp32 on the same weights
   (target <= 0.2x);
3. first audio of a two-sentence reply with the CPU defaults, in seconds (the server
   speaks sentence by sentence, so first audio is the first sentence's synthesis);
4. int8 vs fp32 code agreement on these weights (first-step argmax, deterministic).
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.runtime.precision import default_num_steps
from wyoming_omnivoice.engine.store.model_files import BACKBONE

SHORT_REPLY = "The living room lights are now turned on."
TWO_SENTENCES = ("The living room lights are now turned on.",
                 "It is twenty one degrees inside and the windows are closed.")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _packed_feeds(hidden: int, length: int) -> dict[str, np.ndarray]:
    """One packed row: a conditional block and an unconditional block (60/40)."""
    rng = np.random.default_rng(length)
    cut = int(length * 0.6)
    mask = np.zeros((1, 1, length, length), dtype=bool)
    mask[0, 0, :cut, :cut] = True
    mask[0, 0, cut:, cut:] = True
    return {"inputs_embeds": rng.standard_normal((1, length, hidden)).astype(np.float32),
            "attention_mask": mask}


def section_forward(model_dir: Path, prepared_dir: Path, lengths: list[int], repeats: int,
                    threads: int | None, report: dict[str, Any]) -> None:
    providers = choose_providers("cpu")
    prepared = {}
    for variant in ("fp32", "int8"):  # before any session: a build needs the memory
        start = time.perf_counter()
        prepared[variant] = found = prepare_backbone(model_dir, variant, root=prepared_dir)
        took = time.perf_counter() - start
        cost = found.info.get("seconds")
        print(f"prepared {variant}: {found.path.parent} (this run {took:.1f} s; "
              f"built in {cost} s)")
        report.setdefault("prepare_s", {})[variant] = cost
    graphs: dict[str, Graph] = {
        "published fp32": Graph(model_dir / BACKBONE, providers, threads=threads)}
    for variant, found in prepared.items():
        graphs[f"prepared {variant}"] = Graph(
            found.path, providers, threads=threads, model_bytes=found.model_bytes(),
            external_data_dir=found.weights_dir, label=f"prepared {variant}")
    hidden = int(graphs["published fp32"].inputs["inputs_embeds"].shape[-1])
    print(f"\n== A. Backbone forward ms, one packed row (interleaved, median of {repeats}) ==")
    print(f"{'positions':>9}" + "".join(f"{name:>17}" for name in graphs)
          + f"{'fp32/pub':>10}{'int8/pub':>10}{'fp32 rel err':>14}{'int8 cosine':>13}")
    for length in lengths:
        feeds = _packed_feeds(hidden, length)
        outputs = {name: g.run(feeds, ["hidden_states"])[0] for name, g in graphs.items()}
        times: dict[str, list[float]] = {name: [] for name in graphs}
        for _ in range(repeats):
            for name, graph in graphs.items():
                start = time.perf_counter()
                graph.run(feeds, ["hidden_states"])
                times[name].append(time.perf_counter() - start)
        ms = {name: 1000 * _median(values) for name, values in times.items()}
        base = outputs["published fp32"].astype(np.float64)
        rel = float(np.linalg.norm(outputs["prepared fp32"] - base) / np.linalg.norm(base))
        q = outputs["prepared int8"].astype(np.float64).ravel()
        cosine = float(q @ base.ravel() / (np.linalg.norm(q) * np.linalg.norm(base)))
        pub = ms["published fp32"]
        print(f"{length:>9}" + "".join(f"{ms[name]:>17.1f}" for name in graphs)
              + f"{ms['prepared fp32'] / pub:>10.2f}{ms['prepared int8'] / pub:>10.2f}"
              f"{rel:>14.2e}{cosine:>13.5f}")
        report.setdefault("forward", []).append({
            "positions": length, "ms": ms, "runs": times, "fp32_relative_error": rel,
            "int8_cosine": cosine})
    del graphs
    gc.collect()


def section_reply(model_dir: Path, prepared_dir: Path, upstream_factory: Any, repeats: int,
                  threads: int | None, report: dict[str, Any]) -> None:
    steps = default_num_steps("cpu")
    ours = Engine.load(model_dir, device="cpu", precision="auto", threads=threads,
                       prepared_dir=prepared_dir)
    defaults = DecodeOptions(num_step=steps)
    exact = DecodeOptions(num_step=32)
    ours.synthesize("Warm up.", options=DecodeOptions(num_step=2))
    upstream = upstream_factory()
    print(f"\n== B. Short reply end to end ({SHORT_REPLY!r}; median of {repeats}) ==")
    print(f"ours: CPU defaults, backbone {ours.precision}, {steps} steps; upstream: PyTorch "
          "generate, fp32, 32 steps, same weights")
    mine, theirs = [], []
    for rep in range(repeats):
        start = time.perf_counter()
        audio = ours.synthesize(SHORT_REPLY, options=defaults, seed=rep)
        mine.append(time.perf_counter() - start)
        if upstream is not None:
            _, took = upstream.generate(SHORT_REPLY, exact)
            theirs.append(took)
    o, u = _median(mine), _median(theirs)
    print(f"ours {o:.2f} s | upstream {u:.2f} s | ratio {o / u:.3f} (target <= 0.2) | "
          f"audio {audio.size / ours.sample_rate:.2f} s | RTF {o / (audio.size / 24000):.2f}")
    report["short_reply"] = {"ours_s": o, "upstream_s": u, "ratio": o / u,
                             "ours_runs": mine, "upstream_runs": theirs, "steps": steps,
                             "precision": ours.precision}
    del upstream  # its memory goes before the fp32 engine loads
    gc.collect()

    print(f"\n== C. First audio of a two-sentence reply, CPU defaults (median of {repeats}) ==")
    first, total = [], []
    for rep in range(repeats):
        start = time.perf_counter()
        ours.synthesize(TWO_SENTENCES[0], options=defaults, seed=rep)
        first.append(time.perf_counter() - start)
        ours.synthesize(TWO_SENTENCES[1], options=defaults, seed=rep)
        total.append(time.perf_counter() - start)
    print(f"first audio {_median(first):.2f} s; whole reply {_median(total):.2f} s")
    report["two_sentences"] = {"first_audio_s": _median(first), "total_s": _median(total)}

    fp32 = Engine.load(model_dir, device="cpu", precision="fp32", threads=threads,
                       prepared_dir=prepared_dir)
    one = DecodeOptions(num_step=1, position_temperature=0.0, class_temperature=0.0)
    same = count = 0
    for text in (SHORT_REPLY, *TWO_SENTENCES):
        a = fp32.generate_codes(text, options=one)
        b = ours.generate_codes(text, options=one)
        same += int(np.sum(a == b))
        count += a.size
    print(f"\n== D. int8 vs fp32 first-step code agreement: {100 * same / count:.1f} % of "
          f"{count} codes ==")
    report["int8_first_step_agreement"] = same / count


def run_targets(model_dir: Path, prepared_dir: Path, upstream_factory: Any, repeats: int,
                threads: int | None, report: dict[str, Any]) -> None:
    started = time.perf_counter()
    section_forward(model_dir, prepared_dir, [150, 300], max(repeats, 2), threads, report)
    section_reply(model_dir, prepared_dir, upstream_factory, repeats, threads, report)
    print(f"\n(targets run took {time.perf_counter() - started:.0f} s)")
