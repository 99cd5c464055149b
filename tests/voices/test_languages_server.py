"""Per-language voices on the real server: what Home Assistant is offered, a voice of a
language that was not preloaded (its anchor built on first use), an unknown voice name,
the anchor progress line and a bad --preload-languages."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    REPO_ROOT,
    ServerProcess,
    audio_cycles,
    describe,
    free_port,
    read_until,
    synthesize_once,
)
from conftest import tiny_server_args as server_args
from wyoming.client import AsyncClient
from wyoming.event import Event

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow


async def test_languages_voices_first_use_anchor_and_unknown_voice(server_factory,
                                                                   tmp_path: Path) -> None:
    server = server_factory(data_dir=tmp_path / "data")  # a fresh data dir: anchors built
    # Ready with the default voice's anchor; the other English ones in the background, with
    # the progress line (n of N, time left).
    assert "Voice anchors: building 14 in the background" in server.log
    deadline = time.monotonic() + 300
    while not re.search(r"Voice anchors: \d+ of 14 built \(", server.log):
        assert server.alive and time.monotonic() < deadline, server.log
        time.sleep(0.2)
    info = await describe(server.uri)
    voices = {voice.name: voice for voice in info.tts[0].voices}
    assert "de-DE" in voices["de-female"].languages and "de" in voices["de-female"].languages
    assert voices["de-female"].description == "Female voice"
    # Brazilian pipelines get the Brazilian voices (read the Brazilian way), the others
    # the European ones.
    assert voices["pt-BR-male"].languages == ["pt-BR"]
    assert voices["pt-male"].languages == ["pt", "pt-PT"]
    assert {"zh-Hans", "zh-Hant"} <= set(voices["zh-female"].languages)
    async with AsyncClient.from_uri(server.uri) as client:
        events = await synthesize_once(client, "Das Licht ist an.", voice="de-female")
        assert len(audio_cycles(events)) == 1 and "error" not in [e.type for e in events]
        assert "Building the anchor of voice 'de-female' on its first use" in server.log
        assert re.search(r"Voice 'de-female': anchor ready in \d+\.\d s on its first use",
                         server.log)
        # Built once, then reused.
        events = await synthesize_once(client, "Noch einmal.", voice="de-female")
        assert len(audio_cycles(events)) == 1
        assert server.log.count("Building the anchor of voice 'de-female'") == 1
        # A removed or mistyped voice is spoken with its language's voice, not refused.
        events = await synthesize_once(client, "Bonjour.", voice="fr-nobody")
        assert len(audio_cycles(events)) == 1 and "error" not in [e.type for e in events]
    assert "Unknown voice 'fr-nobody': speaking with 'fr-female'" in server.log


async def test_brazilian_requests_read_numbers_the_brazilian_way(
        tiny_server: ServerProcess) -> None:
    """The same sentence through a pt-BR voice, a request naming only ``pt-BR``, and a
    stream naming a European voice with ``pt-BR``: Brazilian number words; through the
    European voice (and with ``pt-PT``): European ones. The server's debug log shows the
    text each request was read as."""
    async with AsyncClient.from_uri(tiny_server.uri) as client:
        for voice in ({"name": "pt-female"}, {"name": "pt-BR-female"},
                      {"language": "pt-BR"}, {"name": "pt-BR-male", "language": "pt-PT"}):
            await client.write_event(Event("synthesize", {"text": "Faltam 16 dias.",
                                                          "voice": voice}))
            events = await read_until(client, {"audio-stop"})
            assert "error" not in [e.type for e in events], events
        await client.write_event(Event("synthesize-start", {
            "voice": {"name": "pt-female", "language": "pt-BR"}}))
        await client.write_event(Event("synthesize-chunk", {"text": "Restam 19 minutos."}))
        await client.write_event(Event("synthesize-stop"))
        events = await read_until(client, {"synthesize-stopped"})
        assert "error" not in [e.type for e in events], events
    log = tiny_server.log
    assert "Voice pt-female reads pt text as: 'Faltam dezasseis dias.'" in log
    assert "Voice pt-BR-female reads pt-BR text as: 'Faltam dezesseis dias.'" in log
    assert "Voice pt-BR-male reads pt text as: 'Faltam dezasseis dias.'" in log
    assert "Voice pt-female reads pt-BR text as: 'Restam dezenove minutos.'" in log
    assert log.count("reads pt-BR text as: 'Faltam dezesseis dias.'") == 2  # + language only


def test_bad_preload_languages_is_one_line_and_exit_2(tmp_path: Path) -> None:
    argv = server_args(free_port(), tmp_path, "--preload-languages", "en,klingon")
    result = subprocess.run([sys.executable, "-m", "wyoming_omnivoice", *argv], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--preload-languages" in result.stderr and "klingon" in result.stderr
    assert "Traceback" not in result.stderr
