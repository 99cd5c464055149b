"""Three tiny-model replicas behind a real HAProxy (deploy/haproxy/haproxy.cfg), many clients.

A short run of benchmarks/replicas.py's phases with their outcomes checked (no timing):
identical audio from every replica in deterministic mode, load spread over all replicas, a
SIGTERM drain that loses nothing it accepted, a SIGKILL that fails only the requests in
flight on that replica while a reconnecting client is served.

HAProxy comes from the Debian package ``haproxy``; .ci/run installs it and sets
OMNIVOICE_REQUIRE_HAPROXY=1, so there a missing haproxy fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import REPO_ROOT, TINY_MODEL

from benchmarks import replicas

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

REQUESTS = 12
CLIENTS = 6


def need_haproxy() -> None:
    if shutil.which("haproxy") is None:
        message = "haproxy is not installed (apt-get install haproxy)"
        if os.environ.get("OMNIVOICE_REQUIRE_HAPROXY") == "1":
            pytest.fail(message)
        pytest.skip(message)


def test_haproxy_config_renders_to_loopback_ports() -> None:
    template = (REPO_ROOT / "deploy" / "haproxy" / "haproxy.cfg").read_text()
    assert "mode tcp" in template
    assert "tcp-check send-binary" in template
    describe = bytes.fromhex(template.split("tcp-check send-binary")[1].split()[0])
    assert describe == b'{"type": "describe"}\n'
    text = replicas.render_haproxy_config(template, 4000, [4001, 4002])
    assert "bind 127.0.0.1:4000" in text
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server")]
    assert [words[2] for words in servers] == ["127.0.0.1:4001", "127.0.0.1:4002"]


async def test_replicas_behind_haproxy(tmp_path: Path) -> None:
    need_haproxy()
    server_args = ["--model-dir", str(TINY_MODEL), "--device", "cpu",
                   "--shutdown-timeout", "60"]
    async with replicas.Cluster(tmp_path, 3, server_args) as cluster:
        # identical audio from every replica (each built its anchors in its own data dir)
        identity, digests = await replicas.phase_identity(cluster)
        assert identity.failures == 0
        assert identity.notes["distinct_audio_per_text"] == 1
        assert len(digests) == 2  # two texts, one audio each
        data_dirs = {replica.data_dir for replica in cluster.replicas}
        assert len(data_dirs) == 3 and all((d / "anchors").is_dir() for d in data_dirs)

        spread = await replicas.phase_spread(cluster, REQUESTS, CLIENTS)
        assert spread.failures == 0
        per_replica = [int(count) for count in str(spread.notes["per_replica"]).split("/")]
        assert sum(per_replica) == REQUESTS
        assert all(count >= 1 for count in per_replica), per_replica

        sigterm = await replicas.phase_sigterm(cluster, REQUESTS, CLIENTS)
        assert sigterm.notes["in_flight_at_signal"] >= 1
        assert sigterm.notes["exit_code"] == 0  # drained and exited cleanly
        assert sigterm.lost == 0  # nothing the draining replica accepted was lost
        assert set(sigterm.refused) <= {"shutting-down"}
        assert sigterm.failures == sum(sigterm.refused.values())
        assert sigterm.failures == sigterm.retries_served  # and those were served elsewhere

        # (the benchmark restarts the drained replica first; here two are left, one killed)
        sigkill = await replicas.phase_sigkill(cluster, REQUESTS, CLIENTS)
        assert sigkill.notes["in_flight_at_kill"] >= 1
        assert sigkill.notes["failed_started_after_kill"] == 0  # new connections elsewhere
        assert sigkill.refused == {}  # failures are broken connections, not errors
        assert sigkill.failures == sigkill.lost
        assert sigkill.failures == sigkill.retries_served  # a client that reconnects is served
