"""The first minutes of a new install: replies while the background anchors are made.

Starts the real server (``python -m wyoming_omnivoice``, the CPU defaults plus any
``--server-arg``) on a private copy of a model folder with a fresh data folder, and from the
moment it answers sends a short reply every ``--interval`` seconds until the server says its
background voice anchors are done (its log: ``Voice anchors: N of N built``), then
``--after`` more. Then the same after a restart (everything cached), and, with ``--base``,
all of it for the code of that revision too (a ``git worktree``, as
:mod:`benchmarks.smallhost` makes it). It prints:

- each reply's **first speech**: the first audio chunk that is not all zeros. The gap
  guard's keep-alive silence (``--max-gap``, whole chunks of zeros) opens the audio when
  speech is late; it counts as first *audio*, printed beside it, never as first speech.
  The all-zero chunks before the first speech are counted: the keep-alive ones, and any
  the decoded audio itself starts with (those arrive with the speech, at the same time);
- the **resident memory over time**, from ``/proc/PID/status``: anonymous memory
  (``RssAnon``: what the kernel cannot reclaim) and mapped file pages (``RssFile``: the
  weights onnxruntime reads in place, and the libraries; the kernel may reclaim them but a
  memory cgroup charges them), and at each reply the mapped model files alone (smaps);
- when the anchors were **done** (from the log line's time) and how many there were;
- the verdict against the target: during the first start, a short reply's first speech at
  most 1.3x its first speech after a restart.

At the real size (about 10 minutes per first start on 2 cores)::

    python -m benchmarks.random_model --out bench-out/real-random
    python -m benchmarks.first_minutes --model-dir bench-out/real-random --base main

Quick, at the tiny size (seconds): ``--model-dir tests/fixtures/models/tiny --interval 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.audio import AudioChunk
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize

from benchmarks.memory_map import resident_by_mapping
from benchmarks.smallhost import REPO, Server, _status, base_checkout, private_model

REPLY_TEXT = "Turned on the kitchen lights."
#: The server's lines about its background anchors (this revision's and older ones').
ANCHORS_BUILDING = "Voice anchors: building"
ANCHORS_DONE = re.compile(r"^(\d+) \S+ Voice anchors: (\d+) of \2 built", re.MULTILINE)
#: Target (issue 33): first speech during the first start / after a restart.
TARGET_RATIO = 1.3
MB = 2**20


@dataclass
class Reply:
    """One short reply: when it was sent and what came back when (seconds)."""

    sent_s: float  # after ready
    first_audio_s: float | None = None  # any audio, the gap guard's silence included
    first_speech_s: float | None = None  # the first chunk that is not all zeros
    total_s: float = 0.0
    silence_chunks: int = 0  # all-zero chunks before the first speech
    during_anchors: bool = False
    anon_mb: float = 0.0
    file_mb: float = 0.0
    model_files_mb: float = 0.0
    error: str = ""


@dataclass
class Session:
    """One server process: a first start or a restart of one checkout."""

    label: str
    ready_s: float = 0.0
    anchors_done_s: float | None = None  # after the process started, from the log
    anchors: int = 0
    replies: list[Reply] = field(default_factory=list)
    #: (seconds after the process started, RssAnon bytes, RssFile bytes)
    memory: list[tuple[float, int, int]] = field(default_factory=list)
    load_avg: float = 0.0


def is_silence(audio: bytes) -> bool:
    """The gap guard's keep-alive chunk: every byte zero."""
    return not audio.strip(b"\0")


def anchors_done(log_text: str) -> tuple[bool, float | None, int]:
    """(done, seconds after the process start of the line saying so, how many) from a log
    written with smallhost's ``LOG_FORMAT``. Done at once when no background build began."""
    match = ANCHORS_DONE.search(log_text)
    if match:
        return True, int(match.group(1)) / 1000, int(match.group(2))
    return ANCHORS_BUILDING not in log_text, None, 0


async def timed_reply(uri: str, text: str = REPLY_TEXT, timeout_s: float = 600) -> Reply:
    """Send one request; the times of its first audio, first speech and end."""
    reply = Reply(sent_s=0.0)
    start = time.perf_counter()
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text).event())
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout_s)
            if event is None:
                reply.error = "connection closed"
                break
            if event.type == "error":
                reply.error = str(event.data.get("text", "error"))
                break
            if event.type == "audio-chunk":
                now = time.perf_counter() - start
                if reply.first_audio_s is None:
                    reply.first_audio_s = now
                if reply.first_speech_s is None:
                    if is_silence(AudioChunk.from_event(event).audio):
                        reply.silence_chunks += 1
                    else:
                        reply.first_speech_s = now
            if event.type == "audio-stop":
                break
    reply.total_s = time.perf_counter() - start
    return reply


