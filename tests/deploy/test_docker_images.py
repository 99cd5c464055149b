"""The CPU image built and run with a real Docker daemon (issue 33, item 4).

The base comes from debootstrap (``docker_images.python_base``, cached between runs), the
image from ``docker/Dockerfile.cpu`` with BuildKit. The containers serve the tiny test model
mounted read-only, and a real ``wyoming`` client talks to them:

- a synthesis returns audio; the image's health check reports healthy; the server (PID 1,
  the entrypoint ``exec``s it) runs as uid 10200, not root;
- ``docker stop`` in the middle of a streamed reply (the stream still open, so the request
  is in progress): the server waits for it, the client sends the rest, gets its audio, its
  ``audio-stop`` and ``synthesize-stopped``, and the server exits 0 (not 137: not killed at
  the end of the grace);
- the data volume survives: a second container on it uses the first one's prepared int8
  backbone and voice anchors (the same files, nothing made again).

Skipped, with the reason, where no Docker daemon answers; ``OMNIVOICE_REQUIRE_DOCKER=1``
(set by .ci/run, which starts dockerd as root) turns that skip into a failure. The build
time, the image size and the time from start to healthy are printed (``pytest -s``).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
import uuid
from collections.abc import Iterator

import pytest
from conftest import REPO_ROOT, TINY_MODEL, read_until, synthesize
from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.tts import SynthesizeChunk, SynthesizeStart, SynthesizeStop

from tests.deploy import docker_images as di

pytestmark = pytest.mark.slow

#: ``docker stop``'s grace: above the server's drain on the CPU (--shutdown-timeout 60 s),
#: like the add-on's ``timeout: 75``.
STOP_GRACE_S = 75
#: Safety limit for a container to become healthy (the tiny model is ready in seconds).
HEALTHY_TIMEOUT_S = 180.0


@pytest.fixture(scope="module")
def cpu_image() -> str:
    problem = di.daemon_problem()
    if problem:
        if os.environ.get("OMNIVOICE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"OMNIVOICE_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
    start = time.monotonic()
    base = di.python_base()
    print(f"\n[docker] base {base} ready in {time.monotonic() - start:.1f} s")
    built = di.build(REPO_ROOT / "docker" / "Dockerfile.cpu", "wyoming-omnivoice:cpu-test",
                     REPO_ROOT, {"BASE_IMAGE": base})
    print(f"[docker] built {built.tag} in {built.seconds:.1f} s, "
          f"image size {built.size_bytes / 2**20:.0f} MiB")
    return built.tag


@pytest.fixture
def volume(cpu_image: str) -> Iterator[str]:
    name = f"omnivoice-test-{uuid.uuid4().hex[:8]}"
    di.docker("volume", "create", name)
    yield name
    di.docker("volume", "rm", "-f", name, check=False)


def run_container(image: str, volume: str) -> tuple[str, float]:
    """Start the server container; (its id, the monotonic time it was started)."""
    started = time.monotonic()
    container = di.docker(
        "run", "-d", "-p", "127.0.0.1::10200",
        "-v", f"{TINY_MODEL}:/model:ro", "-v", f"{volume}:/data",
        # The image's own check, run every second instead of every 30 s.
        "--health-interval", "1s",
        image, "--device", "cpu", "--model-dir", "/model").stdout.strip()
    return container, started


def wait_healthy(container: str) -> None:
    deadline = time.monotonic() + HEALTHY_TIMEOUT_S
    while time.monotonic() < deadline:
        state = di.container_state(container)
        health = state.get("Health")
        if isinstance(health, dict) and health.get("Status") == "healthy":
            return
        if state.get("Status") != "running":
            break
        time.sleep(0.5)
    logs = di.docker("logs", container, check=False)
    pytest.fail(f"{container[:12]} not healthy: {di.container_state(container)}\n"
                f"{logs.stdout[-3000:]}{logs.stderr[-3000:]}")


def logs(container: str) -> str:
    result = di.docker("logs", container, check=False)
    return result.stdout + result.stderr


def data_files(image: str, volume: str) -> dict[str, str]:
    """path -> "size mtime" of every file in the volume (read by a throwaway container)."""
    listing = di.docker("run", "--rm", "-v", f"{volume}:/data", "--entrypoint", "find", image,
                        "/data", "-type", "f", "-printf", "%p %s %T@\\n").stdout
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1]
            for line in listing.splitlines() if line.strip()}


async def _stream_through_stop(uri: str, container: str) -> list[str]:
    """Event types of a streamed reply (Home Assistant's way) with ``docker stop`` sent in
    its middle: its first sentences sent and spoken, the stream still open (so the request
    is certainly in progress when SIGTERM comes), then the rest and the stream's end."""
    sentences = [f"Sentence number {n} of a reply still being read. " for n in range(1, 9)]
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(SynthesizeStart().event())
        for sentence in sentences[:4]:
            await client.write_event(SynthesizeChunk(text=sentence).event())
        events = await read_until(client, {"audio-chunk", "error"})
        assert events[-1].type == "audio-chunk", [event.type for event in events]
        stopping = asyncio.create_task(asyncio.to_thread(
            di.docker, "stop", "-t", str(STOP_GRACE_S), container,
            timeout=STOP_GRACE_S + 60))
        deadline = time.monotonic() + STOP_GRACE_S
        while "for 1 request(s) in progress" not in logs(container):
            assert time.monotonic() < deadline and not stopping.done(), logs(container)
            await asyncio.sleep(0.2)
        for sentence in sentences[4:]:
            await client.write_event(SynthesizeChunk(text=sentence).event())
        await client.write_event(SynthesizeStop().event())
        events += await read_until(client, {"synthesize-stopped"})
        await stopping
    return [event.type for event in events]


def test_cpu_image_serves_stops_and_keeps_its_data(cpu_image: str, volume: str) -> None:
    first, started = run_container(cpu_image, volume)
    try:
        wait_healthy(first)
        print(f"[docker] start to healthy: {time.monotonic() - started:.1f} s")
        status = di.docker("exec", first, "cat", "/proc/1/status").stdout
        uid_line = next(line for line in status.splitlines() if line.startswith("Uid:"))
        assert uid_line.split()[1:] == ["10200"] * 4, uid_line
        assert "wyoming_omnivoice" in di.docker("exec", first, "cat", "/proc/1/cmdline").stdout

        uri = f"tcp://127.0.0.1:{di.published_port(first)}"
        events = asyncio.run(synthesize(uri, "Turned on the kitchen lights."))
        audio = b"".join(AudioChunk.from_event(e).audio for e in events
                         if e.type == "audio-chunk")
        assert events[-1].type == "audio-stop" and len(audio) > 0
        assert any(e.type == "audio-start" for e in events)

        # The anchors in the background are done before the stop, so the second
        # container's reuse of them says something.
        deadline = time.monotonic() + HEALTHY_TIMEOUT_S
        while "Voice anchors: building" in logs(first) and not _anchors_done(logs(first)):
            assert time.monotonic() < deadline, logs(first)[-3000:]
            time.sleep(0.5)

        types = asyncio.run(_stream_through_stop(uri, first))
        assert types[-2:] == ["audio-stop", "synthesize-stopped"], types
        assert "error" not in types and types.count("audio-start") == types.count("audio-stop")
        print(f"[docker] docker stop during a streamed reply: {types.count('audio-chunk')} "
              "chunks, audio-stop, synthesize-stopped; exit code 0")
        state = di.container_state(first)
        assert state["Status"] == "exited"
        assert state["ExitCode"] == 0 and state["OOMKilled"] is False, state
    finally:
        di.remove(first)

    made = data_files(cpu_image, volume)
    anchors = {path for path in made if path.startswith("/data/anchors/")}
    assert anchors, made
    assert any(path.startswith("/data/prepared/") for path in made), made

    second, started = run_container(cpu_image, volume)
    try:
        wait_healthy(second)
        print(f"[docker] second container (data volume reused), start to healthy: "
              f"{time.monotonic() - started:.1f} s")
        uri = f"tcp://127.0.0.1:{di.published_port(second)}"
        events = asyncio.run(synthesize(uri, "Good night."))
        assert events[-1].type == "audio-stop"
        text = logs(second)
        assert "Preparing the int8 backbone" not in text, text[-3000:]
        assert "Generating the anchor" not in text, text[-3000:]
    finally:
        di.remove(second)
    kept = data_files(cpu_image, volume)
    assert {path: kept.get(path) for path in anchors} == {path: made[path] for path in anchors}


def _anchors_done(text: str) -> bool:
    return bool(re.search(r"Voice anchors: (\d+) of \1 built", text))

