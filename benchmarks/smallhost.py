"""A small Home Assistant host: first start under a memory limit, restart, footprint.

Runs the server (``python -m wyoming_omnivoice``, the CPU defaults) on a private copy of a
model folder, side by side with the code of a base revision (a ``git worktree`` of
``--base``), and prints for each:

- the **first start** (no prepared backbone, no anchors) inside a memory cgroup of
  ``--limit-gb`` (default 2.5; root only): whether it survived, its peak resident memory
  (``VmHWM``) and peak anonymous memory (sampled ``RssAnon``: what the kernel cannot
  reclaim), and each phase's time from the log (preparation, engine load, anchors,
  warm-up, ready);
- **restart to ready** (everything cached), ``--restarts`` times interleaved, medians,
  with each phase: from the server's own ``Start-up:`` line where it has one (imports,
  voices, model files, engine with each session, anchors, ...) and from log timestamps
  for any revision (engine loaded, listening, warmed up);
- **resident memory after replies** (``VmRSS`` after ``--replies`` short requests and 5 s
  idle), where it is (``/proc/PID/smaps`` grouped: anonymous memory, each mapped model
  file, libraries; :mod:`benchmarks.memory_map`), and the reply times: the first one sent
  the moment the server answers (it meets whatever the server still does after ready) and
  the median of the others, so a smaller footprint or a sooner ready is not paid for with
  slower replies.

Every run notes the 1-minute load average at its start (the machine may be shared).

    python -m benchmarks.smallhost --model-dir bench-out/real-random --base 02eacd9
    python -m benchmarks.smallhost --compare-int8 --model-dir bench-out/real-random

``--compare-int8`` instead checks the streamed int8 preparation against onnxruntime's
``quantize_dynamic`` at this size: files byte for byte, time and peak memory of each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.client import AsyncClient
from wyoming.info import Describe
from wyoming.tts import Synthesize

from benchmarks.int8_compare import compare_int8
from benchmarks.memory_map import resident_by_mapping
from tests.memory_limit import MemoryCgroup

REPO = Path(__file__).resolve().parents[1]
REPLY_TEXT = "Turned on the kitchen lights."
LOG_FORMAT = "%(relativeCreated)d %(name)s %(message)s"
#: Seconds an idle server is left after the replies before its resident memory is read.
SETTLE_S = 5.0
#: Log lines that end a phase: (phase, pattern); times are from the process start.
PHASES = (
    ("int8 preparation", re.compile(r"Prepared the int8 backbone in")),
    ("imports, voices, model check", re.compile(r"device auto: trying")),
    ("engine loaded", re.compile(r"OmniVoice engine ready on")),
    ("listening", re.compile(r"Ready: listening")),
    ("warmed up", re.compile(r"(?i)warmed up")),
    ("all anchors", re.compile(r"Voice anchors: (\d+) of \1 built|Voice anchors: all")),
)
#: The server's own phase line (newer revisions): "Start-up: ready 1.2 s after ...: a 0.3 s,
#: engine 0.6 s (backbone 0.5, scoring 0.1), ...".
STARTUP_LINE = re.compile(r"Start-up: ready [\d.]+ s after the process started: (.*?);")
STARTUP_PHASE = re.compile(r"([a-z][a-z ]*?) (\d+\.\d+) s(?: \(([^)]*)\))?")
STARTUP_PART = re.compile(r"([a-z][a-z ]*?) (\d+\.\d+)")


@dataclass
class Run:
    """One server process's figures."""

    label: str
    ready_s: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    peak_hwm_gb: float = 0.0
    peak_anon_gb: float = 0.0
    rss_after_gb: float = 0.0
    reply_s: list[float] = field(default_factory=list)
    killed: bool = False
    exit_line: str = ""
    #: The server's own phases (its Start-up line), "engine: backbone" for parts.
    startup: dict[str, float] = field(default_factory=dict)
    load_avg: float = 0.0
    memory: dict[str, int] = field(default_factory=dict)


