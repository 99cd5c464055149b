"""Soak the Wyoming server: many mixed requests from concurrent clients, then look for leaks.

Starts ``python -m wyoming_omnivoice`` on a free loopback port (tiny model by default) and
sends ``--requests`` requests from ``--clients`` concurrent clients, mixing:

- one-shot ``synthesize`` (one or several sentences),
- streaming ``synthesize-start``/``-chunk``/``-stop`` in small fragments,
- streams the client abandons mid-way (it closes the connection after the first audio, or
  before any),
- ``describe``.

Every valid request must complete with correct audio: exactly the expected audio cycles,
16-bit mono 24 kHz, full-size chunks, non-silent, and a stream must end with
``synthesize-stopped``. A warm-up round (every kind at full concurrency) runs first; the
script then prints the server's resident memory after warm-up and at the end (the end must
be within ``--rss-tolerance``, default 10 %), and its open file descriptors and threads
before and after (they must come back to the warm-up values). Both snapshots are taken with
the server at rest (:func:`benchmarks.process_probes.settled_snapshot`: no CPU used for a
window longer than the worker's wait before it returns its free heap), so they compare what
the server keeps, not the work of a vanished client still decoding or its last burst's free
heap. Exit status 1 when any check fails.

Usage::

    python -m benchmarks.soak                      # 1,000 requests, 8 clients, tiny model
    python -m benchmarks.soak --requests 200 --model-dir /path/to/model --device cuda

The test suite runs a 60-request version (tests/wyoming_protocol/test_soak.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from benchmarks.process_probes import Snapshot, rss_kib, settled_snapshot

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "tiny"
RATE, WIDTH, CHANNELS = 24000, 2, 1
SAMPLES_PER_CHUNK = 1024
READ_TIMEOUT_S = 300.0

SENTENCES = [
    "Turned on the kitchen lights.",
    "The living room is at twenty one degrees.",
    "Your timer is done.",
    "It will rain tomorrow afternoon, so take an umbrella.",
    "The front door is locked.",
    "Playing your morning playlist.",
]
KINDS = ("one-shot", "stream", "abandon-stream", "describe")
WEIGHTS = (0.4, 0.3, 0.15, 0.15)


# --------------------------------------------------------------------------- requests


class Failure(AssertionError):
    """A valid request did not complete correctly."""


async def _read(client: AsyncClient) -> Event:
    event = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
    if event is None:
        raise Failure("server closed the connection")
    return event


async def _read_until(client: AsyncClient, end: str) -> list[Event]:
    events = []
    while True:
        event = await _read(client)
        if event.type == "error":
            raise Failure(f"error event: {event.data}")
        events.append(event)
        if event.type == end:
            return events


CHUNK_BYTES = SAMPLES_PER_CHUNK * WIDTH


def check_audio(events: list[Event], cycles: int, *, at_least: int | None = None) -> float:
    """Validate audio cycles (``cycles`` of them, or ``at_least`` to ``cycles``: the server
    may speak a stream's later sentences in one cycle when its pacing merges them); return
    seconds of audio."""
    found = 0
    samples = 0
    current: list[Event] | None = None
    for event in events:
        if event.type == "audio-start":
            if current is not None:
                raise Failure("audio-start inside an open cycle")
            data = event.data
            if (data.get("rate"), data.get("width"), data.get("channels")) != \
                    (RATE, WIDTH, CHANNELS):
                raise Failure(f"bad audio format {data}")
            current = []
        elif event.type == "audio-chunk":
            if current is None:
                raise Failure("audio-chunk outside a cycle")
            current.append(event.payload or b"")
        elif event.type == "audio-stop":
            if not current:
                raise Failure("an audio cycle without audio")
            # The gap guard's silences (--max-gap: a slow host, or a loaded one) are chunks of
            # zeros of their own length, anywhere in the cycle; the audio's chunks are whole
            # but the last.
            audio = [c for c in current if c.count(0) != len(c) or len(c) == CHUNK_BYTES]
            silences = [c for c in current if c.count(0) == len(c) and len(c) != CHUNK_BYTES]
            if not audio:
                raise Failure("silent audio")
            sizes = [len(c) for c in audio]
            if any(s != CHUNK_BYTES for s in sizes[:-1]) or sizes[-1] % 2 or \
                    not 0 < sizes[-1] <= CHUNK_BYTES or any(len(c) % 2 for c in silences):
                raise Failure(f"bad chunk sizes {[len(c) for c in current]}")
            pcm = b"".join(audio)
            if pcm.count(0) == len(pcm):
                raise Failure("silent audio")
            samples += len(pcm) // WIDTH
            found += 1
            current = None
    low = cycles if at_least is None else at_least
    if current is not None or not low <= found <= cycles:
        wanted = f"{cycles}" if low == cycles else f"{low} to {cycles}"
        raise Failure(f"expected {wanted} complete audio cycle(s), got {found}")
    return samples / RATE


async def one_shot(uri: str, rng: random.Random) -> float:
    text = " ".join(rng.sample(SENTENCES, rng.randint(1, 2)))
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text).event())
        return check_audio(await _read_until(client, "audio-stop"), 1)


async def stream(uri: str, rng: random.Random) -> float:
    sentences = rng.sample(SENTENCES, rng.randint(1, 3))
    text = " ".join(sentences) + " "
    cut = sorted(rng.sample(range(1, len(text)), 4))
    pieces = [text[a:b] for a, b in zip([0, *cut], [*cut, len(text)], strict=True)]
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(SynthesizeStart().event())
        for piece in pieces:
            await client.write_event(SynthesizeChunk(text=piece).event())
        await client.write_event(Synthesize(text=text).event())
        await client.write_event(SynthesizeStop().event())
        return check_audio(await _read_until(client, "synthesize-stopped"), len(sentences),
                           at_least=1)


async def abandon_stream(uri: str, rng: random.Random) -> float:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk(text=" ".join(SENTENCES[:3]) + " ").event())
        if rng.random() < 0.5:
            event = await _read(client)  # wait for audio to start flowing, then vanish
            if event.type != "audio-start":
                raise Failure(f"expected audio-start, got {event.type}")
    return 0.0


async def describe(uri: str, rng: random.Random) -> float:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        event = await _read(client)
        if event.type != "info" or not event.data["tts"][0]["installed"]:
            raise Failure(f"bad describe answer: {event.type}")
    return 0.0


RUNNERS = {"one-shot": one_shot, "stream": stream, "abandon-stream": abandon_stream,
           "describe": describe}


@dataclass
class Totals:
    done: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    audio_s: float = 0.0


async def run_mix(uri: str, requests: int, clients: int, seed: int,
                  kinds: list[str] | None = None) -> Totals:
    """``requests`` requests of random kinds from ``clients`` concurrent workers."""
    rng = random.Random(seed)
    plan = kinds or rng.choices(KINDS, weights=WEIGHTS, k=requests)
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for index, kind in enumerate(plan):
        queue.put_nowait((index, kind))
    totals = Totals()

    async def client_loop() -> None:
        while not queue.empty():
            index, kind = queue.get_nowait()
            try:
                totals.audio_s += await RUNNERS[kind](uri, random.Random(seed * 100003 + index))
                totals.done[kind] += 1
            except (Failure, OSError, TimeoutError) as err:
                totals.failures.append(f"request {index} ({kind}): {err!r}")

    await asyncio.gather(*(client_loop() for _ in range(clients)))
    return totals


# --------------------------------------------------------------------------- driver


@dataclass
class SoakReport:
    requests: int
    clients: int
    wall_s: float
    totals: Totals
    warm: Snapshot
    end: Snapshot
    #: (requests done, resident KiB) after each slice of the main phase.
    trajectory: list[tuple[int, int]] = field(default_factory=list)

    @property
    def rss_ratio(self) -> float:
        return self.end.rss_kib / self.warm.rss_kib

    def problems(self, rss_tolerance: float) -> list[str]:
        found = list(self.totals.failures)
        if abs(self.rss_ratio - 1.0) > rss_tolerance:
            found.append(f"resident memory {self.warm.rss_kib} -> {self.end.rss_kib} KiB "
                         f"({(self.rss_ratio - 1) * 100:+.1f} %) is beyond "
                         f"{rss_tolerance * 100:.0f} %")
        if self.end.fds > self.warm.fds:
            found.append(f"file descriptors leaked: {self.warm.fds} -> {self.end.fds}")
        if self.end.threads > self.warm.threads:
            found.append(f"threads leaked: {self.warm.threads} -> {self.end.threads}")
        return found

    def lines(self) -> list[str]:
        done = self.totals.done
        return [
            f"requests       {self.requests} from {self.clients} clients in "
            f"{self.wall_s:.1f} s ({self.requests / self.wall_s:.1f} req/s)",
            "completed      " + ", ".join(f"{k} {done[k]}" for k in KINDS),
            f"failures       {len(self.totals.failures)}",
            f"audio          {self.totals.audio_s:.1f} s",
            f"resident mem   warm {self.warm.rss_kib / 1024:.1f} MiB -> end "
            f"{self.end.rss_kib / 1024:.1f} MiB ({(self.rss_ratio - 1) * 100:+.1f} %)",
            "rss by request " + " ".join(f"{n}:{kib / 1024:.0f}" for n, kib in
                                          self.trajectory) + " (MiB)",
            f"open fds       {self.warm.fds} -> {self.end.fds}",
            f"threads        {self.warm.threads} -> {self.end.threads}",
        ]


async def soak(uri: str, pid: int, requests: int, clients: int, seed: int = 1) -> SoakReport:
    # Warm-up: every kind at full concurrency, so arenas and batch shapes are allocated.
    warm_kinds = [KINDS[i % len(KINDS)] for i in range(max(2 * clients, 16))]
    warm_totals = await run_mix(uri, len(warm_kinds), clients, seed + 7, kinds=warm_kinds)
    first = await settled_snapshot(pid, None)
    warm = await settled_snapshot(pid, first)
    started = time.monotonic()
    totals = Totals()
    trajectory = []
    slice_size = 100
    for offset in range(0, requests, slice_size):
        part = await run_mix(uri, min(slice_size, requests - offset), clients, seed + offset)
        totals.done.update(part.done)
        totals.failures.extend(part.failures)
        totals.audio_s += part.audio_s
        trajectory.append((offset + min(slice_size, requests - offset), rss_kib(pid)))
    wall = time.monotonic() - started
    totals.failures[:0] = [f"warm-up {f}" for f in warm_totals.failures]
    end = await settled_snapshot(pid, warm)
    return SoakReport(requests, clients, wall, totals, warm, end, trajectory)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(model_dir: Path, device: str, data_dir: Path, extra: list[str],
                 log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    uri = f"tcp://127.0.0.1:{port}"
    log = log_path.open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "wyoming_omnivoice", "--uri", uri, "--model-dir",
         str(model_dir), "--device", device, "--data-dir", str(data_dir), *extra],
        cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 600
    while "Ready" not in log_path.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"server did not start:\n{log_path.read_text()[-4000:]}")
        time.sleep(0.2)
    return process, uri


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--model-dir", type=Path, default=TINY_MODEL)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rss-tolerance", type=float, default=0.10)
    parser.add_argument("--json", action="store_true", help="also print a JSON summary")
    parser.add_argument("server_args", nargs="*", help="extra server flags after --")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        data_dir = args.data_dir or Path(tmp) / "data"
        log_path = Path(tmp) / "server.log"
        process, uri = start_server(args.model_dir, args.device, data_dir, args.server_args,
                                    log_path)
        try:
            report = asyncio.run(soak(uri, process.pid, args.requests, args.clients,
                                      args.seed))
        finally:
            process.send_signal(signal.SIGTERM)
            code = process.wait(60)
        for line in report.lines():
            print(line)
        problems = report.problems(args.rss_tolerance)
        if code != 0:
            problems.append(f"server exited with {code} on SIGTERM")
        if args.json:
            print(json.dumps({"requests": report.requests, "clients": report.clients,
                              "wall_s": report.wall_s, "done": dict(report.totals.done),
                              "failures": report.totals.failures,
                              "rss_warm_kib": report.warm.rss_kib,
                              "rss_end_kib": report.end.rss_kib,
                              "fds": [report.warm.fds, report.end.fds],
                              "threads": [report.warm.threads, report.end.threads]}))
        for problem in problems[:20]:
            print(f"PROBLEM: {problem}")
        print("RESULT: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
