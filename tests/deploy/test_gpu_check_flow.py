"""The GPU check's flow, on the CPU: the dry run measures the new path first and writes
every section's JSON; each precision's gates are read on their own; figures never carry the
label of a precision the engine does not run."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.gpu import figures

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "models" / "tiny"


def test_each_precisions_gates_are_read_on_their_own() -> None:
    from tools.gpu.summary import gates_by_precision

    verdicts = [{"name": "device is CUDA, fp16-fused engine", "ok": True},
                {"name": "node placement, fp16-fused backbone", "ok": True},
                {"name": "device is CUDA, fp16 engine", "ok": True},
                {"name": "node placement, fp16 backbone", "ok": False},
                {"name": "CUDA graph capture in every bucket, fp16", "ok": True}]
    assert gates_by_precision(verdicts, ["fp16-fused", "fp16", "fp32"]) == [
        ("fp16-fused", "PASS", "PASS", "-"), ("fp16", "PASS", "FAIL", "PASS"),
        ("fp32", "-", "-", "-")]


def test_figures_never_carry_the_label_of_another_precision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that runs another precision than the one asked for (a variant that could
    not be prepared falls back): a failed gate, and no figure under the name asked for."""
    from wyoming_omnivoice import Engine

    fallback = Engine.load(TINY, device="cpu", precision="published")
    monkeypatch.setattr(figures, "load_engine", lambda *args, **kwargs: fallback)
    args = argparse.Namespace(model_dir=TINY, device="cpu", json=tmp_path / "f.json",
                              max_bucket=512, repeats=1, steps=1, requests=1)
    verdicts: list[figures.Verdict] = []
    measured: dict[str, object] = {}
    assert figures.measure_precision(args, "fp32", verdicts, measured) is None
    (verdict,) = verdicts
    assert not verdict.ok and verdict.name.startswith("device is CUDA")
    assert "runs 'published', not 'fp32'" in verdict.detail
    ours = measured["fp32"]
    assert isinstance(ours, dict) and ours["runs"] == "published"
    assert not {"placement", "forward_ms", "first_audio_p50_ms"} & set(ours)


@pytest.mark.slow
def test_the_dry_run_measures_the_new_path_first_and_writes_every_figure(
        tmp_path: Path) -> None:
    """The whole flow on the CPU with a small random model (about 2 minutes): the sections
    in the order the device time needs (the fused precision's figures, the step loops,
    continuous batching, then the others, agreement, server, summary), and the JSON each
    section writes."""
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "GPU_WORK": str(tmp_path / "work"),
           "GPU_KIT": str(tmp_path / "no-kit"), "PYTHON": sys.executable,
           "PRECISIONS": "fp32-fused,fp32"}
    done = subprocess.run(["bash", str(REPO / "tools" / "gpu" / "check.sh"), "dry-run"],
                          capture_output=True, text=True, timeout=900, env=env, cwd=REPO)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    log = (out / "check.log").read_text()
    assert log.count("GPU CHECK FAIL") == 1 and "SKIPPED" not in log
    starts = [line.split("== ", 1)[1] for line in log.splitlines()
              if line.startswith("[") and "] == " in line]
    order = ["model", "prepare", "figures: fp32-fused", "devstep", "continuous batching",
             "figures: fp32 on", "agreement", "server end to end", "summary"]
    found = [next(i for i, start in enumerate(starts) if start.startswith(name))
             for name in order]
    assert found == sorted(found), starts
    got = json.loads((out / "figures.json").read_text())
    assert got["fp32-fused"]["runs"] == "fp32-fused" and got["fp32"]["runs"] == "fp32"
    assert got["fp32-fused"]["forward_ms"] and got["fp32"]["first_audio_p50_ms"] > 0
    assert "fp32-fused vs fp32" in got["agreement"] and "fp32+tf32 vs fp32" not in \
        got["agreement"]
    assert got["summary"]["rows"] and got["summary"]["pass"] is False
    sched_rows = json.loads((out / "concurrency.json").read_text())["rows"]
    assert [row[0] for row in sched_rows] == [1, 2]
    assert json.loads((out / "server.json").read_text())["first_audio_p50_ms"] > 0
    assert "host loop" in log and "device loop" in log and "codes equal True" in log
    assert "codes equal False" not in log
