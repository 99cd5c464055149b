"""Preparation that does not depend on one exporter: the tiny backbone as exported by the
TorchScript exporter (``legacy``) and by dynamo without onnxscript's optimizer
(``dynamo-plain``) (``tests/fixtures/models/export_routes/``, written by
``tools/export_routes.py`` from the fixtures' seeded weights), every variant prepared from
each, or refused with the pattern it lacks named; the published load of each agrees with the
fixture's own export, and so does every prepared variant within its precision."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import FIXTURES, TINY_MODEL

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.forward.row_check import padded_pair
from wyoming_omnivoice.engine.offline import prepare
from wyoming_omnivoice.engine.store.model_files import BACKBONE
from wyoming_omnivoice.engine.store.prepared_store import NotPreparable

ROUTES = FIXTURES / "models" / "export_routes"
#: What each route gives per variant: prepared, or refused naming the pattern it lacks.
EXPECTED = {
    "legacy": {"fp32": None, "int8": None, "fp16": None,
               "fp32-fused": "the attention scores have no scale",
               "fp16-fused": "the attention scores have no scale"},
    "dynamo-plain": {"fp32": None, "int8": None, "fp16": None,
                     "fp32-fused": "0 weight products", "fp16-fused": "0 weight products"},
}
#: Relative difference of the hidden states from the published fp32 forward.
TOLERANCE = {"fp32": 1e-5, "fp32-fused": 1e-4, "int8": 0.1, "fp16": 2e-2, "fp16-fused": 2e-2}


def route_model(route: str, folder: Path) -> Path:
    """The tiny model folder with its backbone as ``route`` exported it."""
    shutil.copytree(TINY_MODEL, folder, ignore=shutil.ignore_patterns("prepared", BACKBONE + "*"))
    for path in (ROUTES / route).iterdir():
        shutil.copy(path, folder / path.name)
    return folder


def hidden_states(engine: Engine) -> np.ndarray:
    embeds, mask, _ = padded_pair(engine.hidden_size)
    return engine.decoder.run_backbone(SimpleNamespace(mask=mask), embeds)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return hidden_states(Engine.load(TINY_MODEL, device="cpu", precision="published"))


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def route(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> tuple[str, Path]:
    return request.param, route_model(request.param, tmp_path_factory.mktemp(request.param)
                                      / "tiny")


def relative(value: np.ndarray, truth: np.ndarray) -> float:
    return float(np.linalg.norm(value - truth) / np.linalg.norm(truth))


def test_the_published_load_of_each_route_equals_the_fixtures_export(
        route: tuple[str, Path], reference: np.ndarray) -> None:
    _, model = route
    engine = Engine.load(model, device="cpu", precision="published")
    assert relative(hidden_states(engine), reference) < 1e-5


@pytest.mark.parametrize("variant", list(TOLERANCE))
def test_every_variant_is_prepared_or_names_the_pattern_it_lacks(
        route: tuple[str, Path], variant: str, reference: np.ndarray) -> None:
    name, model = route
    refused = EXPECTED[name][variant]
    if refused is not None:
        with pytest.raises(NotPreparable, match=refused.replace("(", r"\(").replace(")", r"\)")):
            prepare.prepare_backbone(model, variant)
        return
    found = prepare.prepare_backbone(model, variant)
    assert found.info["patterns_missing"] == {}
    assert found.info["rms_norms_fused"] == 9 and found.info["rotary_tables"] == 2
    engine = Engine.load(model, device="cpu", precision=variant)
    assert engine.precision == variant and engine.row_check.ok
    assert relative(hidden_states(engine), reference) < TOLERANCE[variant]


def test_a_rewrite_whose_pattern_is_missing_is_named_and_the_rest_prepared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        reference: np.ndarray) -> None:
    from wyoming_omnivoice.engine.graphs import rotary_table

    def not_found(*_args: object, **_kwargs: object) -> int:
        raise rotary_table.RotaryChainNotFound("cos/sin chain has unexpected ops ['Einsum']")

    monkeypatch.setattr(rotary_table, "tabulate_rotary", not_found)
    model = tmp_path / "tiny"
    shutil.copytree(TINY_MODEL, model, ignore=shutil.ignore_patterns("prepared"))
    with caplog.at_level(logging.WARNING):
        int8 = prepare.prepare_backbone(model, "int8")
    assert int8.max_positions is None  # no table: no limit of its own
    assert "unexpected ops ['Einsum']" in int8.info["patterns_missing"]["rotary table"]
    assert int8.info["int8_matmuls"] == 14
    (line,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert line.startswith("The int8 backbone was prepared without the rotary table rewrite")
    engine = Engine.load(model, device="cpu", precision="int8")
    assert engine.decoder.max_positions is None
    assert relative(hidden_states(engine), reference) < TOLERANCE["int8"]
    with pytest.raises(NotPreparable, match="no rotary cos/sin tables"):
        prepare.prepare_backbone(model, "fp32-fused")
