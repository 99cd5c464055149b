"""The int8 backbone's 7-bit weights (``reduce_range``, today's) beside the former 8-bit ones,
in one run: backbone forward time, hidden-state cosine and first-step code agreement with
fp32.

Why it exists: on an x86 CPU without AVX-VNNI, onnxruntime's u8 x s8 kernel adds pairs of
products into a saturating int16, which 8-bit weights overflow; the codes then depend on the
host (``engine/offline/int8_streaming.py``). Run it natively, and under an emulated CPU
without VNNI to see that host::

    python -m benchmarks.int8_weight_bits --model-dir bench-out/real-random
    qemu-x86_64 -cpu Haswell "$(command -v python)" -m benchmarks.int8_weight_bits

(the tiny model by default; qemu-user from Debian's ``qemu-user`` package). The 8-bit
variant is made by the same streaming quantizer with ``WEIGHT_MAX = 127``, in its own
folder under ``--work``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.bench_targets import SHORT_REPLY, TWO_SENTENCES, _packed_feeds
from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.offline import int8_streaming
from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers

REPO = Path(__file__).resolve().parents[1]
TEXTS = (SHORT_REPLY, *TWO_SENTENCES, "Good night.", "Hello world, this is a test.")
ONE_STEP = DecodeOptions(num_step=1, position_temperature=0.0, class_temperature=0.0)


def cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines()
                  if line.startswith("flags")), [])
    vnni = [f for f in flags if "vnni" in f]
    return ("AVX2 " if "avx2" in flags else "") + (" ".join(vnni) if vnni else "no VNNI")


def build(model: Path, work: Path) -> dict[str, Path]:
    """Prepared roots: fp32, int8 with 8-bit weights, int8 with 7-bit weights."""
    roots = {"fp32": work / "fp32", "int8 8-bit": work / "int8-8bit",
             "int8 7-bit": work / "int8-7bit"}
    prepare_backbone(model, "fp32", root=roots["fp32"])
    kept = int8_streaming.WEIGHT_MAX
    try:
        int8_streaming.WEIGHT_MAX = 127
        prepare_backbone(model, "int8", root=roots["int8 8-bit"])
    finally:
        int8_streaming.WEIGHT_MAX = kept
    prepare_backbone(model, "int8", root=roots["int8 7-bit"])
    return roots


def forwards(model: Path, roots: dict[str, Path], lengths: list[int], repeats: int) -> None:
    providers = choose_providers("cpu")
    graphs = {}
    for name, root in roots.items():
        found = prepare_backbone(model, name.split()[0], root=root)
        graphs[name] = Graph(found.path, providers, model_bytes=found.model_bytes(),
                             external_data_dir=found.weights_dir, label=name)
    hidden = int(graphs["fp32"].inputs["inputs_embeds"].shape[-1])
    print(f"\n== Backbone forward ms, one packed row (interleaved, median of {repeats}) ==")
    print(f"{'positions':>9}" + "".join(f"{n:>13}" for n in graphs)
          + "".join(f"{'cos ' + n[5:]:>13}" for n in graphs if n != "fp32"))
    for length in lengths:
        feeds = _packed_feeds(hidden, length)
        out = {n: g.run(feeds, ["hidden_states"])[0].astype(np.float64).ravel()
               for n, g in graphs.items()}
        times: dict[str, list[float]] = {n: [] for n in graphs}
        for _ in range(repeats):
            for name, graph in graphs.items():
                start = time.perf_counter()
                graph.run(feeds, ["hidden_states"])
                times[name].append(time.perf_counter() - start)
        base = out["fp32"]
        cosines = [float(out[n] @ base / (np.linalg.norm(out[n]) * np.linalg.norm(base)))
                   for n in graphs if n != "fp32"]
        print(f"{length:>9}" + "".join(f"{1000 * statistics.median(times[n]):>13.1f}"
                                       for n in graphs)
              + "".join(f"{c:>13.5f}" for c in cosines))


def agreement(model: Path, roots: dict[str, Path]) -> None:
    engines = {name: Engine.load(model, device="cpu", precision=name.split()[0],
                                 prepared_dir=root) for name, root in roots.items()}
    reference = {text: engines["fp32"].generate_codes(text, options=ONE_STEP)
                 for text in TEXTS}
    print(f"\n== First-step codes equal to fp32's ({len(TEXTS)} texts, deterministic) ==")
    for name, engine in engines.items():
        if name == "fp32":
            continue
        same = count = 0
        for text, codes in reference.items():
            mine = engine.generate_codes(text, options=ONE_STEP)
            same += int(np.sum(mine == codes))
            count += codes.size
        print(f"{name:>12}: {100 * same / count:.1f} % of {count}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path,
                        default=REPO / "tests" / "fixtures" / "models" / "tiny")
    parser.add_argument("--work", type=Path, default=None,
                        help="where the three prepared backbones go (default: a temporary "
                             "folder, removed at the end)")
    parser.add_argument("--lengths", default="150,300")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-agreement", action="store_true",
                        help="forwards only (the code agreement loads three engines and "
                             "decodes: minutes under an emulated CPU at the real size)")
    args = parser.parse_args(argv)
    print(f"CPU (/proc/cpuinfo: the host's, also under an emulator): {cpu_flags()}; "
          f"model {args.model_dir}")
    with tempfile.TemporaryDirectory(prefix="int8-bits-") as tmp:
        work = args.work or Path(tmp)
        roots = build(args.model_dir, work)
        forwards(args.model_dir, roots, [int(n) for n in args.lengths.split(",")],
                 args.repeats)
        if not args.no_agreement:
            agreement(args.model_dir, roots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
