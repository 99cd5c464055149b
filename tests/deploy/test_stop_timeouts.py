"""Every deployment waits longer after SIGTERM than the server drains, so a container stop
lets the requests in progress finish (issue 23: Docker's default 10 s cut every CPU reply).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from wyoming_omnivoice.app.flags import SHUTDOWN_TIMEOUT_S

ROOT = Path(__file__).resolve().parents[2]
#: What the server needs after the drain: closing connections, writing the last events.
MARGIN_S = 5


def test_compose_stop_grace_period_exceeds_the_gpu_drain() -> None:
    service = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())["services"]
    grace = service["omnivoice"]["stop_grace_period"]
    assert re.fullmatch(r"\d+s", grace)
    assert int(grace[:-1]) >= SHUTDOWN_TIMEOUT_S["cuda"] + MARGIN_S


def test_addon_timeout_and_s6_grace_exceed_the_cpu_drain() -> None:
    config = yaml.safe_load((ROOT / "docker" / "addon" / "config.yaml").read_text())
    assert config["timeout"] >= SHUTDOWN_TIMEOUT_S["cpu"] + MARGIN_S
    dockerfile = (ROOT / "docker" / "addon" / "Dockerfile").read_text()
    match = re.search(r"S6_SERVICES_GRACETIME=(\d+)", dockerfile)
    assert match is not None, "s6 kills a service 3 s after SIGTERM by default"
    grace_s = int(match.group(1)) / 1000
    assert SHUTDOWN_TIMEOUT_S["cpu"] + MARGIN_S <= grace_s < config["timeout"]


def test_readme_docker_run_lines_set_a_stop_timeout() -> None:
    lines = [line for line in (ROOT / "README.md").read_text().splitlines()
             if line.startswith("docker run ")]
    assert lines
    for line in lines:
        match = re.search(r"--stop-timeout (\d+)", line)
        assert match is not None, line
        device = "cuda" if "--gpus" in line else "cpu"
        assert int(match.group(1)) >= SHUTDOWN_TIMEOUT_S[device] + MARGIN_S, line
