"""Replicas behind a real load balancer: three servers behind HAProxy, many HA-like clients.

Starts ``--replicas`` server processes (tiny model by default, ``--deterministic``, each
with its own data directory and its own metrics port) and HAProxy with
``deploy/haproxy/haproxy.cfg`` (only its addresses and ports rewritten to free loopback
ports), then drives Home Assistant-like clients through HAProxy: one connection per
request, half one-shot ``synthesize``, half streaming (``synthesize-start``, chunks, the
compatibility ``synthesize``, ``synthesize-stop``). Phases:

1. identity: the same requests sent to every replica directly and through HAProxy give
   byte-identical audio (deterministic mode; every replica built its voice anchor itself);
2. spread: ``--requests`` requests from ``--clients`` clients; per-replica counts come from
   each replica's own metrics (``omnivoice_requests_total``);
3. sigterm: a replica gets SIGTERM while it has requests in flight: it finishes them (none
   lost) and exits 0, new connections go to the others;
4. sigkill: a replica is killed while it has requests in flight: only those fail, and the
   client that reconnects is served; requests started after the kill all succeed.

Per phase it prints requests, failures (first attempts not served), lost (a connection
that broke before the request's ending), refusals, retries served, first-audio p50/p95.
A client retries a failed request once (a new connection through HAProxy). HAProxy is
started and stopped by this script; only loopback addresses are used.

Usage::

    python -m benchmarks.replicas                    # 3 replicas, 60 requests, 8 clients
    python -m benchmarks.replicas --requests 200 --clients 16 --json /tmp/replicas.json

tests/deploy/test_replicas_haproxy.py runs a short version and checks the outcomes.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY_MODEL = REPO_ROOT / "tests" / "fixtures" / "models" / "tiny"
HAPROXY_CONFIG = REPO_ROOT / "deploy" / "haproxy" / "haproxy.cfg"
READ_TIMEOUT_S = 300.0
READY_TIMEOUT_S = 300.0
#: HAProxy marks a server up after ``rise 2`` checks ``inter 1s`` apart.
HAPROXY_SETTLE_S = 3.0

#: Seconds a client waits before it retries a failed request.
RETRY_BACKOFF_S = 0.25

SENTENCES = [
    "Turned on the kitchen lights.",
    "The living room is at twenty one degrees.",
    "Your timer is done. The pasta should be ready now.",
    "It will rain tomorrow afternoon, so take an umbrella.",
    "The front door is locked and the garage is closed.",
    "Good morning! Today is sunny with a high of eighteen degrees.",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- processes


@dataclass
class Replica:
    """One ``python -m wyoming_omnivoice`` process with its own data dir and metrics port."""

    name: str
    port: int
    metrics_port: int
    data_dir: Path
    log_path: Path
    server_args: list[str]
    process: subprocess.Popen[bytes] | None = None

    def start(self) -> Replica:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "wyoming_omnivoice",
                "--uri", f"tcp://127.0.0.1:{self.port}", "--data-dir", str(self.data_dir),
                "--metrics-uri", f"http://127.0.0.1:{self.metrics_port}", "--deterministic",
                # byte-identical streams: no keep-alive silence, whose place depends on how
                # long each replica's decode takes (--deterministic fixes the speech only)
                "--max-gap", "0", *self.server_args]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=log,
                                            stderr=subprocess.STDOUT)
        return self

    @property
    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") \
            if self.log_path.exists() else ""

    def wait_ready(self, since: int = 0) -> None:
        assert self.process is not None
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if "Ready" in self.log[since:]:
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.process.returncode}:\n{self.log}")
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} not ready after {READY_TIMEOUT_S} s")

    def restart(self) -> None:
        since = len(self.log)
        self.start()
        self.wait_ready(since)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def metrics(self) -> dict[str, float]:
        """``name{label="v",...}`` -> value from this replica's /metrics."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode("utf-8")
        values: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
        return values

    def served(self) -> float:
        return self.metrics().get('omnivoice_requests_total{code="",outcome="ok"}', 0.0)