def _status(pid: int) -> dict[str, int]:
    values = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                values[key] = int(rest.split()[0]) * 1024
    except OSError:
        pass
    return values


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _describe(uri: str) -> bool:
    try:
        async with AsyncClient.from_uri(uri) as client:
            await client.write_event(Describe().event())
            return await asyncio.wait_for(client.read_event(), 2.0) is not None
    except (TimeoutError, OSError):
        return False


async def _reply(uri: str) -> float:
    start = time.perf_counter()
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=REPLY_TEXT).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), 600)
            if event is None or event.type in ("audio-stop", "error"):
                break
    return time.perf_counter() - start


class Server:
    """``python -m wyoming_omnivoice`` of one checkout, optionally in a memory cgroup."""

    def __init__(self, checkout: Path, model: Path, data: Path, log: Path,
                 cgroup: MemoryCgroup | None, extra: list[str]) -> None:
        self.uri = f"tcp://127.0.0.1:{_free_port()}"
        env = dict(os.environ, PYTHONPATH=str(checkout), ORT_DISABLE_TELEMETRY="1")
        self.log = log
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "wyoming_omnivoice", "--model-dir", str(model),
             "--data-dir", str(data), "--uri", self.uri, "--log-format", LOG_FORMAT, *extra],
            cwd=checkout, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
            preexec_fn=cgroup.preexec() if cgroup else None)
        self.peak_anon = 0
        self._sampling = True
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while self._sampling and self.process.poll() is None:
            self.peak_anon = max(self.peak_anon, _status(self.process.pid).get("RssAnon", 0))
            time.sleep(0.2)

    def wait_ready(self, timeout_s: float = 3600) -> float | None:
        while time.perf_counter() - self.started < timeout_s:
            if self.process.poll() is not None:
                return None
            if asyncio.run(_describe(self.uri)):
                return time.perf_counter() - self.started
            time.sleep(0.2)
        raise SystemExit(f"server not ready after {timeout_s} s (log {self.log})")

    def wait_anchors(self, timeout_s: float = 3600) -> None:
        """Until anchors being built (in the background, by newer code) are all built."""
        while time.perf_counter() - self.started < timeout_s and self.process.poll() is None:
            text = self.log.read_text(errors="replace")
            if "Voice anchors: building" not in text or dict(PHASES)["all anchors"].search(text):
                return
            time.sleep(0.5)

    def stop(self) -> int:
        self._sampling = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)

    def startup(self) -> dict[str, float]:
        found: dict[str, float] = {}
        match = STARTUP_LINE.search(self.log.read_text(errors="replace"))
        if match is None:
            return found
        for phase in STARTUP_PHASE.finditer(match.group(1)):
            found[phase.group(1)] = float(phase.group(2))
            for part in STARTUP_PART.finditer(phase.group(3) or ""):
                found[f"{phase.group(1)}: {part.group(1)}"] = float(part.group(2))
        return found

    def phases(self) -> dict[str, float]:
        found: dict[str, float] = {}
        for line in self.log.read_text(errors="replace").splitlines():
            stamp, _, rest = line.partition(" ")
            if not stamp.isdigit():
                continue
            for phase, pattern in PHASES:
                if phase not in found and pattern.search(rest):
                    found[phase] = int(stamp) / 1000
        return found


