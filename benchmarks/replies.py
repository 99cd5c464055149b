"""Replies as a satellite hears them: first audio, gaps and the whole reply, before and after.

    python -m benchmarks.replies                               # real-size random model
    python -m benchmarks.replies --model-dir DIR --base REV --rounds 2 --replies done,three
    python -m benchmarks.replies --also prefix-4=--prefix-cache,4      # one more server

Starts real servers on loopback with the CPU defaults (int8, 16 steps): this checkout with
the gap guard on (``--max-gap 2``), the same with it off (``--max-gap 0``), and the code of
``--base`` (a ``git worktree`` of that revision, default the commit this work started
from). Each reply is sent through the real ``wyoming`` client one-shot and streamed (the
text in chunks of a few words, as a conversation agent sends it), interleaved across the
servers round by round. Every audio chunk is played in real time from the first one on,
and the player records when it had nothing left to play. Printed per reply and server:

- first audio: from the request to the first chunk with sound (silence the gap guard sends
  is not counted as first audio);
- longest gap and sum of gaps: time the player had nothing to play after the first chunk
  (the guard's silence is audio for the player);
- whole reply: from the request until the player has played the last chunk.

Medians over ``--rounds``. The machine's load average is printed: on a shared machine the
decode, and so every figure here, is slower than on an idle one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.audio import AudioChunk, AudioStop
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

REPO = Path(__file__).resolve().parent.parent
#: The commit this work (issue 22) started from.
DEFAULT_BASE = "02eacd9"
REPLIES = {
    "done": "Done.",
    "short": "The living room lights are now turned on.",
    "two": "The living room lights are now turned on. The kitchen is at twenty one degrees.",
    "three": ("The living room lights are now turned on. The kitchen is at twenty one "
              "degrees, and the heating will switch off at ten tonight. Tomorrow will be "
              "sunny with a light breeze from the west."),
    "five": ("Good morning. Today will be mostly sunny with a high of twenty four degrees. "
             "Your first meeting starts at nine thirty in the small conference room. "
             "Remember to take the recycling out before you leave the house. "
             "The front door is locked and the alarm is set."),
}
#: A streamed reply arrives as a conversation agent sends it: a few words at a time.
STREAM_WORDS = 3
STREAM_INTERVAL_S = 0.08
READY_TIMEOUT_S = 3600.0


@dataclass
class Heard:
    """One reply as the player heard it."""

    first_audio: float | None = None
    longest_gap: float = 0.0
    gaps: float = 0.0
    whole: float = 0.0
    silence: float = 0.0


@dataclass
class Player:
    """Plays every chunk in real time from the first one on."""

    sent_at: float
    rate: int = 24000
    plays_until: float | None = None
    heard: Heard = field(default_factory=Heard)

    def chunk(self, audio: bytes, now: float) -> None:
        seconds = len(audio) / 2 / self.rate
        silent = not any(audio)
        if not silent and self.heard.first_audio is None:
            self.heard.first_audio = now - self.sent_at
        if self.plays_until is not None and now > self.plays_until:
            gap = now - self.plays_until
            self.heard.gaps += gap
            self.heard.longest_gap = max(self.heard.longest_gap, gap)
        start = now if self.plays_until is None else max(now, self.plays_until)
        self.plays_until = start + seconds
        if silent:
            self.heard.silence += seconds

    def finish(self, now: float) -> Heard:
        self.heard.whole = max(now, self.plays_until or now) - self.sent_at
        return self.heard


async def speak(uri: str, text: str, streamed: bool) -> Heard:
    async with AsyncClient.from_uri(uri) as client:
        player = Player(time.monotonic())
        if streamed:
            await client.write_event(SynthesizeStart().event())
            words = text.split(" ")
            for start in range(0, len(words), STREAM_WORDS):
                piece = " ".join(words[start:start + STREAM_WORDS])
                tail = " " if start + STREAM_WORDS < len(words) else ""
                await client.write_event(SynthesizeChunk(text=piece + tail).event())
                await asyncio.sleep(STREAM_INTERVAL_S)
            await client.write_event(Synthesize(text=text).event())  # compatibility copy
            await client.write_event(SynthesizeStop().event())
            end_type = "synthesize-stopped"
        else:
            await client.write_event(Synthesize(text=text).event())
            end_type = AudioStop().event().type
        while True:
            event = await asyncio.wait_for(client.read_event(), timeout=READY_TIMEOUT_S)
            if event is None:
                raise RuntimeError("the server closed the connection")
            if AudioChunk.is_type(event.type):
                chunk = AudioChunk.from_event(event)
                player.rate = chunk.rate
                player.chunk(chunk.audio, time.monotonic())
            elif event.type == "error":
                raise RuntimeError(f"server error: {event.data}")
            elif event.type == end_type:
                return player.finish(time.monotonic())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    name: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    log: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env,
                                            stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while "Ready" not in self.log.read_text(errors="replace"):
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready after {READY_TIMEOUT_S} s")
            time.sleep(1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()


@contextlib.contextmanager
def base_checkout(revision: str, work: Path) -> Iterator[Path]:
    """A ``git worktree`` of ``revision`` (removed afterwards)."""
    path = work / f"base-{revision}"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path),
                    revision], check=True, capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
                       check=False, capture_output=True)


def make_server(name: str, code: Path, model_dir: Path, data_dir: Path, work: Path,
                *extra: str) -> Server:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "wyoming_omnivoice", "--uri", f"tcp://127.0.0.1:{port}",
            "--model-dir", str(model_dir), "--data-dir", str(data_dir), "--device", "cpu",
            "--preload-languages", "none", *extra]
    return Server(name, argv, env, code, work / f"{name}.log", port)


def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="replies-bench-"))
    data_dir = work / "data"  # one anchor cache: the default voice's anchor is built once
    replies = {name: REPLIES[name] for name in args.replies.split(",")}
    with base_checkout(args.base, work) as base:
        servers = [
            make_server("base", base, args.model_dir, data_dir, work),
            make_server("guard-2s", REPO, args.model_dir, data_dir, work, "--max-gap", "2"),
            make_server("guard-off", REPO, args.model_dir, data_dir, work, "--max-gap", "0"),
        ]
        for extra in args.also:  # NAME=ARG,ARG,...: this checkout with more flags
            name, _, flags = extra.partition("=")
            servers.append(make_server(name, REPO, args.model_dir, data_dir, work,
                                       *flags.split(",")))
        try:
            for server in servers:  # one at a time: start-up is CPU work
                began = time.monotonic()
                server.start()
                server.wait_ready()
                print(f"{server.name}: ready after {time.monotonic() - began:.0f} s "
                      f"(load average {os.getloadavg()[0]:.1f})", flush=True)
            results: dict[tuple[str, str, str], list[Heard]] = {}
            for round_index in range(args.rounds):
                for reply, text in replies.items():
                    for mode in ("one-shot", "streamed"):
                        for server in servers:
                            heard = asyncio.run(speak(server.uri, text, mode == "streamed"))
                            results.setdefault((reply, mode, server.name), []).append(heard)
                            print(f"round {round_index + 1} {reply:>5} {mode:>8} "
                                  f"{server.name:>9}: {describe(heard)} (load average "
                                  f"{os.getloadavg()[0]:.1f})", flush=True)
            print_table(results, replies, [s.name for s in servers])
        finally:
            for server in servers:
                server.stop()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"logs and data in {work}")


def describe(heard: Heard) -> str:
    first = "-" if heard.first_audio is None else f"{heard.first_audio:.2f} s"
    return (f"first audio {first}, longest gap {heard.longest_gap:.2f} s, gaps "
            f"{heard.gaps:.2f} s, whole {heard.whole:.2f} s, silence sent "
            f"{heard.silence:.2f} s")


def print_table(results: dict[tuple[str, str, str], list[Heard]], replies: dict[str, str],
                names: list[str]) -> None:
    def med(values: list[float]) -> float:
        return statistics.median(values) if values else float("nan")

    print(f"\nmedians (load average now {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs)")
    header = "| reply | mode | figure | " + " | ".join(names) + " |"
    print(header)
    print("|" + "---|" * (3 + len(names)))
    for reply in replies:
        for mode in ("one-shot", "streamed"):
            rows = {
                "first audio": [med([h.first_audio or float("nan")
                                     for h in results[(reply, mode, n)]]) for n in names],
                "longest gap": [med([h.longest_gap for h in results[(reply, mode, n)]])
                                for n in names],
                "sum of gaps": [med([h.gaps for h in results[(reply, mode, n)]])
                                for n in names],
                "whole reply": [med([h.whole for h in results[(reply, mode, n)]])
                                for n in names],
                "silence sent": [med([h.silence for h in results[(reply, mode, n)]])
                                 for n in names],
            }
            for figure, values in rows.items():
                cells = " | ".join(f"{v:.2f} s" for v in values)
                print(f"| {reply} | {mode} | {figure} | {cells} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=Path("bench-out/real-random"))
    parser.add_argument("--base", default=DEFAULT_BASE,
                        help=f"the revision to compare with (default {DEFAULT_BASE})")
    parser.add_argument("--replies", default=",".join(REPLIES))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the logs and data dir")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=ARG,ARG",
                        help="one more server of this checkout with these flags, e.g. "
                             "prefix-4=--prefix-cache,4 (repeatable)")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
