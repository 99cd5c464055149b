"""Faults while the server runs (a hostile voice folder added to a running server) and
in the CLI that reads the same folders (``--list-voices``): nothing may hang."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, describe
from fault_kit import Launch, make_voice, start, tiny_copy

pytestmark = pytest.mark.slow


async def _voice_names(uri: str) -> set[str]:
    info = await describe(uri)
    return {voice.name for program in info.tts for voice in program.voices}


async def test_a_fifo_folder_added_while_running_stops_neither_the_scan_nor_sigterm(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "voices").mkdir(parents=True)
    server = start(Launch(data, tiny_copy(tmp_path / "model")), tmp_path).wait_ready()
    try:
        os.mkfifo(make_voice(data, "piped", transcript=None) / "reference.txt")
        names: set[str] = set()
        for _ in range(120):  # a scan runs at most every 5 s, started by describe
            await asyncio.sleep(0.5)
            names = await _voice_names(server.uri)
            if "reference.txt is a named pipe" in server.log:
                break
        make_voice(data, "later")  # a good folder after the bad one must still come in
        for _ in range(120):
            await asyncio.sleep(0.5)
            names = await _voice_names(server.uri)
            if "later" in names:
                break
        assert "later" in names and "piped" not in names, server.log
        assert "reference.txt is a named pipe (FIFO)" in server.log
        assert server.process is not None
        server.process.terminate()
        assert server.wait_exit(60) == 0, server.log
    finally:
        server.stop()


def test_list_voices_does_not_hang_on_a_fifo(tmp_path: Path) -> None:
    data = tmp_path / "data"
    os.mkfifo(make_voice(data, "piped", transcript=None) / "reference.txt")
    make_voice(data, "good")
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", "--list-voices", "--data-dir", str(data)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert "good" in result.stdout, output
    assert "reference.txt is a named pipe (FIFO)" in output, output
