"""What ``/health`` and the studio's /api/info say when the engine runs the model other
than intended: the published backbone in place of the variant ``auto`` chose, one row per
forward."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_faults import BACKBONE, faulty_model
from conftest import TINY_MODEL

from wyoming_omnivoice import Engine
from wyoming_omnivoice.app.cli import model_notes
from wyoming_omnivoice.app.startup_status import StartupStatus


def test_an_engine_as_intended_has_no_notes() -> None:
    assert model_notes(Engine.load(TINY_MODEL, device="cpu", precision="auto")) == ()


def test_the_fallbacks_are_noted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("quantizer exploded")

    monkeypatch.setattr("wyoming_omnivoice.engine.loading.prepare_backbone", broken)
    model = faulty_model(TINY_MODEL, tmp_path / "tiny", BACKBONE, "fails")
    notes = model_notes(Engine.load(model, device="cpu", precision="auto"))
    assert notes == (
        "backbone: published, the int8 backbone could not be prepared: quantizer exploded; "
        "tried again at the next start",
        "backbone: one row per forward, a padded two-row backbone forward failed "
        f"({notes[1].split('failed (', 1)[1]}")
    assert "Reshape" in notes[1] or "reshape" in notes[1]


def test_health_carries_the_notes() -> None:
    status = StartupStatus()
    assert status.health()["model_notes"] == []
    status.model_notes = ("backbone: published, the int8 backbone could not be prepared: x",)
    status.ready()
    assert status.health()["model_notes"] == list(status.model_notes)
