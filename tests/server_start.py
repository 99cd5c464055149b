"""Server processes for the protocol tests: the real server on a free loopback port, or the
test-only entry ``tests/faulty_server.py`` (the real server with an engine that fails on
cue), and waiting for a line in a server's log."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import READ_TIMEOUT_S, REPO_ROOT, ServerProcess, free_port, tiny_server_args

FAULTY_ENTRY = [str(REPO_ROOT / "tests" / "faulty_server.py")]


def start_server(tmp_path: Path, data_dir: Path, *extra: str,
                 env: dict[str, str] | None = None, faulty: bool = False) -> ServerProcess:
    port = free_port()
    server = ServerProcess(tiny_server_args(port, data_dir, *extra),
                           tmp_path / f"server-{port}.log", port, env=dict(env or {}))
    if faulty:
        server.entry = FAULTY_ENTRY
    return server.start().wait_ready()


def wait_for_log(server: ServerProcess, needle: str) -> None:
    deadline = time.monotonic() + READ_TIMEOUT_S
    while needle not in server.log:
        assert time.monotonic() < deadline, f"{needle!r} never logged:\n{server.log}"
        assert server.alive, server.log
        time.sleep(0.1)
