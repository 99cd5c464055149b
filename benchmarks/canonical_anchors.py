"""What a canonical anchor costs at the first start on a CPU, against a serving-precision one.

Each mode runs in a fresh process on a folder of links to ``--model-dir`` (prepared
backbones go to a private cache folder, so the model folder is left alone):

- ``serving``: today's CPU anchor, the int8 backbone at 16 steps (the CPU defaults);
- ``canonical``: the fp32 backbone at 32 steps, onnxruntime's packed weights (anonymous);
- ``canonical-mapped``: the same with ``prepack=False``: the weights stay in onnxruntime's
  memory map of the weights file (file-backed pages, which the kernel can drop).

For each: engine load time, the default voice's anchor time, and ``VmRSS``/``RssAnon``/
``VmHWM`` after the load and after the anchor (plus the sampled peak of ``RssAnon``). The
canonical modes' codes are compared (they must be the same anchor).

    python -m benchmarks.canonical_anchors --model-dir bench-out/real-random
    python -m benchmarks.canonical_anchors --model-dir ... --modes canonical-mapped --limit-gb 1.5

``--limit-gb`` runs each mode inside a memory cgroup of that size (root only): whether the
mapped fp32 backbone still decodes when its weights cannot all stay in memory, and at what
speed (the kernel drops and re-reads the mapped pages). Page cache is charged to the cgroup
that first reads a page, so give it a model folder whose backbone weights no one has read
yet: links to the model's files but a copy of ``llm_backbone_fp32.onnx.data`` written past
the cache (``dd if=... of=... bs=16M oflag=direct``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODES = {
    "serving": {"precision": "int8", "num_step": 16, "prepack": True},
    "canonical": {"precision": "fp32", "num_step": 32, "prepack": True},
    "canonical-mapped": {"precision": "fp32", "num_step": 32, "prepack": False},
}


def _status() -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            values[name] = int(rest.split()[0]) * 1024
    return values


def _one(mode: str, model_dir: Path, cache: Path, voice: str) -> dict[str, object]:
    """Runs in the child: load, build one anchor, report."""
    from wyoming_omnivoice import DecodeOptions, Engine
    from wyoming_omnivoice.anchors.cache import ANCHOR_SEED, anchor_text_for
    from wyoming_omnivoice.voices.config import build_catalog

    settings = MODES[mode]
    peak = {"anon": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak["anon"] = max(peak["anon"], _status().get("RssAnon", 0))

    threading.Thread(target=sample, daemon=True).start()
    preset = build_catalog().get(voice)
    assert preset is not None
    began = time.perf_counter()
    engine = Engine.load(model_dir, device="cpu", precision=str(settings["precision"]),
                         cache_dir=cache, prepack=bool(settings["prepack"]))
    load_s = time.perf_counter() - began
    after_load = _status()
    began, cpu = time.perf_counter(), time.process_time()
    codes = engine.generate_codes(anchor_text_for(preset), language=preset.language,
                                  instruct=preset.instruct, speed=preset.speed,
                                  options=DecodeOptions(num_step=int(settings["num_step"])),
                                  seed=ANCHOR_SEED)
    anchor_s = time.perf_counter() - began
    cpu_s = time.process_time() - cpu
    after = _status()
    done.set()
    return {"mode": mode, "load_s": load_s, "anchor_s": anchor_s, "anchor_cpu_s": cpu_s,
            "after_load": after_load, "after_anchor": after, "peak_anon": peak["anon"],
            "frames": int(codes.shape[1]), "codes": codes.tolist(),
            "load_average": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--voice", default="en-female-young")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--limit-gb", type=float, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one(args.child, args.model_dir, args.cache, args.voice)))
        return
    with tempfile.TemporaryDirectory(prefix="canonical-anchors-") as tmp:
        links = Path(tmp) / "model"
        links.mkdir()
        for item in Path(args.model_dir).iterdir():
            if item.name != "prepared":
                (links / item.name).symlink_to(item.resolve())
        results = []
        for mode in args.modes.split(","):
            group = None
            if args.limit_gb is not None:
                from tests.memory_limit import MemoryCgroup

                group = MemoryCgroup.create("canonical-anchors", int(args.limit_gb * 1e9))
                if group is None:
                    raise SystemExit(f"no memory cgroup: {MemoryCgroup.unavailable}")
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.canonical_anchors", "--model-dir",
                 str(links), "--voice", args.voice, "--child", mode, "--cache",
                 str(Path(tmp) / "cache")], check=False, capture_output=True, text=True,
                preexec_fn=group.preexec() if group else None)
            if group is not None:
                kills = group.oom_kills()
                group.close()
                print(f"{mode:>17}: inside {args.limit_gb} GB: exit {out.returncode}, "
                      f"{kills} OOM kill(s)", flush=True)
            if out.returncode:
                print(out.stderr[-2000:])
                continue
            result = json.loads(out.stdout.strip().splitlines()[-1])
            results.append(result)
            gb = 1e9
            a, b = result["after_load"], result["after_anchor"]
            print(f"{mode:>17}: load {result['load_s']:5.1f} s, anchor {result['anchor_s']:6.1f}"
                  f" s ({result['anchor_cpu_s']:.0f} CPU-s, {result['frames']} frames); after "
                  f"load VmRSS {a['VmRSS'] / gb:.2f} RssAnon {a['RssAnon'] / gb:.2f} GB; after "
                  f"the anchor VmRSS {b['VmRSS'] / gb:.2f} RssAnon {b['RssAnon'] / gb:.2f} "
                  f"RssFile {b['RssFile'] / gb:.2f} VmHWM {b['VmHWM'] / gb:.2f} GB; peak "
                  f"RssAnon {result['peak_anon'] / gb:.2f} GB (load average "
                  f"{result['load_average']:.1f})", flush=True)
        canonical = [r for r in results if str(r["mode"]).startswith("canonical")]
        if len(canonical) == 2:
            same = canonical[0]["codes"] == canonical[1]["codes"]
            print(f"canonical codes packed vs mapped: {'identical' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
