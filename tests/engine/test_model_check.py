"""``--check-model`` (:func:`wyoming_omnivoice.engine.check_model`): the facts a support
request needs, and exit code 1 with a ``PROBLEM:`` line for anything the engine would not
use as intended."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from batch_faults import BACKBONE, VOCODER, faulty_model
from conftest import FIXTURES, REPO_ROOT, TINY_MODEL

from wyoming_omnivoice.engine import check_model


def run_check(model: Path, tmp_path: Path, precision: str = "auto") -> tuple[int, list[str]]:
    lines: list[str] = []
    code = check_model(model, device="cpu", precision=precision, cache_dir=tmp_path,
                       write=lines.append)
    return code, lines


def test_the_tiny_model_passes_with_every_fact_printed(tiny_model: Path, tmp_path: Path
                                                       ) -> None:
    code, lines = run_check(tiny_model, tmp_path)
    text = "\n".join(lines)
    assert code == 0, text
    assert not [line for line in lines if line.startswith("PROBLEM")]
    floats = "float16" if "fp16" in tiny_model.name else "float32"
    assert f"  in  hidden_states    {floats}  [batch, seq, 64]" in lines  # the heads' input
    assert f"  out inputs_embeds    {floats}  [batch, seq, 64]" in lines
    assert "  in  attention_mask   bool     [batch, 1, seq, seq]" in lines
    assert f"text table: model.llm.embed_tokens.weight [2135, 64] {floats}" in text
    assert "backbone patterns: rotary tables 2, NaN guards 2, RMSNorm chains 9" in text
    assert "  int8: 14 MatMul weights to quantize" in lines
    assert "  fused: 2 layers read (fp32-fused, fp16-fused preparable)" in lines
    assert "engine: CPU, backbone int8, hidden 64" in text
    assert "backbone, two rows: a padded two-row forward equals its rows run alone" in text
    assert "vocoder, two rows: a two-row decode equals its rows decoded alone" in lines
    assert "one decode step: " in text
    assert lines[-1].endswith(": the engine can use this model as intended")


@pytest.mark.parametrize(("graph", "found"), [
    (BACKBONE, "PROBLEM: backbone, two rows: a padded two-row backbone forward failed"),
    (VOCODER, "PROBLEM: vocoder, two rows: a two-row decode differs from its rows decoded"),
])
def test_a_graph_that_fails_with_two_rows_is_a_problem(graph: str, found: str,
                                                       tmp_path: Path) -> None:
    model = faulty_model(TINY_MODEL, tmp_path / "tiny", graph,
                         "fails" if graph == BACKBONE else "mixes")
    code, lines = run_check(model, tmp_path, precision="published")
    assert code == 1
    assert any(line.startswith(found) for line in lines), lines
    assert lines[-1].endswith(": 1 problem(s)")


def test_a_variant_that_cannot_be_prepared_is_a_problem(tmp_path: Path) -> None:
    model = tmp_path / "tiny"
    shutil.copytree(TINY_MODEL, model, ignore=shutil.ignore_patterns("prepared", BACKBONE + "*"))
    for path in (FIXTURES / "models" / "export_routes" / "legacy").iterdir():
        shutil.copy(path, model / path.name)  # its attention scales q and k apart
    code, lines = run_check(model, tmp_path, precision="fp32-fused")
    assert code == 1
    assert "  fused: not preparable (the attention scores have no scale)" in lines
    (problem,) = [line for line in lines if line.startswith("PROBLEM")]
    assert problem.startswith("PROBLEM: the engine does not load: --precision fp32-fused: the "
                              "fp32-fused backbone cannot be prepared from this model")


def test_a_wrong_input_type_is_a_problem(tmp_path: Path) -> None:
    import onnx

    model = tmp_path / "tiny"
    shutil.copytree(TINY_MODEL, model, ignore=shutil.ignore_patterns("prepared"))
    path = model / VOCODER
    graph = onnx.load(str(path))
    graph.graph.input[0].type.tensor_type.elem_type = onnx.TensorProto.INT32
    onnx.save_model(graph, str(path))
    code, lines = run_check(model, tmp_path, precision="published")
    assert code == 1
    assert "PROBLEM: higgs_decoder.onnx: codes is int32, not int64" in lines


@pytest.mark.slow
def test_the_server_flag_runs_it_and_exits(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", "--check-model", "--model-dir",
         str(TINY_MODEL), "--device", "cpu", "--data-dir", str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the engine can use this model as intended" in result.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", "--check-model", "--model-dir",
         str(tmp_path / "nothing"), "--device", "cpu", "--data-dir", str(tmp_path)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert missing.returncode == 2 and "error:" in missing.stderr