class MemorySampler:
    """``RssAnon``/``RssFile`` of a process every ``every_s`` seconds, in a thread."""

    def __init__(self, pid: int, started: float, every_s: float = 1.0) -> None:
        self.samples: list[tuple[float, int, int]] = []
        self._pid, self._started, self._every = pid, started, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            status = _status(self._pid)
            if status.get("VmRSS"):  # (none before the exec, nor after the exit)
                self.samples.append((time.perf_counter() - self._started,
                                     status.get("RssAnon", 0), status.get("RssFile", 0)))
            self._stop.wait(self._every)

    def stop(self) -> list[tuple[float, int, int]]:
        self._stop.set()
        self._thread.join()
        return self.samples


def run_session(label: str, checkout: Path, model: Path, data: Path, log: Path, *,
                interval_s: float, after: int, limit_s: float, extra: list[str]) -> Session:
    """Start the server, send the replies (see the module), stop it."""
    session = Session(label, load_avg=os.getloadavg()[0])
    server = Server(checkout, model, data, log, None, extra)
    sampler = MemorySampler(server.process.pid, server.started)
    try:
        ready = server.wait_ready()
        if ready is None:
            raise SystemExit(f"{label}: the server exited before ready (log {log})")
        session.ready_s = ready
        ready_at = server.started + ready
        left_after = after
        while left_after > 0 and time.perf_counter() - ready_at < limit_s:
            due = ready_at + len(session.replies) * interval_s
            time.sleep(max(0.0, due - time.perf_counter()))
            done, _, _ = anchors_done(log.read_text(errors="replace"))
            sent = time.perf_counter() - ready_at
            reply = asyncio.run(timed_reply(server.uri))
            reply.sent_s, reply.during_anchors = sent, not done
            status = _status(server.process.pid)
            reply.anon_mb = status.get("RssAnon", 0) / MB
            reply.file_mb = status.get("RssFile", 0) / MB
            reply.model_files_mb = sum(
                size for name, size in resident_by_mapping(server.process.pid).items()
                if name.startswith("mapped model file")) / MB
            session.replies.append(reply)
            print(f"  {label}: {format_reply(reply)}", flush=True)
            if done:
                left_after -= 1
        _, session.anchors_done_s, session.anchors = anchors_done(
            log.read_text(errors="replace"))
    finally:
        session.memory = sampler.stop()
        server.stop()
    return session


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def format_reply(reply: Reply) -> str:
    phase = "anchors in progress" if reply.during_anchors else "anchors done"
    return (f"sent {reply.sent_s:6.1f} s after ready ({phase}): first speech "
            f"{_s(reply.first_speech_s)} s, first audio {_s(reply.first_audio_s)} s "
            f"({reply.silence_chunks} zero chunks before it), end {reply.total_s:.2f} s; "
            f"resident anon {reply.anon_mb:.0f} MiB, file {reply.file_mb:.0f} MiB (model files "
            f"{reply.model_files_mb:.0f})" + (f"; ERROR {reply.error}" if reply.error else ""))


def first_speech(session: Session, *, during: bool | None = None) -> list[float]:
    """First-speech times of the session's replies (only those sent while the anchors were
    in progress, or after, when ``during`` says so)."""
    return [r.first_speech_s for r in session.replies if r.first_speech_s is not None
            and (during is None or r.during_anchors == during)]


def memory_table(session: Session, every_s: float) -> list[str]:
    """Rows ``t, anon, file`` every ``every_s`` seconds and the peaks."""
    rows, next_t = [], 0.0
    for t, anon, file in session.memory:
        if t >= next_t:
            rows.append(f"    {t:7.0f} s {anon / MB:9.0f} {file / MB:9.0f} "
                        f"{(anon + file) / MB:9.0f}")
            next_t = t + every_s
    if session.memory:
        t, anon, file = session.memory[-1]
        rows.append(f"    {t:7.0f} s {anon / MB:9.0f} {file / MB:9.0f} "
                    f"{(anon + file) / MB:9.0f}   (last)")
        rows.append(f"    peak      {max(s[1] for s in session.memory) / MB:9.0f} "
                    f"{max(s[2] for s in session.memory) / MB:9.0f} "
                    f"{max(s[1] + s[2] for s in session.memory) / MB:9.0f}")
    return rows


