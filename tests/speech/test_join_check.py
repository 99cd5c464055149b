"""Step scheduling checks itself where it starts (speech/join_check.py): under ``auto`` on
CUDA a request joining a running decode must get the codes of a whole batch, or the
worker keeps ``gated`` with one warning. On the CPU provider: a fp32 engine passes, an int8
engine (its activation scales are shared by the rows of a batch, so joining changes the
codes) fails; the CUDA choice is made on an engine that reports CUDA (none can run here)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice.engine import DecodeOptions, Engine
from wyoming_omnivoice.speech.join_check import joining_is_exact, resolve_scheduling

OPTIONS = DecodeOptions(num_step=8)


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    model = tmp_path_factory.mktemp("join") / "tiny"
    shutil.copytree(TINY_MODEL, model, ignore=shutil.ignore_patterns("prepared"))
    return {precision: Engine.load(Path(model), device="cpu", precision=precision)
            for precision in ("fp32", "int8")}


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_joining_an_exact_engine_passes(engines: dict[str, Engine],
                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert joining_is_exact(engines["fp32"], OPTIONS)
    assert warnings_of(caplog) == []


def test_joining_that_changes_codes_fails_with_one_warning(
        engines: dict[str, Engine], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert not joining_is_exact(engines["int8"], OPTIONS)
    (warning,) = warnings_of(caplog)
    assert "Step scheduling off" in warning and "gated" in warning


@pytest.mark.parametrize(("precision", "expected"), [("fp32", "step"), ("int8", "gated")])
def test_auto_on_cuda_takes_step_only_when_joining_passes(
        engines: dict[str, Engine], precision: str, expected: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    engine = engines[precision]
    monkeypatch.setattr(engine, "device", "cuda")  # the device choice only: no GPU here
    assert resolve_scheduling("auto", engine, OPTIONS) == expected


def test_auto_on_the_cpu_and_explicit_choices_run_no_check(engines: dict[str, Engine],
                                                           caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    with caplog.at_level(logging.WARNING):
        assert resolve_scheduling("auto", engines["int8"], OPTIONS) == "gated"
        assert resolve_scheduling("step", engines["int8"], OPTIONS) == "step"
    assert warnings_of(caplog) == []
