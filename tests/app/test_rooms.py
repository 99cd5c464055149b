"""The rooms of the house, read from the import graph: the start-up shell (``app/``) sits on
top and wires the protocols together; the two protocols (``wyoming_protocol/``, ``web/``)
stand side by side over the speech service and know nothing of the shell or of each other;
nothing below the protocols imports a protocol or the shell."""

from __future__ import annotations

from import_graph import Import, imports

P = "wyoming_omnivoice"
SHELL = f"{P}.app"
WYOMING = f"{P}.wyoming_protocol"
WEB = f"{P}.web"
#: What may start the shell: the entry points.
ENTRY_POINTS = {f"{P}.__main__", f"{P}.synthesize"}
#: Known arrows up into the shell: none (the memory room lives in model/ since issue 31's
#: second step).
KNOWN_UP: set[tuple[str, str]] = set()


def _in(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


def _found(items: list[Import]) -> list[str]:
    return [f"{item.importer}:{item.line} imports {item.imported}" for item in items]


def test_the_protocols_import_nothing_of_the_shell() -> None:
    found = [item for item in imports()
             if (_in(item.importer, WYOMING) or _in(item.importer, WEB))
             and _in(item.imported, SHELL)]
    assert _found(found) == []


def test_the_protocols_import_nothing_of_each_other() -> None:
    found = [item for item in imports()
             if (_in(item.importer, WYOMING) and _in(item.imported, WEB))
             or (_in(item.importer, WEB) and _in(item.imported, WYOMING))]
    assert _found(found) == []


def test_nothing_below_the_protocols_imports_them_or_the_shell() -> None:
    rooms = (SHELL, WYOMING, WEB)
    found = [item for item in imports()
             if not any(_in(item.importer, room) for room in rooms)
             and item.importer not in ENTRY_POINTS
             and any(_in(item.imported, room) for room in rooms)
             and (item.importer, item.imported) not in KNOWN_UP]
    assert _found(found) == []


def test_the_walk_sees_the_shell_start_the_wyoming_protocol() -> None:
    assert any(item.importer == f"{SHELL}.serve" and item.imported == f"{WYOMING}.handler"
               for item in imports())


def test_the_protocols_ask_the_voices_through_their_interface() -> None:
    """Voices and anchors: through ``wyoming_omnivoice.voices`` only, never its modules."""
    found = [item for item in imports()
             if (_in(item.importer, WYOMING) or _in(item.importer, WEB))
             and (item.imported.startswith(f"{P}.voices.") or _in(item.imported, f"{P}.anchors"))]
    assert _found(found) == []
    assert any(item.importer == f"{WYOMING}.info" and item.imported == f"{P}.voices"
               for item in imports())
