"""The engine is used only through its public interface, and no module imports another that
imports it back (read from the source: every import counts, also inside functions and
under ``TYPE_CHECKING``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_graph import Import, cycles, imports, modules, strongly_connected

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


def _names_used(path: Path) -> set[str]:
    """Every name a module imports, reads or reads as an attribute."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
    return names


def test_the_protocols_never_name_the_scheduler_internals() -> None:
    """The step-level decode (session, items, step hook, interrupt) is the speech worker's:
    not in ``__all__``, and no module of ``wyoming_protocol/`` or ``web/`` names it."""
    internals = set(engine.SCHEDULER_NAMES)
    assert internals.isdisjoint(engine.__all__)
    found = sorted(f"{name}: {sorted(_names_used(path) & internals)}"
                   for name, path in modules().items()
                   if name.startswith(("wyoming_omnivoice.wyoming_protocol",
                                       "wyoming_omnivoice.web"))
                   and _names_used(path) & internals)
    assert found == []


def test_the_speech_worker_uses_the_scheduler_names() -> None:
    """The check reads real uses: the step scheduler names them, and they resolve."""
    used = _names_used(modules()["wyoming_omnivoice.speech.step_scheduler"])
    assert {"between_steps", "ForwardInterrupt", "SynthesisSession"} <= used
    for name in engine.SCHEDULER_NAMES:
        assert getattr(engine, name) is not None, name
