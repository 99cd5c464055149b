"""The web side and the Wyoming side are two protocol layers over the speech service: the
web side imports nothing of the Wyoming protocol or the start-up shell (what both need lives
in speech/; the rooms' other rules: tests/app/test_rooms.py), and asks the voices through
their package's interface only."""

from __future__ import annotations

import numpy as np
from import_graph import imports

from wyoming_omnivoice.speech.pcm import audio_to_pcm
from wyoming_omnivoice.web.audio_files import encode_audio


def test_the_web_side_imports_nothing_of_the_wyoming_server() -> None:
    found = [f"{item.importer}:{item.line} imports {item.imported}" for item in imports()
             if item.importer.startswith("wyoming_omnivoice.web")
             and item.imported.startswith(("wyoming_omnivoice.wyoming_protocol",
                                           "wyoming_omnivoice.app"))]
    assert found == [], "\n".join(found)


def test_the_walk_sees_the_web_sides_imports() -> None:
    # The PCM format comes from the speech service's public interface (speech/pcm.py).
    assert any(item.importer == "wyoming_omnivoice.web.audio_files"
               and item.imported == "wyoming_omnivoice.speech" for item in imports())


def test_the_web_side_asks_the_voices_interface_only() -> None:
    """Voices, anchors and the voice library: through ``wyoming_omnivoice.voices`` only."""
    found = [f"{item.importer}:{item.line} imports {item.imported}" for item in imports()
             if item.importer.startswith("wyoming_omnivoice.web")
             and item.imported.startswith(("wyoming_omnivoice.voices.",
                                           "wyoming_omnivoice.anchors"))]
    assert found == [], "import these names from wyoming_omnivoice.voices:\n" + \
        "\n".join(found)
    assert any(item.importer == "wyoming_omnivoice.web.studio"
               and item.imported == "wyoming_omnivoice.voices" for item in imports())


def test_a_pcm_answer_is_the_wyoming_pcm() -> None:
    audio = np.array([0.0, 0.5, -1.0, 1.5, -2.0], dtype=np.float32)
    pcm = encode_audio(audio, 24000, "pcm")
    assert pcm == audio_to_pcm(audio)
    assert np.frombuffer(pcm, dtype="<i2").tolist() == [0, 16384, -32767, 32767, -32767]
