"""The GPU check cannot pass by mistake, and its kit's pieces work (all on CPU).

* the real check script, run as a subprocess on this CPU-only onnxruntime, reports FAIL and
  exits non-zero, whether asked for CUDA or for a CPU dry run;
* the device and placement gates fail on every silent-fallback shape;
* the wheel kit: parts split, carried to a store, joined and checked by sha256 (a corrupt or
  missing part is refused); the fat-binary stripper keeps only the wanted architecture;
* the one-command flow: ``check.sh all`` on a cold machine says what to rerun; the device
  call(s) planned from the tree and kit sizes; precisions detected; the summary judges each
  figure against its target and passes only when every gate passes; the continuous-batching
  section is one adjustable call (and "not present" without it).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tools.gpu import carry, fatbin, figures, sched, targets
from tools.gpu import kit as gpu_kit
from tools.gpu.engine import detect_precisions
from tools.gpu.gates import CUDA_PROVIDER, device_verdict, placement_verdict

REPO = Path(__file__).resolve().parents[2]

TINY = REPO / "tests" / "fixtures" / "models" / "tiny"
CPU = "CPUExecutionProvider"


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tools.gpu.figures", str(TINY), *args],
        capture_output=True, text=True, timeout=300, env=env, cwd=REPO)


# -- the check fails without CUDA -------------------------------------------------------
def test_check_asked_for_cuda_fails_on_a_cpu_onnxruntime() -> None:
    done = run_check("--device", "cuda", "--gates-only")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "[FAIL] device is CUDA" in out
    assert "GPU CHECK FAIL" in out
    assert "GPU CHECK PASS" not in out


@pytest.mark.slow
def test_dry_run_on_cpu_reports_fail_but_prints_figures() -> None:
    done = run_check("--device", "cpu", "--gates-only", "--repeats", "2", "--requests", "2",
                     "--steps", "2")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "[FAIL] device is CUDA" in out
    assert f"[FAIL] node placement, fp32 backbone: {CPU}" in out
    assert "forward fp32 at  96 positions" in out
    assert "GPU CHECK FAIL" in out


# -- the gates --------------------------------------------------------------------------
def test_device_gate_needs_provider_engine_and_every_session() -> None:
    cuda = [CUDA_PROVIDER, CPU]
    assert device_verdict([CUDA_PROVIDER, CPU], "cuda",
                          {"backbone": cuda, "vocoder": cuda}).ok
    assert not device_verdict([CPU], "cpu", {"backbone": [CPU]}).ok
    # the silent fallback: onnxruntime-gpu installed, but a session fell back to the CPU
    fallback = device_verdict([CUDA_PROVIDER, CPU], "cuda", {"backbone": cuda,
                                                             "vocoder": [CPU]})
    assert not fallback.ok and "vocoder" in fallback.detail
    assert not device_verdict([CUDA_PROVIDER, CPU], "cpu", {"backbone": cuda}).ok


def test_placement_gate_reads_every_node() -> None:
    on_cuda = [(CUDA_PROVIDER, "MatMul", "mm"), (CUDA_PROVIDER, "Softmax", "sm")]
    assert placement_verdict("x", on_cuda).ok
    memcpy = placement_verdict("x", [*on_cuda, (CUDA_PROVIDER, "MemcpyToHost", "copy")])
    assert not memcpy.ok and memcpy.figures["memcpy"] == 1
    shape_on_cpu = placement_verdict("x", [*on_cuda, (CPU, "Shape", "shape")])
    assert not shape_on_cpu.ok and shape_on_cpu.figures["off_cuda_ops"] == {"Shape": 1}
    # fp32/fp16: shape arithmetic on the CPU provider is known (no Memcpy); nothing else is
    known = [*on_cuda, (CPU, "Concat", "c"), (CPU, "Slice", "s")]
    assert placement_verdict("x", known, shape_nodes_known=True).ok
    assert placement_verdict("x", known, shape_nodes_known=True).figures[
        "known_shape_nodes"] == 2
    assert not placement_verdict("x", [*known, (CPU, "MatMul", "m")],
                                 shape_nodes_known=True).ok
    assert not placement_verdict("x", [*known, (CUDA_PROVIDER, "MemcpyToHost", "copy")],
                                 shape_nodes_known=True).ok
    assert not placement_verdict("x", []).ok
    assert not placement_verdict("x", "placement unavailable: no API").ok


def test_placement_of_a_real_cpu_session_fails_the_gate() -> None:
    from wyoming_omnivoice.engine.runtime.onnx_sessions import (
        Graph,
        ProviderChoice,
        node_placement,
    )

    graph = Graph(TINY / "llm_backbone_fp32.onnx", ProviderChoice("cpu", (CPU,)),
                  record_placement=True)
    placed = node_placement(graph.session)
    verdict = placement_verdict("tiny", placed)
    assert placed and not verdict.ok
    assert verdict.figures["providers"] == {CPU: len(placed)}


# -- the kit: parts, sums, join ---------------------------------------------------------
def make_archive(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    files = {"pkg/__init__.py": b"VALUE = 1\n",
             "pkg/lib.so": np.random.default_rng(0).bytes(300_000)}
    src = tmp_path / "src"
    for name, data in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes(data)
    archive = tmp_path / "ort.tar.xz"
    gpu_kit.pack(src, archive)
    return archive, files


def test_parts_split_stash_join_extract(tmp_path: Path) -> None:
    archive, files = make_archive(tmp_path)
    call1, call2 = tmp_path / "call1", tmp_path / "call2"
    parts = gpu_kit.split(archive, [call1, call2], [1000, archive.stat().st_size - 1000])
    assert parts[0].stat().st_size == 1000
    store = tmp_path / "store"
    gpu_kit.stash(call1, store)
    with pytest.raises(gpu_kit.KitError, match=r"ort\.tar\.xz\.part-2"):
        gpu_kit.join(store, "ort.tar.xz")  # only call 1 arrived
    gpu_kit.stash(call2, store)
    data = gpu_kit.join(store, "ort.tar.xz")
    assert hashlib.sha256(data).hexdigest() == gpu_kit.sha256_of(archive)
    site = tmp_path / "site"
    gpu_kit.extract(data, site)
    for name, content in files.items():
        assert (site / name).read_bytes() == content


def test_a_corrupt_part_is_refused(tmp_path: Path) -> None:
    archive, _ = make_archive(tmp_path)
    call1, call2 = tmp_path / "call1", tmp_path / "call2"
    part1, _part2 = gpu_kit.split(archive, [call1, call2])
    data = bytearray(part1.read_bytes())
    data[10] ^= 0xFF
    part1.write_bytes(bytes(data))
    with pytest.raises(gpu_kit.KitError, match="sha256"):
        gpu_kit.stash(call1, tmp_path / "store")


def test_pack_is_reproducible(tmp_path: Path) -> None:
    archive, _ = make_archive(tmp_path)
    (tmp_path / "src" / "pkg" / "lib.so").chmod(0o600)  # modes differ between unpackings
    again = tmp_path / "again.tar.xz"
    gpu_kit.pack(tmp_path / "src", again)
    assert archive.read_bytes() == again.read_bytes()
    with tarfile.open(fileobj=io.BytesIO(__import__("lzma").decompress(again.read_bytes()))) \
            as tar:
        assert {m.mtime for m in tar.getmembers()} == {0}


def test_pins_are_refused_when_a_wheel_differs(tmp_path: Path) -> None:
    (tmp_path / "a.whl").write_bytes(b"x")
    with pytest.raises(gpu_kit.KitError, match="sha256"):
        gpu_kit.check_pins(tmp_path, {"a.whl": "0" * 64})
    with pytest.raises(gpu_kit.KitError, match="missing"):
        gpu_kit.check_pins(tmp_path, {"b.whl": "0" * 64})


def test_kit_targets_python_312() -> None:
    assert "cp312" in gpu_kit.ORT_WHEEL
    assert all("cp311" not in name for name in gpu_kit.PINS)


# -- fat binaries ----------------------------------------------------------------------
def fat_entry(arch: int, payload: bytes) -> bytes:
    header = bytearray(64)
    struct.pack_into("<HHIQ", header, 0, 2, 0x0101, 64, len(payload))
    struct.pack_into("<I", header, 28, arch)
    return bytes(header) + payload


def fat_binary(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", fatbin.FATBIN_MAGIC, 1, 16, len(body)) + body


def tiny_elf(section: bytes) -> bytes:
    """A little-endian ELF64 with a section-name table and a .nv_fatbin section."""
    names = b"\0.shstrtab\0.nv_fatbin\0"
    names_off = 64
    fat_off = (names_off + len(names) + 7) // 8 * 8
    sh_off = (fat_off + len(section) + 7) // 8 * 8
    header = bytearray(64)
    header[:8] = b"\x7fELF\x02\x01\x01\x00"
    struct.pack_into("<Q", header, 0x28, sh_off)
    struct.pack_into("<HHH", header, 0x3A, 64, 3, 1)
    def sh(name: int, offset: int, size: int) -> bytes:
        entry = bytearray(64)
        struct.pack_into("<II", entry, 0, name, 1)
        struct.pack_into("<QQ", entry, 0x18, offset, size)
        return bytes(entry)
    body = bytearray(header) + names
    body += bytes(fat_off - len(body)) + section
    body += bytes(sh_off - len(body))
    body += bytes(64) + sh(1, names_off, len(names)) + sh(11, fat_off, len(section))
    return bytes(body)


def test_fatbin_keeps_only_the_wanted_architecture(tmp_path: Path) -> None:
    sm80, sm90, other = b"A" * 200, b"B" * 120, b"C" * 80
    mixed = fat_binary(fat_entry(80, sm80), fat_entry(90, sm90))
    lone = fat_binary(fat_entry(80, other))
    section = mixed + lone
    elf = tiny_elf(section)
    source, target = tmp_path / "in.so", tmp_path / "out.so"
    source.write_bytes(elf)
    assert fatbin.main([str(source), str(target), "--keep", "90"]) == 0
    out = target.read_bytes()
    assert len(out) == len(elf)
    offset, size = fatbin.find_section(out, ".nv_fatbin")
    found = fatbin.scan(out[offset:offset + size])
    assert [[(e.arch, e.length) for e in f.entries] for f in found] == \
        [[(90, 64 + len(sm90))], [(80, 64 + len(other))]]
    first = found[0].entries[0]
    payload = out[offset + first.offset + 64: offset + first.offset + first.length]
    assert payload == sm90
    assert b"A" not in out  # the sm_80 kernel of the mixed binary is gone (zeroed)
    assert other in out  # a binary with no sm_90 entry stays as it was
    assert fatbin.verify(out, {90}) == 0


def run_script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OUT": str(tmp_path / "out"), "GPU_WORK": str(tmp_path / "work"),
           "GPU_KIT": str(tmp_path / "no-kit"), "PYTHON": sys.executable}
    return subprocess.run(["bash", str(REPO / "tools" / "gpu" / "check.sh"), *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)


def test_all_on_a_cold_machine_says_to_rerun_stash(tmp_path: Path) -> None:
    done = run_script(tmp_path, "all")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Rerun check.sh stash, then check.sh all AT ONCE" in done.stdout
    assert "kit part 1 is not on this machine" in \
        (tmp_path / "out" / "check.log").read_text()


def test_check_script_names_its_verbs(tmp_path: Path) -> None:
    done = run_script(tmp_path, "call1")
    assert done.returncode == 2
    assert "stash|all|dry-run" in done.stderr


# -- what the device calls carry ---------------------------------------------------------
MIB = 2**20


def test_one_call_when_tree_and_kit_fit() -> None:
    (call,) = carry.plan_calls(10 * MIB, 25 * MIB, 25 * MIB, time_left=900)
    assert call.startswith('run(command="PRECISIONS=fp16-fused,fp16,fp32 TIME_LEFT=720 '
                           'bash tools/gpu/check.sh all"')
    assert '"local/gpu-kit/call1", "local/gpu-kit/call2"' in call and "timeout_s=600" in call


def test_two_calls_when_this_projects_tree_and_kit_do_not_fit() -> None:
    """The first call builds and prepares the model; the second's deadline follows the
    device time left (its limit too, at most a command's 600 s)."""
    stash, full = carry.plan_calls(int(22.4 * MIB), int(28.7 * MIB), int(28.7 * MIB),
                                   time_left=900)
    assert "check.sh stash" in stash and '["local/gpu-kit/call1"]' in stash
    assert f"timeout_s={carry.STASH_TIMEOUT_S}" in stash
    left = 900 - carry.START_S - carry.STASH_TIMEOUT_S
    assert f"TIME_LEFT={left} bash tools/gpu/check.sh all" in full
    assert '["local/gpu-kit/call2"]' in full and f"timeout_s={left - 30}" in full
    assert carry.all_call(2000)[1] == 600 and carry.all_call(100)[1] == 70


def test_no_call_when_a_part_cannot_travel_beside_the_tree() -> None:
    assert carry.plan_calls(40 * MIB, 29 * MIB, 29 * MIB) == []


def test_the_tree_that_travels_is_measured_from_git() -> None:
    files = carry.tree_files()
    assert REPO / "tools" / "gpu" / "check.sh" in files
    assert not any(".venv" in f.parts or f.relative_to(REPO).parts[0] == "local"
                   for f in files)


# -- precisions, figures, summary -------------------------------------------------------
def test_precisions_present_are_detected_and_the_rest_reported(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from wyoming_omnivoice.engine.runtime import precision
    monkeypatch.setattr(precision, "VARIANTS", ("fp32", "int8", "fp16", "fp16-fused", "bf9"))
    assert detect_precisions("cuda") == ["fp32", "fp16", "fp16-fused", "bf9"]
    assert "precision fp32-fused: not present" in capsys.readouterr().out
    assert detect_precisions("cpu", report=False) == ["fp32", "bf9"]


def test_phase_table_reads_whatever_stats_the_engine_has() -> None:
    @dataclass
    class Stats:
        total_s: float = 0.5
        backbone_s: float = 0.2
        steps: int = 32
        extra: dict[str, float] = field(default_factory=lambda: {"vocoder_s": 0.1})

    class FakeEngine:
        last_stats = Stats()

    table = figures.phases(FakeEngine(), 0.8)  # type: ignore[arg-type]
    assert table == pytest.approx({"total_ms": 500.0, "backbone_ms": 200.0,
                                   "vocoder_s_ms": 100.0, "outside_decode_ms": 300.0})
    assert figures.phases(object(), 1.0) == {}  # type: ignore[arg-type]


def test_summary_rows_judge_each_figure_against_its_target() -> None:
    measured = {"fp16": {"forward_ms": {"96": 1.5}, "first_audio_p50_ms": 120.0,
                         "rtf_single": 0.03},
                "fp16-fused": {"rtf_single": 0.01},
                "server": {"replies_per_s_8": 15.0}}
    rows = {r[0]: r for r in targets.summary_rows(measured, ["fp16", "fp16-fused"])}
    assert rows["forward at 96 positions (fp16)"][2:] == ("1.5 ms", "3.96 ms", "MET")
    assert rows["first audio p50, short reply, engine (fp16)"][-1] == "MISSED"
    assert rows["forward at 96 positions (fp16-fused)"][2:] == (
        "not measured", "not measured", "not measured")
    assert rows["vs upstream FlashInfer single-stream RTF (best precision)"][2:] == (
        "0.01", "behind", "AHEAD")
    assert rows["vs skwid replies/s at 8 concurrent (best precision)"][-1] == "AHEAD"
    assert rows["8 concurrent clients, replies/s (server)"][-1] == "MET"


def summary_of(tmp_path: Path, verdicts: list[dict[str, object]]) -> tuple[int, str]:
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    (out / "figures.json").write_text(json.dumps({
        "fp16": {"placement": {}, "forward_ms": {"96": 1.0}}, "verdicts": verdicts}))
    done = subprocess.run([sys.executable, "-m", "tools.gpu.summary", str(out)],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    return done.returncode, done.stdout


def test_summary_passes_only_when_every_gate_passes(tmp_path: Path) -> None:
    gates = [{"name": "device is CUDA, fp16 engine", "ok": True, "detail": "-"},
             {"name": "node placement, fp16 backbone", "ok": True, "detail": "-"},
             {"name": "CUDA graph capture in every bucket, fp16", "ok": True, "detail": "-"}]
    rc, out = summary_of(tmp_path, gates)
    assert rc == 0 and "GPU CHECK PASS" in out and "continuous batching" in out
    assert "forward at 96 positions (fp16)" in out
    gates[1]["ok"] = False
    rc, out = summary_of(tmp_path, gates)
    assert rc == 1 and "GPU CHECK FAIL: gates failed: node placement, fp16 backbone" in out
    rc, out = summary_of(tmp_path, [])
    assert rc == 1 and "no gate ran" in out


def test_continuous_batching_is_one_adjustable_call(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    class Concurrency:
        @staticmethod
        def main(argv: list[str]) -> int:
            calls.append(argv)
            raw = Path(argv[argv.index("--json") + 1])
            # benchmarks.concurrency's own JSON: figures per mode, then per client count
            raw.write_text(json.dumps({"results": {
                mode: {count: {"replies_per_s": rate * count, "first_audio_p50_s": 0.1,
                               "aggregate_rtf": 0.02} for count in (1, 16)}
                for mode, rate in (("batch", 1.0), ("step", 2.0))}}))
            return 0

    result = sched.run_concurrency(Concurrency, TINY, "cpu", 8, (1, 16),
                                   tmp_path / "concurrency.json", "fp16")
    assert result["header"][0] == "clients" and "step: replies/s" in result["header"]
    assert result["rows"] == [[1, 1.0, 0.1, 0.02, 2.0, 0.1, 0.02],
                              [16, 16.0, 0.1, 0.02, 32.0, 0.1, 0.02]]
    assert calls and "--clients" in calls[0] and "--server-arg=--precision=fp16" in calls[0]
    assert "--server-arg=--canonical-anchors=never" in calls[0]
    assert sched.CLIENTS == (1, 4, 16)

    class Exits:
        @staticmethod
        def main(argv: list[str]) -> int:
            raise SystemExit("server exited")

    with pytest.raises(RuntimeError, match="server exited"):
        sched.run_concurrency(Exits, TINY, "cpu", 8, (1,), tmp_path / "x.json")

    def missing(name: str) -> object:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(sched.importlib, "import_module", missing)
    out = tmp_path / "c.json"
    assert sched.main([str(TINY), "--device", "cpu", "--json", str(out)]) == 0
    assert "not present" in json.loads(out.read_text())["status"]


@pytest.mark.slow
def test_server_benchmark_runs_end_to_end_on_the_cpu(tmp_path: Path) -> None:
    out = tmp_path / "server.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.server_gpu", "--model-dir", str(TINY), "--device",
         "cpu", "--num-steps", "2", "--rounds", "1", "--clients", "2",
         "--requests-per-client", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    got = json.loads(out.read_text())
    for key in ("first_audio_p50_ms", "stream_first_audio_ms", "stream_total_ms",
                "replies_per_s_2"):
        assert got[key] > 0


def test_the_summary_runs_when_the_model_cannot_be_built(tmp_path: Path) -> None:
    env = {**os.environ, "OUT": str(tmp_path / "out"), "GPU_WORK": str(tmp_path / "work"),
           "GPU_KIT": str(tmp_path / "no-kit"), "PYTHON": sys.executable,
           "LAYERS_DRY": "not-a-number"}
    done = subprocess.run(["bash", str(REPO / "tools" / "gpu" / "check.sh"), "dry-run"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=REPO)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no model: nothing to measure" in done.stdout
    assert "== summary" in done.stdout and "GPU CHECK FAIL" in done.stdout
    assert (tmp_path / "out" / "check.log").read_text().count("GPU CHECK FAIL") == 1