def render_haproxy_config(template: str, lb_port: int, backends: list[int]) -> str:
    """The shipped config with its bind port and server lines pointed at loopback ports."""
    text = re.sub(r"(?m)^(\s*bind\s+)\S+", rf"\g<1>127.0.0.1:{lb_port}", template, count=1)
    servers = [line for line in text.splitlines() if line.strip().startswith("server ")]
    if not servers:
        raise ValueError("the HAProxy config has no server lines")
    indent = servers[0][:len(servers[0]) - len(servers[0].lstrip())]
    rendered = "\n".join(f"{indent}server omnivoice{index + 1} 127.0.0.1:{port} check"
                         for index, port in enumerate(backends))
    kept = [line for line in text.splitlines() if line not in servers[1:]]
    return "\n".join(rendered if line == servers[0] else line for line in kept) + "\n"


class Cluster:
    """Replicas plus HAProxy; ``async with`` starts and stops them all."""

    def __init__(self, work_dir: Path, replicas: int, server_args: list[str]) -> None:
        if shutil.which("haproxy") is None:
            raise RuntimeError("haproxy is not installed (Debian: apt-get install haproxy)")
        self.work_dir = work_dir
        self.lb_port = free_port()
        self.replicas = [
            Replica(f"replica{i + 1}", free_port(), free_port(), work_dir / f"data{i + 1}",
                    work_dir / f"replica{i + 1}.log", server_args) for i in range(replicas)]
        self.haproxy: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.lb_port}"

    async def __aenter__(self) -> Cluster:
        for replica in self.replicas:
            replica.start()
        for replica in self.replicas:
            await asyncio.to_thread(replica.wait_ready)
        config = self.work_dir / "haproxy.cfg"
        config.write_text(render_haproxy_config(HAPROXY_CONFIG.read_text(), self.lb_port,
                                                [r.port for r in self.replicas]))
        with (self.work_dir / "haproxy.log").open("ab") as log:
            self.haproxy = subprocess.Popen(["haproxy", "-db", "-f", str(config)],
                                            stdout=log, stderr=subprocess.STDOUT)
        await asyncio.sleep(HAPROXY_SETTLE_S)
        if self.haproxy.poll() is not None:
            raise RuntimeError("haproxy exited: "
                               + (self.work_dir / "haproxy.log").read_text())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.terminate()
            self.haproxy.wait(10)
        for replica in self.replicas:
            replica.stop()


# --------------------------------------------------------------------------- clients


@dataclass
class Attempt:
    served: bool
    started: float
    first_audio_s: float | None = None
    error_code: str | None = None
    #: The connection broke before the request's ending (audio-stop / synthesize-stopped).
    lost: bool = False
    audio_sha256: str = ""


@dataclass
class Outcome:
    text: str
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def first(self) -> Attempt:
        return self.attempts[0]


async def ha_request(uri: str, text: str, streaming: bool) -> Attempt:
    """One request the way Home Assistant sends it: a new connection, then its events."""
    started = time.monotonic()
    attempt = Attempt(served=False, started=started)
    audio = hashlib.sha256()
    ending = "synthesize-stopped" if streaming else "audio-stop"
    try:
        async with AsyncClient.from_uri(uri) as client:
            if streaming:
                await client.write_event(SynthesizeStart().event())
                words = text.split(" ")
                for index in range(0, len(words), 3):
                    chunk = " ".join(words[index:index + 3]) + " "
                    await client.write_event(SynthesizeChunk(text=chunk).event())
                await client.write_event(Synthesize(text=text).event())
                await client.write_event(SynthesizeStop().event())
            else:
                await client.write_event(Synthesize(text=text).event())
            while True:
                event: Event | None = await asyncio.wait_for(client.read_event(),
                                                             READ_TIMEOUT_S)
                if event is None:
                    attempt.lost = True
                    return attempt
                if event.type == "error":
                    attempt.error_code = str(event.data.get("code"))
                elif event.type == "audio-chunk":
                    if attempt.first_audio_s is None:
                        attempt.first_audio_s = time.monotonic() - started
                    audio.update(event.payload or b"")
                elif event.type == ending:
                    break
    except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
        attempt.lost = True
        return attempt
    attempt.served = attempt.error_code is None and attempt.first_audio_s is not None
    attempt.audio_sha256 = audio.hexdigest()
    return attempt


