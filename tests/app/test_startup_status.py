"""What a first start says while it runs: ``/health`` and the studio's API, from an empty
data folder to ready, against a local hub that serves the model slowly."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import READY_TIMEOUT_S
from first_start import start_first_start

pytestmark = pytest.mark.slow


def test_health_says_what_the_first_start_does_until_ready(tmp_path: Path) -> None:
    first = start_first_start(tmp_path)
    answers: list[tuple[int, dict[str, Any]]] = []
    studio_while_starting = None
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert first.server.alive, first.server.log
            got = first.get("/health")
            if got is not None:
                answers.append(got)
                if got[0] == 200:
                    break
                if studio_while_starting is None:
                    studio_while_starting = first.get("/api/voices")
            time.sleep(0.1)
        info = first.get("/api/info")
    finally:
        first.stop()
    assert answers and answers[-1][0] == 200, first.server.log
    final = answers[-1][1]
    assert final["ready"] is True and final["status"] == "ready"
    starting = [body for status, body in answers if status == 503]
    assert starting, "never saw the server starting"
    assert all(body["ready"] is False and body["status"] == "starting" for body in starting)
    phases = [body["phase"] for status, body in answers]
    assert "download" in phases and "prepare" in phases, phases
    # In the order of a start (a poll may miss a short phase; the phase of a piece of work
    # is its own: preparing the fp32 backbone for the anchors is "prepare" again).
    firsts = [phases.index(phase) for phase in ("download", "prepare", "ready")]
    assert firsts == sorted(firsts), phases
    assert all(phase == "ready" for phase in phases[phases.index("ready"):]), phases
    downloads = [body for body in starting if body["phase"] == "download"]
    item = downloads[0]["work"][-1]
    assert item["kind"] == "download" and item["unit"] == "bytes"
    assert item["text"].startswith("Downloading ") and "(file " in item["text"]
    assert isinstance(item["total"], int | float) and item["total"] > 0
    assert isinstance(item["percent"], int | float)
    assert downloads[0]["message"] == item["text"]
    assert studio_while_starting is not None
    assert studio_while_starting[0] == 503
    assert studio_while_starting[1]["error"]["code"] == "starting"
    assert "The server is starting" in studio_while_starting[1]["error"]["message"]
    assert info is not None and info[0] == 200 and "default_voice" in info[1]
    assert "Start-up page and /health on" in first.server.log
