"""The Home Assistant add-on built exactly as the Supervisor builds a local add-on, then run,
with a real Docker daemon (issue 33, item 4; issue 39).

The build: ``tools.release.addon_folder`` writes the add-on folder with this checkout's
wheel inside it (what a household copies to ``/addons/omnivoice``), and the Supervisor's
own command for that folder (``addon_folder.supervisor_command``, written down from
``supervisor/apps/build.py``) builds it: the folder as the only context, build.yaml's
``BUILD_FROM`` and the ``BUILD_VERSION`` and ``BUILD_ARCH`` the Supervisor adds, its
``io.hass.*`` labels, its ``local/amd64-addon-omnivoice:VERSION`` tag, nothing else. Two
differences, both forced by this machine: Debian's client runs it as ``docker build`` with
BuildKit (it has no buildx plugin; the flags are the same), and without ``--pull``, since
Home Assistant's base cannot be pulled here: ``docker_images.addon_base`` stands in for it
(Debian trixie from debootstrap, ``ca-certificates``, a ``/command/with-contenv`` that runs
its arguments; no s6-overlay ``/init``, no bashio), tagged under build.yaml's exact
``build_from`` name so that the build uses that name unchanged.

The container then runs the add-on's start script (``s6-rc.d/omnivoice/run``) with an
``/data/options.json`` such as the Supervisor writes and a stand-in Supervisor on the host
(reached as ``supervisor``, as in an add-on): the server gets the options as flags, runs
as uid 10200 (not root), answers a Wyoming synthesis, the image's health check reports
healthy, the ``discovery`` script posts the Wyoming discovery message, and ``docker stop``
ends it with exit code 0. Skipped, with the reason, where no Docker daemon answers
(``OMNIVOICE_REQUIRE_DOCKER=1`` makes that a failure). The build time, the image size and
the time to healthy are printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
import yaml
from conftest import TINY_MODEL, synthesize
from wyoming.audio import AudioChunk

from tests.deploy import docker_images as di
from tests.deploy.supervisor_stand_in import SupervisorStandIn
from tools.release import addon_folder

pytestmark = pytest.mark.slow

ARCH = "amd64"
S6 = "/etc/s6-overlay/s6-rc.d"
HEALTHY_TIMEOUT_S = 180.0
TOKEN = "0123456789abcdef0123456789abcdef"
#: What the Supervisor writes from the add-on's options (config.yaml's defaults, a few
#: changed so that the flags show they were read).
OPTIONS = {
    "voice": "en-male-young",
    "precision": "int8",
    "num_steps": 8,
    "guidance_scale": 1.5,
    "preload_languages": "en",
    "max_gap": 3.0,
    "lead_in_ms": 200,
    "debug": False,
}


@pytest.fixture(scope="module")
def addon_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    problem = di.daemon_problem()
    if problem:
        if os.environ.get("OMNIVOICE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"OMNIVOICE_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
    start = time.monotonic()
    stand_in = di.addon_base()
    build_from = addon_folder.supervisor_build_args(addon_folder.ADDON, ARCH)["BUILD_FROM"]
    di.stand_in_as(stand_in, build_from)
    print(f"\n[addon] stand-in base {stand_in} as {build_from}, "
          f"ready in {time.monotonic() - start:.1f} s")
    folder = addon_folder.write(tmp_path_factory.mktemp("addons") / "omnivoice")
    command = addon_folder.supervisor_command(folder, ARCH, addon_folder.local_tag(folder, ARCH))
    built = di.supervisor_build(command, folder)
    print(f"[addon] built {built.tag} from its folder alone in {built.seconds:.1f} s, "
          f"image size {built.size_bytes / 2**20:.0f} MiB")
    return built.tag


def test_the_build_is_the_supervisors(addon_image: str) -> None:
    """The image carries the Supervisor's labels and the version it was built for."""
    labels = json.loads(di.docker("image", "inspect", "--format", "{{json .Config.Labels}}",
                                  addon_image).stdout)
    config = yaml.safe_load((addon_folder.ADDON / "config.yaml").read_text(encoding="utf-8"))
    assert labels["io.hass.version"] == config["version"]
    assert labels["io.hass.arch"] == ARCH and labels["io.hass.type"] == "app"
    assert labels["io.hass.name"] == config["name"]
    assert addon_image == f"local/{ARCH}-addon-{config['slug']}:{config['version']}"
    version = di.docker("run", "--rm", "--entrypoint", "/usr/src/.venv/bin/python3",
                        addon_image, "-c",
                        "import wyoming_omnivoice; print(wyoming_omnivoice.__version__)")
    assert version.stdout.strip() == config["version"]


