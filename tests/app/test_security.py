"""Exposure: what the server listens on, where it writes, and which names reach the disk.

- The process listens on exactly what ``--uri`` names (one TCP socket on 127.0.0.1:PORT,
  or one Unix socket) and holds no other listening or UDP socket (zeroconf is off unless
  ``--zeroconf`` is given). Sockets are read from /proc, so these tests need Linux.
- A server run writes only under ``--data-dir``: HOME, TMPDIR and the XDG folders stay
  empty.
- Voice names with path separators or leading dots are refused at startup; request voice
  names never touch the file system (see test_robustness_requests for the error answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    REPO_ROOT,
    ServerProcess,
    audio_cycles,
    describe,
    free_port,
    stream,
    synthesize,
    tiny_server_args,
)

#: Starts server processes: not in the fast suite; socket inspection reads Linux /proc.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(),
                                 reason="socket inspection reads Linux /proc")]


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def _hex_address(text: str) -> tuple[str, int]:
    host_hex, port_hex = text.split(":")
    port = int(port_hex, 16)
    if len(host_hex) == 8:
        host = ".".join(str(b) for b in reversed(bytes.fromhex(host_hex)))
    else:
        host = host_hex  # IPv6: compared as raw hex
    return host, port


def inet_sockets(pid: int) -> list[tuple[str, str, int, str]]:
    """(protocol, local host, local port, state hex) of the process's inet sockets."""
    mine = _socket_inodes(pid)
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
        for line in lines:
            fields = line.split()
            if fields[9] in mine:
                host, port = _hex_address(fields[1])
                found.append((proto, host, port, fields[3]))
    return found


def unix_listeners(pid: int) -> list[str]:
    mine = _socket_inodes(pid)
    paths = []
    for line in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        # Flags 00010000 = __SO_ACCEPTCON: a listening socket.
        if fields[6] in mine and fields[3] == "00010000":
            paths.append(fields[7] if len(fields) > 7 else "")
    return paths


LISTEN = "0A"


def _files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*"))


async def test_listens_only_on_the_uri_and_writes_only_in_the_data_dir(tmp_path: Path) -> None:
    home, tmp, data = tmp_path / "home", tmp_path / "tmp", tmp_path / "data"
    for folder in (home, tmp):
        folder.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CONFIG_HOME": str(home / ".config")}
    port = free_port()
    server = ServerProcess(tiny_server_args(port, data), tmp_path / "server.log", port,
                           env=env).start().wait_ready()
    try:
        assert server.process is not None
        sockets = inet_sockets(server.process.pid)
        listening = [s for s in sockets if s[3] == LISTEN and s[0].startswith("tcp")]
        assert listening == [("tcp", "127.0.0.1", port, LISTEN)], sockets
        assert not [s for s in sockets if s[0].startswith("udp")], sockets
        assert unix_listeners(server.process.pid) == []
        events = await synthesize(server.uri, "Where do my files go?")
        assert len(audio_cycles(events)) == 1
        events = await stream(server.uri, ["Streaming ", "too. "])
        assert len(audio_cycles(events)) == 1
    finally:
        assert server.stop() == 0
    assert _files_under(home) == [] and _files_under(tmp) == []
    written = _files_under(data)
    assert written and all(p.resolve().is_relative_to(data.resolve()) for p in written)
    assert not [p for p in written if p.name.startswith(".anchor-")]  # no temp leftovers


async def test_unix_socket_server_opens_no_network_socket(tmp_path: Path,
                                                          shared_data_dir: Path) -> None:
    socket_path = tmp_path / "omnivoice.sock"
    args = [a if not a.startswith("tcp://") else f"unix://{socket_path}"
            for a in tiny_server_args(0, shared_data_dir)]
    server = ServerProcess(args, tmp_path / "server.log", 0).start().wait_ready()
    try:
        assert server.process is not None
        assert inet_sockets(server.process.pid) == []
        assert unix_listeners(server.process.pid) == [str(socket_path)]
        info = await describe(f"unix://{socket_path}")
        assert info.tts[0].installed
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/b", "..", ".hidden",
                                  "voice\\..\\x", "name\x00null", "x" * 65])
def test_voice_names_that_could_reach_the_file_system_are_refused(tmp_path: Path,
                                                                   name: str) -> None:
    """The entry is refused (one error line naming the file and the rule); the start stops
    here only because --voice names a voice that does not exist."""
    voices = tmp_path / "voices.yaml"
    voices.write_text(  # a JSON string is a valid YAML double-quoted scalar
        f"voices:\n  - name: {json.dumps(name)}\n    description: Bad name\n"
        "    instruct: female\n    languages: [en]\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice",
         *tiny_server_args(free_port(), tmp_path / "data"), "--voices-file", str(voices),
         "--voice", "missing-default"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    skipped = [line for line in result.stderr.splitlines() if "Voice skipped" in line]
    assert len(skipped) == 1, result.stderr
    assert str(voices) in skipped[0] and "'name' must be 1-64 letters" in skipped[0]
    assert not (tmp_path / "escape").exists()
