"""The engine is used only through its public interface, and no module imports another that
imports it back (read from the source: every import counts, also inside functions and
under ``TYPE_CHECKING``)."""

from __future__ import annotations

import pytest
from import_graph import Import, cycles, imports, strongly_connected

import wyoming_omnivoice
from wyoming_omnivoice import engine
from wyoming_omnivoice.engine import offline

#: What code outside ``engine/`` may import from the engine: its two public packages.
PUBLIC = {"wyoming_omnivoice.engine", "wyoming_omnivoice.engine.offline"}


def _inside_engine(name: str) -> bool:
    return name == "wyoming_omnivoice.engine" or name.startswith("wyoming_omnivoice.engine.")


def engine_internal_imports() -> list[Import]:
    return [item for item in imports()
            if not _inside_engine(item.importer) and _inside_engine(item.imported)
            and item.imported not in PUBLIC]


def test_nothing_outside_the_engine_imports_its_internal_modules() -> None:
    found = [f"{item.importer}:{item.line} imports {item.imported}"
             for item in engine_internal_imports()]
    assert found == [], "import these names from wyoming_omnivoice.engine instead:\n" + \
        "\n".join(found)


def test_the_check_sees_an_internal_import() -> None:
    """The walk finds internal imports where there are some: the engine's own modules."""
    inside = [item for item in imports()
              if item.importer == "wyoming_omnivoice.engine.core"
              and item.imported == "wyoming_omnivoice.engine.decoding.decoder"]
    assert inside, "the import walk missed engine/core.py's import of engine/decoding/decoder.py"


@pytest.mark.parametrize("package", [engine, offline])
def test_every_public_name_resolves(package: object) -> None:
    names = package.__all__  # type: ignore[attr-defined]
    assert names
    for name in names:
        assert getattr(package, name) is not None, name


def test_the_top_level_api_is_the_engines() -> None:
    assert wyoming_omnivoice.Engine is engine.Engine
    assert wyoming_omnivoice.DecodeOptions is engine.DecodeOptions
    with pytest.raises(AttributeError):
        _ = wyoming_omnivoice.decoder  # type: ignore[attr-defined]


def test_no_import_cycles() -> None:
    assert cycles() == []


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


#: The one arrow from the runtime into the offline layer: ``Engine.load`` (engine/loading.py)
#: prepares a missing backbone variant at the first start (issue 31 leaves who prepares to
#: its phase B).
RUNTIME_INTO_OFFLINE = {("wyoming_omnivoice.engine.loading",
                         "wyoming_omnivoice.engine.offline.prepare"),
                        # --check-model reads the patterns the preparation rewrites
                        ("wyoming_omnivoice.engine.model_check",
                         "wyoming_omnivoice.engine.offline.prepare"),
                        ("wyoming_omnivoice.engine.model_check",
                         "wyoming_omnivoice.engine.offline.fused_layout")}


def _offline(name: str) -> bool:
    return name == "wyoming_omnivoice.engine.offline" or \
        name.startswith("wyoming_omnivoice.engine.offline.")


def test_the_offline_layer_sits_above_the_runtime() -> None:
    """engine/offline/ uses the runtime's modules; the runtime does not use offline ones."""
    found = sorted({(item.importer, item.imported) for item in imports()
                    if _inside_engine(item.importer) and not _offline(item.importer)
                    and _offline(item.imported)} - RUNTIME_INTO_OFFLINE)
    assert found == []
    assert any(_offline(item.importer) and _inside_engine(item.imported)
               and not _offline(item.imported) for item in imports())
