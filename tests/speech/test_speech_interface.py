"""The speech service's public interface: the protocols (Wyoming, HTTP) and the start-up
shell import ``wyoming_omnivoice.speech``, never one of its modules (read from the source
with ``ast``: every import counts, also inside functions and under ``TYPE_CHECKING``)."""

from __future__ import annotations

from import_graph import imports

from wyoming_omnivoice import speech

P = "wyoming_omnivoice"
SPEECH = f"{P}.speech"
#: The rooms above the speech service.
ABOVE = (f"{P}.wyoming_protocol", f"{P}.web", f"{P}.app", f"{P}.synthesize")


def _in(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


def test_the_rooms_above_import_only_the_speech_package() -> None:
    found = [f"{item.importer}:{item.line} imports {item.imported}" for item in imports()
             if any(_in(item.importer, room) for room in ABOVE)
             and item.imported.startswith(SPEECH + ".")]
    assert found == [], "import these names from wyoming_omnivoice.speech instead:\n" + \
        "\n".join(found)


def test_the_check_sees_the_protocols_use_the_speech_package() -> None:
    """The walk finds the protocols' imports of the package itself."""
    users = {item.importer for item in imports() if item.imported == SPEECH}
    assert f"{P}.wyoming_protocol.handler" in users
    assert f"{P}.web.speech" in users


def test_every_public_name_resolves() -> None:
    assert speech.__all__
    for name in speech.__all__:
        assert getattr(speech, name) is not None, name