async def run_load(uri: str, requests: int, clients: int, *, retries: int = 1,
                   during: Callable[[list[Outcome]], Awaitable[None]] | None = None
                   ) -> list[Outcome]:
    """``requests`` requests from ``clients`` concurrent clients; ``during`` runs alongside
    (it sees the outcomes so far). A failed request is retried on a new connection."""
    outcomes: list[Outcome] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(requests):
        queue.put_nowait(index)

    async def client() -> None:
        while not queue.empty():
            index = queue.get_nowait()
            outcome = Outcome(SENTENCES[index % len(SENTENCES)])
            outcomes.append(outcome)
            for number in range(1 + retries):
                if number:
                    # A retry at once can reach a killed replica's socket in the moment
                    # between SIGKILL and the process's exit; clients back off a little.
                    await asyncio.sleep(RETRY_BACKOFF_S)
                attempt = await ha_request(uri, outcome.text, streaming=index % 2 == 1)
                outcome.attempts.append(attempt)
                if attempt.served:
                    break

    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    if during is not None:
        await during(outcomes)
    await asyncio.gather(*tasks)
    return outcomes


# --------------------------------------------------------------------------- phases


@dataclass
class PhaseReport:
    phase: str
    requests: int
    failures: int
    lost: int
    refused: dict[str, int]
    retries_served: int
    p50_ms: float
    p95_ms: float
    notes: dict[str, object] = field(default_factory=dict)

    def line(self) -> str:
        refused = ",".join(f"{k}:{v}" for k, v in sorted(self.refused.items())) or "0"
        notes = " ".join(f"{k}={v}" for k, v in self.notes.items())
        return (f"{self.phase:9s} requests {self.requests:4d}  failures {self.failures:3d}  "
                f"lost {self.lost:3d}  refused {refused}  retries served "
                f"{self.retries_served:3d}  first audio p50 {self.p50_ms:7.0f} ms  "
                f"p95 {self.p95_ms:7.0f} ms  {notes}")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def summarize(phase: str, outcomes: list[Outcome], **notes: object) -> PhaseReport:
    firsts = [outcome.first for outcome in outcomes]
    refused: dict[str, int] = {}
    for attempt in firsts:
        if attempt.error_code is not None:
            refused[attempt.error_code] = refused.get(attempt.error_code, 0) + 1
    latencies = [1000 * a.first_audio_s for o in outcomes for a in o.attempts[-1:]
                 if a.served and a.first_audio_s is not None]
    return PhaseReport(
        phase=phase, requests=len(outcomes),
        failures=sum(not attempt.served for attempt in firsts),
        lost=sum(attempt.lost for attempt in firsts), refused=refused,
        retries_served=sum(len(o.attempts) > 1 and o.attempts[-1].served for o in outcomes),
        p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95), notes=notes)


async def phase_identity(cluster: Cluster) -> tuple[PhaseReport, set[str]]:
    """Each text once per replica directly and once through HAProxy: one audio per text."""
    outcomes: list[Outcome] = []
    digests: dict[str, set[str]] = {}
    for index, text in enumerate(SENTENCES[:2]):
        for uri in [replica.uri for replica in cluster.replicas] + [cluster.uri]:
            attempt = await ha_request(uri, text, streaming=index % 2 == 1)
            outcomes.append(Outcome(text, [attempt]))
            if attempt.served:
                digests.setdefault(text, set()).add(attempt.audio_sha256)
    distinct = {text: len(found) for text, found in digests.items()}
    report = summarize("identity", outcomes, distinct_audio_per_text=max(distinct.values()))
    return report, {digest for found in digests.values() for digest in found}


async def phase_spread(cluster: Cluster, requests: int, clients: int) -> PhaseReport:
    before = [await asyncio.to_thread(replica.served) for replica in cluster.replicas]
    outcomes = await run_load(cluster.uri, requests, clients)
    after = [await asyncio.to_thread(replica.served) for replica in cluster.replicas]
    per_replica = "/".join(str(int(a - b)) for a, b in zip(after, before, strict=True))
    return summarize("spread", outcomes, per_replica=per_replica)