def measure(label: str, checkout: Path, model: Path, data: Path, log: Path, *,
            limit_gb: float | None, replies: int, extra: list[str]) -> Run:
    run = Run(label, load_avg=os.getloadavg()[0])
    cgroup = MemoryCgroup.create("smallhost-bench", int(limit_gb * 2**30)) if limit_gb else None
    if limit_gb and cgroup is None:
        print(f"  (no memory cgroup here: {MemoryCgroup.unavailable}; running unlimited)")
    server = Server(checkout, model, data, log, cgroup, extra)
    try:
        ready = server.wait_ready()
        if ready is None:
            run.killed = server.process.returncode in (-9, 137)
            lines = log.read_text(errors="replace").strip().splitlines()
            run.exit_line = f"exit {server.process.returncode}: {lines[-1] if lines else ''}"
            return run
        run.ready_s = ready
        server.wait_anchors()
        run.peak_hwm_gb = _status(server.process.pid).get("VmHWM", 0) / 1e9
        for _ in range(replies):
            run.reply_s.append(asyncio.run(_reply(server.uri)))
        if replies:
            # What a server loads once idle after ready (newer code: the other languages'
            # normalisers, the language id) is resident by now.
            time.sleep(SETTLE_S)
        run.rss_after_gb = _status(server.process.pid).get("VmRSS", 0) / 1e9
        run.memory = resident_by_mapping(server.process.pid)
        run.peak_anon_gb = server.peak_anon / 1e9
        run.phases = server.phases()
        run.startup = server.startup()
    finally:
        server.stop()
        if cgroup is not None:
            run.killed = run.killed or cgroup.oom_kills() > 0
            cgroup.close()
    return run


def base_checkout(rev: str, work: Path) -> Path:
    target = work / f"base-{rev.replace('/', '_')}"
    if not target.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(target),
                        rev], check=True, capture_output=True)
    return target


def private_model(model: Path, work: Path) -> Path:
    """A copy of the model folder whose ``prepared/`` this benchmark may delete (a real
    copy: older revisions' onnx loader refuses external data behind hard links)."""
    target = work / "model"
    if not target.exists():
        shutil.copytree(model, target, ignore=shutil.ignore_patterns("prepared"))
    return target


def _row(name: str, values: list[str]) -> None:
    print(f"  {name:38s}" + "".join(f"{value:>24s}" for value in values))