def test_addon_serves_as_its_own_user_announces_itself_and_stops(
        addon_image: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "options.json").write_text(json.dumps(OPTIONS), encoding="utf-8")
    supervisor = SupervisorStandIn(TOKEN, language="en-US", host=di.bridge_gateway())
    started = time.monotonic()
    container = di.docker(
        "run", "-d", "-p", "127.0.0.1::10200",
        "-v", f"{TINY_MODEL}:/model:ro", "-v", f"{data}:/data",
        # The Supervisor's name inside an add-on, and its token.
        "--add-host", "supervisor:host-gateway", "-e", f"SUPERVISOR_TOKEN={TOKEN}",
        "-e", f"OMNIVOICE_HA_CONFIG_URL=http://supervisor:{supervisor.port}/core/api/config",
        # The model cannot be downloaded here: the server command the script execs, with
        # the tiny model (the script's own override for tests).
        "-e", "OMNIVOICE_SERVER=/usr/src/.venv/bin/python3 -m wyoming_omnivoice "
              "--model-dir /model",
        "--health-interval", "1s", "--entrypoint", f"{S6}/omnivoice/run",
        addon_image).stdout.strip()
    try:
        _wait_healthy(container)
        print(f"[addon] start script to healthy: {time.monotonic() - started:.1f} s")

        argv = di.docker("exec", container, "cat", "/proc/1/cmdline").stdout.split("\0")
        flags = " ".join(argv)
        for expected in ("--voice en-male-young", "--precision int8", "--num-steps 8",
                         "--guidance-scale 1.5", "--preload-languages en", "--max-gap 3.0",
                         "--data-dir /data", "--device cpu", "--web-ingress"):
            assert expected in flags, (expected, argv)
        assert "--debug" not in argv
        assert supervisor.seen == [f"GET /core/api/config {TOKEN}"]

        status = di.docker("exec", container, "cat", "/proc/1/status").stdout
        uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
        assert uid_line.split()[1:] == ["10200"] * 4, uid_line
        assert (data / "options.json").stat().st_uid == 10200  # /data handed to the server

        uri = f"tcp://127.0.0.1:{di.published_port(container)}"
        events = asyncio.run(synthesize(uri, "Turned on the kitchen lights."))
        audio = b"".join(AudioChunk.from_event(e).audio for e in events
                         if e.type == "audio-chunk")
        assert events[-1].type == "audio-stop" and audio

        discovery = di.docker("exec", "-e", f"OMNIVOICE_SUPERVISOR_URL=http://supervisor:"
                              f"{supervisor.port}", container, f"{S6}/discovery/run")
        hostname = di.docker("inspect", "--format", "{{.Config.Hostname}}",
                             container).stdout.strip()
        assert supervisor.discovered == [
            {"service": "wyoming", "config": {"uri": f"tcp://{hostname}:10200"}}]
        assert supervisor.seen[-1] == f"POST /discovery {TOKEN}"
        assert "Home Assistant discovers the OmniVoice service" in discovery.stderr
        refused = di.docker("exec", "-e", f"OMNIVOICE_SUPERVISOR_URL=http://supervisor:"
                            f"{supervisor.port}", "-e", "SUPERVISOR_TOKEN=wrong", container,
                            f"{S6}/discovery/run")  # logged, never fatal: exit code 0
        assert "could not send the discovery message" in refused.stderr, refused.stderr
        assert len(supervisor.discovered) == 1

        di.docker("stop", "-t", "75", container, timeout=200)
        state = di.container_state(container)
        assert state["ExitCode"] == 0, (state, _logs(container))
    finally:
        di.remove(container)
        supervisor.close()


def _wait_healthy(container: str) -> None:
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    while True:
        state = di.container_state(container)
        health = state.get("Health")
        if isinstance(health, dict) and health.get("Status") == "healthy":
            return
        assert state.get("Status") == "running" and time.monotonic() < deadline, (
            state, _logs(container))
        time.sleep(0.5)


def _logs(container: str) -> str:
    result = di.docker("logs", container, check=False)
    return (result.stdout + result.stderr)[-4000:]
