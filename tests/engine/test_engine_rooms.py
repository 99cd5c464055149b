"""The engine's rooms (docs/design.md, "Engine"): each imports only rooms below it, and no
two modules have names a reader could take for each other.

The layers, top first: the top's modules (``engine/*.py``), ``decoding/`` and ``offline/``,
``forward/`` and ``audio/``, ``runtime/``, ``prompt/`` and ``graphs/``, ``store/``, and
``constants.py`` below all. A module may import its own room and any room on a lower
layer; rooms on the same layer stand side by side and import neither each other.
"""

from __future__ import annotations

import re

from import_graph import PACKAGE_DIR, imports, modules

ENGINE = "wyoming_omnivoice.engine"

#: room -> layer (higher sits above).
LAYERS = {
    "top": 6,
    "decoding": 5,
    "offline": 5,
    "forward": 4,
    "audio": 4,
    "runtime": 3,
    "prompt": 2,
    "graphs": 2,
    "store": 1,
    "constants": 0,
}
#: The package's public interface sits above everything it re-exports.
INTERFACE = {ENGINE, f"{ENGINE}.offline"}


def room_of(module: str) -> str | None:
    """The engine room of ``module``, or None for a module outside the engine."""
    if module != ENGINE and not module.startswith(ENGINE + "."):
        return None
    rest = module.removeprefix(ENGINE).removeprefix(".").split(".")
    if rest == [""]:
        return "top"
    if len(rest) == 1:
        return "constants" if rest[0] == "constants" else ("top" if rest[0] not in LAYERS
                                                             else rest[0])
    return rest[0]


def engine_imports() -> list[tuple[str, str, int]]:
    return [(i.importer, i.imported, i.line) for i in imports()
            if room_of(i.importer) is not None and room_of(i.imported) is not None
            and i.importer not in INTERFACE]


def test_every_engine_module_is_in_a_known_room() -> None:
    engine_modules = [name for name in modules() if room_of(name) is not None]
    assert len(engine_modules) > 40
    unknown = [name for name in engine_modules if room_of(name) not in LAYERS]
    assert unknown == []
    folders = {p.name for p in (PACKAGE_DIR / "engine").iterdir()
               if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS) - {"top", "constants"}


def test_rooms_import_only_downward() -> None:
    upward = []
    for importer, imported, line in engine_imports():
        source, target = room_of(importer), room_of(imported)
        assert source is not None and target is not None
        if source != target and LAYERS[source] <= LAYERS[target]:
            upward.append(f"{importer}:{line} -> {imported} ({source} {LAYERS[source]} -> "
                          f"{target} {LAYERS[target]})")
    assert upward == [], "imports that do not run down:\n" + "\n".join(upward)


def test_the_walk_sees_cross_room_imports() -> None:
    """The check above has something to check: the decode imports the rooms below it."""
    pairs = {(room_of(a), room_of(b)) for a, b, _ in engine_imports()}
    assert {("top", "decoding"), ("decoding", "forward"), ("forward", "runtime"),
            ("runtime", "store"), ("store", "constants")} <= pairs


def _stem(name: str) -> str:
    return re.sub(r"s$", "", name.replace("_", ""))


def test_no_names_a_reader_could_confuse() -> None:
    """No ``session`` beside ``sessions``, no module named like a folder or like one of the
    package's own top-level packages (``engine/text.py`` beside ``text/``)."""
    engine_dir = PACKAGE_DIR / "engine"
    names = [p.relative_to(engine_dir) for p in engine_dir.rglob("*.py")
             if p.name != "__init__.py"]
    stems: dict[str, list[str]] = {}
    for path in names:
        stems.setdefault(_stem(path.stem), []).append(str(path))
    clashes = {stem: paths for stem, paths in stems.items() if len(paths) > 1}
    assert clashes == {}
    folders = {p.name for p in engine_dir.rglob("*") if p.is_dir() and p.name != "__pycache__"}
    top_level = {p.name for p in PACKAGE_DIR.iterdir()
                 if p.is_dir() and (p / "__init__.py").exists()}
    like_folders = [str(path) for path in names
                    if _stem(path.stem) in {_stem(f) for f in folders | top_level}]
    assert like_folders == []
