"""The load-time checks of multi-row calls (a padded two-row backbone forward against its
rows alone; a two-row vocoder decode against its rows alone) and what the engine does when
a graph fails them: one warning, then one row per backbone forward (batches decode row by
row with the same codes), the vocoder per item."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from batch_faults import BACKBONE, FAULTS, VOCODER, faulty_model
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.forward.row_check import check_backbone_rows, tolerance_for

DETERMINISTIC = DecodeOptions(num_step=8, position_temperature=0.0)
REQUESTS = [SynthesisRequest("Turn the kitchen lights on.", seed=1),
            SynthesisRequest("Good night.", language="en", seed=2),
            SynthesisRequest("The garage door is open.", seed=3)]


def warnings_of(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and text in r.getMessage()]


@pytest.fixture(scope="module", params=FAULTS)
def faulty_backbone(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                    ) -> tuple[str, Path]:
    folder = tmp_path_factory.mktemp(f"backbone-{request.param}") / "tiny"
    return request.param, faulty_model(TINY_MODEL, folder, BACKBONE, request.param)


@pytest.mark.slow
def test_the_published_files_shape_passes(tiny_model: Path) -> None:
    engine = Engine.load(tiny_model, device="cpu", precision="int8")
    assert engine.row_check.ok and engine.row_check.worst <= tolerance_for("int8")
    assert not engine.decoder.one_row
    exact = Engine.load(tiny_model, device="cpu", precision="published")
    assert exact.row_check.ok and exact.row_check.worst <= tolerance_for("published")


@pytest.mark.slow
def test_a_backbone_that_fails_with_two_rows_runs_one_row_per_forward(
        faulty_backbone: tuple[str, Path], caplog: pytest.LogCaptureFixture) -> None:
    fault, model = faulty_backbone
    with caplog.at_level(logging.WARNING):
        engine = Engine.load(model, device="cpu", precision="published", io_binding=True,
                             layout="packed")
    assert not engine.row_check.ok
    assert ("failed" if fault == "fails" else "differs") in engine.row_check.reason
    assert len(warnings_of(caplog, "one row per forward")) == 1
    assert engine.decoder.one_row and engine.decoder.runner is None  # IO binding binds rows
    batch = engine.generate_codes_batch(REQUESTS, options=DETERMINISTIC)
    assert engine.last_stats.rows == len(REQUESTS)
    for request, codes in zip(REQUESTS, batch, strict=True):
        alone = engine.generate_codes(request.text, language=request.language,
                                      seed=request.seed, options=DETERMINISTIC)
        np.testing.assert_array_equal(codes, alone)


def test_the_check_itself_tells_the_faults_apart(faulty_backbone: tuple[str, Path]) -> None:
    fault, model = faulty_backbone
    engine = Engine.load(TINY_MODEL, device="cpu", precision="published")
    assert check_backbone_rows(engine.graphs.backbone, engine.hidden_size, "published").ok
    bad = Engine.load(model, device="cpu", precision="published")
    check = check_backbone_rows(bad.graphs.backbone, bad.hidden_size, "published")
    assert not check.ok
    assert check.worst == float("inf") if fault == "fails" else 0.1 < check.worst < np.inf


@pytest.mark.parametrize("fault", FAULTS)
def test_a_vocoder_that_fails_with_two_rows_is_run_per_item(
        fault: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = faulty_model(TINY_MODEL, tmp_path / "tiny", VOCODER, fault)
    engine = Engine.load(model, device="cpu", precision="published", buckets=True)
    with caplog.at_level(logging.WARNING):
        assert not engine.vocoder_runner.active
        assert not engine.vocoder_runner.active  # checked once
    (warning,) = warnings_of(caplog, "Vocoder run per item")
    assert ("failed" if fault == "fails" else "differs") in warning
    rng = np.random.default_rng(3)
    items = [rng.integers(0, 1024, (8, t), dtype=np.int64) for t in (40, 61)]
    waves = engine.vocoder_runner.decode_many(items)
    assert not engine.vocoder_runner.last_stats.bucketed
    assert engine.vocoder_runner.last_stats.calls == [(1, 40), (1, 61)]
    for codes, wave in zip(items, waves, strict=True):
        np.testing.assert_array_equal(wave, engine.vocoder_runner.decode(codes))


def test_a_prepared_backbone_keeps_its_outcome_for_the_next_load(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from wyoming_omnivoice.engine.forward import row_check

    model = tmp_path / "tiny"
    shutil.copytree(TINY_MODEL, model, ignore=shutil.ignore_patterns("prepared"))
    first = Engine.load(model, device="cpu", precision="int8")
    record = first.graphs.prepared.path.parent / row_check.RECORD
    assert record.is_file() and first.row_check.ok

    def not_again(*_args: object) -> None:
        raise AssertionError("checked again")

    monkeypatch.setattr(row_check, "_check", not_again)
    again = Engine.load(model, device="cpu", precision="int8")
    assert again.row_check == first.row_check
    record.write_text(record.read_text().replace("int8|", "fp32|"))  # another key: stale
    with pytest.raises(AssertionError, match="checked again"):
        Engine.load(model, device="cpu", precision="int8")