async def _wait_in_flight(replica: Replica, outcomes: list[Outcome], requests: int) -> float:
    """Wait until a third of the load is done and ``replica`` has requests in flight."""
    deadline = time.monotonic() + READ_TIMEOUT_S
    while len(outcomes) < max(1, requests // 3):
        await asyncio.sleep(0.02)
    while time.monotonic() < deadline:
        in_flight = (await asyncio.to_thread(replica.metrics))["omnivoice_requests_in_flight"]
        if in_flight > 0:
            return in_flight
        await asyncio.sleep(0.01)
    raise RuntimeError(f"{replica.name} never had a request in flight (too few requests?)")


async def phase_sigterm(cluster: Cluster, requests: int, clients: int) -> PhaseReport:
    replica = cluster.replicas[0]
    assert replica.process is not None
    notes: dict[str, object] = {}

    async def drain_one(outcomes: list[Outcome]) -> None:
        notes["in_flight_at_signal"] = int(await _wait_in_flight(replica, outcomes, requests))
        assert replica.process is not None
        notes["signal_at"] = time.monotonic()
        replica.process.send_signal(signal.SIGTERM)
        notes["exit_code"] = await asyncio.to_thread(replica.process.wait, 120)

    outcomes = await run_load(cluster.uri, requests, clients, during=drain_one)
    drained = re.findall(r"Waiting up to \S+ s for (\d+) request", replica.log)
    notes["drained"] = int(drained[-1]) if drained else 0
    signal_at = float(notes.pop("signal_at"))  # type: ignore[arg-type]
    notes["failed_after_signal"] = sum(not o.first.served for o in outcomes
                                       if o.first.started > signal_at)
    return summarize("sigterm", outcomes, **notes)


async def phase_sigkill(cluster: Cluster, requests: int, clients: int) -> PhaseReport:
    replica = cluster.replicas[1]
    notes: dict[str, object] = {}

    async def kill_one(outcomes: list[Outcome]) -> None:
        notes["in_flight_at_kill"] = int(await _wait_in_flight(replica, outcomes, requests))
        assert replica.process is not None
        notes["kill_at"] = time.monotonic()
        replica.process.kill()
        await asyncio.to_thread(replica.process.wait, 30)

    outcomes = await run_load(cluster.uri, requests, clients, during=kill_one)
    kill_at = float(notes.pop("kill_at"))  # type: ignore[arg-type]
    notes["failed_started_after_kill"] = sum(not o.first.served for o in outcomes
                                             if o.first.started > kill_at)
    return summarize("sigkill", outcomes, **notes)


async def run_all(work_dir: Path, *, replicas: int, requests: int, clients: int,
                  server_args: list[str]) -> list[PhaseReport]:
    reports: list[PhaseReport] = []
    async with Cluster(work_dir, replicas, server_args) as cluster:
        report, _digests = await phase_identity(cluster)
        reports.append(report)
        print(report.line(), flush=True)
        for phase in (phase_spread, phase_sigterm):
            report = await phase(cluster, requests, clients)
            reports.append(report)
            print(report.line(), flush=True)
        await asyncio.to_thread(cluster.replicas[0].restart)
        await asyncio.sleep(HAPROXY_SETTLE_S)  # HAProxy's checks see it up again
        report = await phase_sigkill(cluster, requests, clients)
        reports.append(report)
        print(report.line(), flush=True)
    return reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--requests", type=int, default=60, help="per load phase")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--model-dir", type=Path, default=TINY_MODEL)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--shutdown-timeout", type=float, default=30.0)
    parser.add_argument("--json", type=Path, default=None, help="also write the reports here")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep logs and data dirs in this folder (default: a temp dir)")
    args = parser.parse_args()
    if args.replicas < 2:
        parser.error("--replicas: at least 2 (one is stopped during the load)")
    server_args = ["--model-dir", str(args.model_dir), "--device", args.device,
                   "--shutdown-timeout", str(args.shutdown_timeout)]
    print(f"{args.replicas} replicas ({args.model_dir.name}, {args.device}) behind HAProxy, "
          f"{args.requests} requests per load phase from {args.clients} clients", flush=True)
    with tempfile.TemporaryDirectory(prefix="omnivoice-replicas-") as tmp:
        work_dir = args.keep or Path(tmp)
        work_dir.mkdir(parents=True, exist_ok=True)
        reports = asyncio.run(run_all(work_dir, replicas=args.replicas,
                                      requests=args.requests, clients=args.clients,
                                      server_args=server_args))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=2))


if __name__ == "__main__":
    main()