def summary(first: Session, restart: Session) -> list[tuple[str, str]]:
    """(name, value) rows comparing one checkout's first start with its restart."""
    during = first_speech(first, during=True) or first_speech(first)
    # The restart's replies once nothing is made in the background (a first start cut by
    # --limit-minutes leaves anchors for the restart to make); all of them if none is.
    again = first_speech(restart, during=False) or first_speech(restart)
    rows = [
        ("ready, s (first start / restart)", f"{first.ready_s:.1f} / {restart.ready_s:.1f}"),
        ("anchors done after ready, s",
         "-" if first.anchors_done_s is None
         else f"{first.anchors_done_s - first.ready_s:.0f} ({first.anchors} anchors)"),
        ("replies during the anchors", str(len(first_speech(first, during=True)))),
        ("first speech during the anchors: median (max), s",
         f"{statistics.median(during):.2f} ({max(during):.2f})" if during else "-"),
        ("first speech after a restart (anchors done): median (max), s",
         f"{statistics.median(again):.2f} ({max(again):.2f})" if again else "-"),
    ]
    if during and again:
        ratio = statistics.median(during) / statistics.median(again)
        worst = max(during) / statistics.median(again)
        verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
        rows.append((f"ratio (target <= {TARGET_RATIO}x): median (max)",
                     f"{ratio:.2f}x ({worst:.2f}x) {verdict}"))
    for session, name in ((first, "first start"), (restart, "restart")):
        if session.memory:
            rows.append((f"peak anon / file, MiB ({name})",
                         f"{max(s[1] for s in session.memory) / MB:.0f} / "
                         f"{max(s[2] for s in session.memory) / MB:.0f}"))
    if first.replies and restart.replies:
        rows.append(("anon at the last reply, MiB (first start / restart)",
                     f"{first.replies[-1].anon_mb:.0f} / {restart.replies[-1].anon_mb:.0f}"))
    return rows


def report(sessions: dict[str, tuple[Session, Session]], memory_every_s: float) -> None:
    for pair in sessions.values():
        for session in pair:
            print(f"\n== {session.label}: resident memory, MiB (load {session.load_avg:.1f}) ==")
            print("    after start     anon      file     total")
            print("\n".join(memory_table(session, memory_every_s)))
    print("\n== the first minutes ==")
    labels = list(sessions)
    print(f"  {'':52s}" + "".join(f"{label:>28s}" for label in labels))
    rows: dict[str, list[str]] = {}
    for label in labels:
        for name, value in summary(*sessions[label]):
            rows.setdefault(name, ["-"] * len(labels))[labels.index(label)] = value
    for name, values in rows.items():
        print(f"  {name:52s}" + "".join(f"{value:>28s}" for value in values))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--base", default=None, help="git revision to compare with")
    parser.add_argument("--interval", type=float, default=15.0,
                        help="seconds between the replies' starts (default 15)")
    parser.add_argument("--after", type=int, default=3,
                        help="replies once the anchors are done (and after a restart)")
    parser.add_argument("--limit-minutes", type=float, default=30.0,
                        help="stop sending after this long even if the anchors go on")
    parser.add_argument("--memory-every", type=float, default=30.0,
                        help="seconds between the memory table's rows (sampled every 1 s)")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the model copy, data, logs, base worktree (kept)")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="passed to every server (e.g. --server-arg=--max-gap "
                             "--server-arg=0)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.gettempdir()) / "first-minutes-bench"
    work.mkdir(parents=True, exist_ok=True)
    model = private_model(args.model_dir, work)
    checkouts = {"this": REPO}
    if args.base:
        checkouts = {f"base {args.base}": base_checkout(args.base, work), **checkouts}
    print(f"model {args.model_dir} (copy in {model}); {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}; a reply every {args.interval:g} s; server arguments: "
          f"{' '.join(args.server_arg) or '(none)'}", flush=True)
    sessions: dict[str, tuple[Session, Session]] = {}
    for label, checkout in checkouts.items():
        short = label.split()[0]
        data = work / f"data-{short}"
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(model / "prepared", ignore_errors=True)
        runs = []
        for kind in ("first start", "restart"):
            print(f"{kind}: {label} ...", flush=True)
            runs.append(run_session(
                f"{label}, {kind}", checkout, model, data,
                work / f"{kind.split()[0]}-{short}.log", interval_s=args.interval,
                after=args.after, limit_s=args.limit_minutes * 60, extra=args.server_arg))
        sessions[label] = (runs[0], runs[1])
    report(sessions, args.memory_every)
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"logs in {work}")


if __name__ == "__main__":
    main()
