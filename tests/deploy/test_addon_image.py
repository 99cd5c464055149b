"""The Home Assistant add-on's image built and its start script run, with a real Docker
daemon (issue 33, item 4).

Home Assistant's base image cannot be pulled here: ``docker_images.addon_base`` stands in
for it (Debian trixie from debootstrap, ``ca-certificates``, a ``/command/with-contenv``
that runs its arguments; no s6-overlay ``/init``, no bashio; each named there). The add-on's
own ``docker/addon/Dockerfile`` builds on it unchanged, from its own folder as the
Supervisor does, installing this checkout's wheel (served on loopback) through its
``WYOMING_OMNIVOICE_PIP`` build argument.

The container then runs the add-on's start script (``s6-rc.d/omnivoice/run``) with an
``/data/options.json`` such as the Supervisor writes: the server gets the options as flags,
answers a Wyoming synthesis, the image's health check reports healthy, and ``docker stop``
ends it with exit code 0. Skipped, with the reason, where no Docker daemon answers
(``OMNIVOICE_REQUIRE_DOCKER=1`` makes that a failure).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, TINY_MODEL, synthesize
from wyoming.audio import AudioChunk

from tests.deploy import docker_images as di

pytestmark = pytest.mark.slow

ADDON = REPO_ROOT / "docker" / "addon"
RUN_SCRIPT = "/etc/s6-overlay/s6-rc.d/omnivoice/run"
HEALTHY_TIMEOUT_S = 180.0
#: What the Supervisor writes from the add-on's options (config.yaml's defaults, a few
#: changed so that the flags show they were read).
OPTIONS = {
    "voice": "en-male-young",
    "precision": "int8",
    "num_steps": 8,
    "guidance_scale": 1.5,
    "preload_languages": "en",
    "max_gap": 3.0,
    "debug": False,
}


@pytest.fixture(scope="module")
def addon_image() -> str:
    problem = di.daemon_problem()
    if problem:
        if os.environ.get("OMNIVOICE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"OMNIVOICE_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
    start = time.monotonic()
    base = di.addon_base()
    print(f"\n[addon] stand-in base {base} ready in {time.monotonic() - start:.1f} s")
    with di.served_wheel(REPO_ROOT) as requirement:
        built = di.build(ADDON / "Dockerfile", "wyoming-omnivoice:addon-test", ADDON,
                         {"BUILD_FROM": base, "WYOMING_OMNIVOICE_PIP": requirement},
                         network_host=True)
    print(f"[addon] built {built.tag} in {built.seconds:.1f} s, "
          f"image size {built.size_bytes / 2**20:.0f} MiB")
    return built.tag


def test_addon_start_script_serves_with_its_options(addon_image: str, tmp_path: Path
                                                    ) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "options.json").write_text(json.dumps(OPTIONS), encoding="utf-8")
    started = time.monotonic()
    container = di.docker(
        "run", "-d", "-p", "127.0.0.1::10200",
        "-v", f"{TINY_MODEL}:/model:ro", "-v", f"{data}:/data",
        # The model cannot be downloaded here: the server command the script execs, with
        # the tiny model (the script's own override for tests).
        "-e", "OMNIVOICE_SERVER=/usr/src/.venv/bin/python3 -m wyoming_omnivoice "
              "--model-dir /model",
        "--health-interval", "1s", "--entrypoint", RUN_SCRIPT, addon_image).stdout.strip()
    try:
        deadline = time.monotonic() + HEALTHY_TIMEOUT_S
        while True:
            state = di.container_state(container)
            health = state.get("Health")
            if isinstance(health, dict) and health.get("Status") == "healthy":
                break
            assert state.get("Status") == "running" and time.monotonic() < deadline, (
                state, _logs(container))
            time.sleep(0.5)
        print(f"[addon] start script to healthy: {time.monotonic() - started:.1f} s")

        argv = di.docker("exec", container, "cat", "/proc/1/cmdline").stdout.split("\0")
        flags = " ".join(argv)
        for expected in ("--voice en-male-young", "--precision int8", "--num-steps 8",
                         "--guidance-scale 1.5", "--preload-languages en", "--max-gap 3.0",
                         "--data-dir /data", "--device cpu", "--web-ingress"):
            assert expected in flags, (expected, argv)
        assert "--debug" not in argv

        uri = f"tcp://127.0.0.1:{di.published_port(container)}"
        events = asyncio.run(synthesize(uri, "Turned on the kitchen lights."))
        audio = b"".join(AudioChunk.from_event(e).audio for e in events
                         if e.type == "audio-chunk")
        assert events[-1].type == "audio-stop" and audio

        di.docker("stop", "-t", "75", container, timeout=200)
        state = di.container_state(container)
        assert state["ExitCode"] == 0, (state, _logs(container))
    finally:
        di.remove(container)


def _logs(container: str) -> str:
    result = di.docker("logs", container, check=False)
    return (result.stdout + result.stderr)[-4000:]
