"""Real Home Assistant against the real server.

Home Assistant (the pinned release in ``requirements.txt``) runs in-process through
``pytest-homeassistant-custom-component``'s ``hass`` fixture, in its own Python 3.13
virtual environment. The server runs as a subprocess from the project's own environment
(``WYOMING_OMNIVOICE_PYTHON``, default ``<repo>/.venv/bin/python``): Home Assistant pins
``wyoming==1.7.2`` while the server needs a newer ``wyoming``, so the two cannot share one
environment, just as they never share one in a real home.

Home Assistant's own ``wyoming`` integration is added through its config flow, exactly as a
user adds the server, and its ``tts`` converts audio with the ffmpeg binary that
``imageio-ffmpeg`` ships. Every test fails if Home Assistant logged an error (``ha_log``).

Timeouts below only keep a broken server from hanging the run; nothing asserts on timing.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import imageio_ffmpeg
import pytest
from homeassistant.config_entries import SOURCE_USER
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.setup import async_setup_component

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "tiny"
READY_TIMEOUT_S = 300.0


def server_python() -> Path:
    """The interpreter of the environment the project is installed in."""
    configured = os.environ.get("WYOMING_OMNIVOICE_PYTHON")
    python = Path(configured) if configured else REPO_ROOT / ".venv" / "bin" / "python"
    if not python.exists():
        raise RuntimeError(
            f"no Python with wyoming-omnivoice installed at {python}: set "
            "WYOMING_OMNIVOICE_PYTHON to the python of a venv made with "
            "pip install -e '.[cpu]' (see tests_ha/README.md)"
        )
    return python


def free_port(python: Path) -> int:
    """A free loopback port, found by a child process (sockets are blocked in this one)."""
    code = ("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); "
            "print(s.getsockname()[1]); s.close()")
    return int(subprocess.run([str(python), "-c", code], check=True, capture_output=True,
                              text=True).stdout)


@dataclass
class Server:
    """The ``python -m wyoming_omnivoice`` subprocess on the tiny model."""

    port: int
    log_path: Path
    process: subprocess.Popen[bytes]

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One real server for the whole run (start-up builds voice anchors once)."""
    work = tmp_path_factory.mktemp("omnivoice")
    python = server_python()
    port = free_port(python)
    log_path = work / "server.log"
    argv = [
        str(python), "-m", "wyoming_omnivoice",
        "--uri", f"tcp://127.0.0.1:{port}", "--model-dir", str(TINY_MODEL),
        "--device", "cpu", "--data-dir", str(work / "data"), "--debug",
    ]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with log_path.open("wb") as log:
        process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=log,
                                   stderr=subprocess.STDOUT, env=env)
    server = Server(port, log_path, process)
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "Ready" not in server.log:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}:\n{server.log}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"server not ready after {READY_TIMEOUT_S} s:\n{server.log}")
            time.sleep(0.2)
        yield server
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def ha_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Error records that Home Assistant (or anything in-process) logged in this test's
    set-up, call and teardown so far (``caplog.records`` alone is the current phase only)."""
    records = [*caplog.get_records("setup"), *caplog.get_records("call"), *caplog.records]
    return [f"{record.levelname} {record.name}: {record.getMessage()}"
            for record in dict.fromkeys(records) if is_a_problem(record)]


#: Loggers whose warnings are problems too: the integration's "Unexpected disconnection
#: from TTS client" and tts' conversion messages point at the server.
STRICT_LOGGERS = ("homeassistant.components.wyoming", "homeassistant.components.tts")


def is_a_problem(record: logging.LogRecord) -> bool:
    if record.levelno >= logging.ERROR:
        return True
    return record.levelno >= logging.WARNING and record.name.startswith(STRICT_LOGGERS)


@pytest.fixture
def ha_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Home Assistant's log of this test; the test fails if it holds an error (or a warning
    of the wyoming or tts integration)."""
    caplog.set_level(logging.INFO)
    yield caplog
    errors = ha_errors(caplog)
    assert not errors, "Home Assistant logged errors:\n" + "\n".join(errors)


async def add_server_through_config_flow(hass: HomeAssistant, port: int) -> str:
    """The user's path: Settings > Add integration > Wyoming, host and port; the entry id."""
    result = await hass.config_entries.flow.async_init("wyoming", context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"host": "127.0.0.1", "port": port})
    assert result["type"] is FlowResultType.CREATE_ENTRY, result
    await hass.async_block_till_done()
    entry_id: str = result["result"].entry_id
    return entry_id


@dataclass
class HomeAssistantWithServer:
    hass: HomeAssistant
    entry_id: str
    entity_id: str
    server: Server


@pytest.fixture
async def ha(hass: HomeAssistant, server: Server, tmp_path: Path,
             ha_log: pytest.LogCaptureFixture, socket_enabled: None
             ) -> AsyncIterator[HomeAssistantWithServer]:
    """Home Assistant with our server added as a user would add it.

    ``socket_enabled`` lets Home Assistant open sockets; connections stay limited to
    127.0.0.1 by the plugin's ``allow_hosts`` guard.
    """
    hass.config.config_dir = str(tmp_path)  # tts' file cache goes here, not site-packages
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(
        hass, "ffmpeg", {"ffmpeg": {"ffmpeg_bin": imageio_ffmpeg.get_ffmpeg_exe()}})
    entry_id = await add_server_through_config_flow(hass, server.port)
    entity_ids = [state.entity_id for state in hass.states.async_all("tts")]
    assert len(entity_ids) == 1, entity_ids
    yield HomeAssistantWithServer(hass, entry_id, entity_ids[0], server)
