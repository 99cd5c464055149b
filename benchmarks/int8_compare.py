"""The streamed int8 preparation against onnxruntime's ``quantize_dynamic`` at one model's
size: files byte for byte, time and peak memory of each (``python -m benchmarks.smallhost
--compare-int8``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def compare_int8(model: Path, work: Path) -> None:
    """The streamed int8 files against onnxruntime's, each in its own process."""
    script = ("import resource, sys, time; from pathlib import Path\n"
              "from wyoming_omnivoice.engine.offline.prepare import rewrite_backbone\n"
              "from wyoming_omnivoice.engine.offline import int8_onnxruntime as o\n"
              "from wyoming_omnivoice.engine.offline import int8_streaming as s\n"
              "src, out = Path(sys.argv[2]), Path(sys.argv[3]); out.mkdir(parents=True)\n"
              "start = time.perf_counter(); model, _ = rewrite_backbone(src)\n"
              "fn = s.quantize_int8 if sys.argv[1] == 'stream' else o.quantize_int8_onnxruntime\n"
              "fn(model, src.parent, out / 'backbone.onnx')\n"
              "print(f'{time.perf_counter() - start:.1f} '\n"
              "      f'{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9:.2f}')\n")
    source = model / "llm_backbone_fp32.onnx"
    outputs = {}
    for way in ("stream", "onnxruntime"):
        out = work / f"int8-{way}"
        shutil.rmtree(out, ignore_errors=True)
        done = subprocess.run([sys.executable, "-c", script, way, str(source), str(out)],
                              check=True, capture_output=True, text=True, cwd=REPO)
        seconds, peak = done.stdout.split()
        outputs[way] = out
        print(f"  {way:12s} {seconds:>7s} s  peak resident {peak} GB")
    for name in ("backbone.onnx", "backbone.onnx.data"):
        same = _same_file(outputs["stream"] / name, outputs["onnxruntime"] / name)
        print(f"  {name}: {'identical' if same else 'DIFFERENT'} "
              f"({(outputs['stream'] / name).stat().st_size} bytes)")


def _same_file(a: Path, b: Path) -> bool:
    with a.open("rb") as one, b.open("rb") as two:
        while True:
            x, y = one.read(1 << 24), two.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True