def report(first: dict[str, Run], restarts: dict[str, list[Run]]) -> None:
    labels = list(first)
    print("\n== first start (nothing prepared, no anchors) ==")
    _row("", labels)
    _row("load average (1 min) at the start", [f"{first[k].load_avg:.1f}" for k in labels])
    _row("survived the limit", ["no (killed)" if first[k].killed else
                                ("yes" if first[k].ready_s else "no") for k in labels])
    _row("to ready (describe answered), s", [f"{first[k].ready_s:.1f}" for k in labels])
    for phase, _ in PHASES:
        _row(f"  {phase}, s", [f"{first[k].phases[phase]:.1f}" if phase in first[k].phases
                               else "-" for k in labels])
    _row("peak resident (VmHWM), GB", [f"{first[k].peak_hwm_gb:.2f}" for k in labels])
    _row("peak anonymous (RssAnon), GB", [f"{first[k].peak_anon_gb:.2f}" for k in labels])
    for k in labels:
        if first[k].exit_line:
            print(f"  {k}: {first[k].exit_line}")
    print("\n== restart (prepared backbone and anchors cached), medians ==")
    labels = list(restarts)
    _row("", labels)
    _row("restarts", [str(len(restarts[k])) for k in labels])

    def median(values: list[float]) -> str:
        return f"{statistics.median(values):.2f}" if values else "-"

    _row("load average (1 min) at the start", [median([r.load_avg for r in restarts[k]])
                                                for k in labels])
    _row("to ready, s", [median([r.ready_s for r in restarts[k]]) for k in labels])
    for phase, _ in PHASES:
        if phase == "int8 preparation":
            continue
        _row(f"  {phase} (log), s", [median([r.phases[phase] for r in restarts[k]
                                             if phase in r.phases]) for k in labels])
    own: list[str] = []
    for k in labels:
        for run in restarts[k]:
            own += [name for name in run.startup if name not in own]
    if own:
        print("  the server's own Start-up line, s:")
    for name in own:
        _row(f"    {name}", [median([r.startup[name] for r in restarts[k]
                                     if name in r.startup]) for k in labels])
    _row("peak resident (VmHWM), GB", [median([r.peak_hwm_gb for r in restarts[k]])
                                       for k in labels])
    _row("resident after replies (VmRSS), GB", [median([r.rss_after_gb for r in restarts[k]])
                                                for k in labels])
    _row("first reply (sent at ready), s", [median([r.reply_s[0] for r in restarts[k]
                                                    if r.reply_s]) for k in labels])
    _row("later replies (one short sentence), s", [median([s for r in restarts[k]
                                                           for s in r.reply_s[1:]])
                                                   for k in labels])
    print("\n== resident after replies by mapping (last restart), GB ==")
    groups: list[str] = []
    for k in labels:
        if restarts[k]:
            groups += [g for g in restarts[k][-1].memory if g not in groups]
    _row("", labels)
    for group in groups:
        _row(f"  {group[:36]}", [f"{restarts[k][-1].memory.get(group, 0) / 1e9:.3f}"
                                 if restarts[k] else "-" for k in labels])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, default=Path("bench-out/real-random"))
    parser.add_argument("--base", default="main", help="git revision to compare with")
    parser.add_argument("--limit-gb", type=float, default=2.5)
    parser.add_argument("--restarts", type=int, default=2)
    parser.add_argument("--replies", type=int, default=3)
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the model copy, logs, base worktree (kept)")
    parser.add_argument("--only", choices=("base", "this"), default=None)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="passed to both servers (e.g. --server-arg=--preload-languages "
                             "--server-arg=none: one anchor, for a loaded machine)")
    parser.add_argument("--compare-int8", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.gettempdir()) / "smallhost-bench"
    work.mkdir(parents=True, exist_ok=True)
    model = private_model(args.model_dir, work)
    if args.compare_int8:
        compare_int8(model, work)
        return
    checkouts = {"this": REPO}
    if args.only != "this":
        checkouts = {f"base {args.base}": base_checkout(args.base, work), **checkouts}
    if args.only == "base":
        checkouts.pop("this")
    print(f"model {args.model_dir} (copy in {model}); machine: {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}; server arguments: {' '.join(args.server_arg)}")
    first: dict[str, Run] = {}
    restarts: dict[str, list[Run]] = {label: [] for label in checkouts}
    for label, checkout in checkouts.items():
        shutil.rmtree(model / "prepared", ignore_errors=True)
        data = work / f"data-{label.split()[0]}"
        shutil.rmtree(data, ignore_errors=True)
        print(f"first start: {label} (limit {args.limit_gb} GB) ...", flush=True)
        first[label] = measure(label, checkout, model, data, work / f"first-{label.split()[0]}"
                               ".log", limit_gb=args.limit_gb, replies=0,
                               extra=args.server_arg)
        if not first[label].ready_s:
            # Killed or stopped under the limit: its figures from a start without one.
            unlimited = f"{label} (no limit)"
            print(f"first start: {unlimited} ...", flush=True)
            shutil.rmtree(model / "prepared", ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)
            first[unlimited] = measure(unlimited, checkout, model, data,
                                       work / f"first-{label.split()[0]}-unlimited.log",
                                       limit_gb=None, replies=0, extra=args.server_arg)
        # Keep this side's prepared backbone for its restarts.
        kept = work / f"prepared-{label.split()[0]}"
        shutil.rmtree(kept, ignore_errors=True)
        if (model / "prepared").exists():
            shutil.move(str(model / "prepared"), str(kept))
    for round_index in range(args.restarts):
        for label, checkout in checkouts.items():
            kept = work / f"prepared-{label.split()[0]}"
            if not kept.exists():
                continue
            shutil.rmtree(model / "prepared", ignore_errors=True)
            shutil.copytree(kept, model / "prepared")
            print(f"restart {round_index + 1}: {label} ...", flush=True)
            restarts[label].append(measure(
                label, checkout, model, work / f"data-{label.split()[0]}",
                work / f"restart-{label.split()[0]}-{round_index}.log", limit_gb=None,
                replies=args.replies, extra=args.server_arg))
    report(first, restarts)
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          "(the machine may be shared: figures are medians of interleaved runs)")


if __name__ == "__main__":
    main()
