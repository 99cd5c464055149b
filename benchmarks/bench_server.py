"""Benchmark the Wyoming server end to end: first-audio latency, total time, throughput.

Starts ``python -m wyoming_omnivoice`` on a free loopback port with ``--model-dir`` (or
measures an already running server with ``--uri``) and reports, over real Wyoming
connections:

- one-shot ``synthesize``: time to the first ``audio-chunk`` (TTFA) and to ``audio-stop``,
  for a short Home Assistant style reply and a multi-sentence reply;
- streaming (``synthesize-start``/``-chunk``/``-stop``, text sent in small fragments like an
  LLM would): TTFA and time to ``synthesize-stopped``;
- throughput with 1, 4 and 8 concurrent clients: requests per second, audio seconds per wall
  second and the TTFA spread;
- ``--first-clause``: first audio of a reply whose first sentence is 200 characters long,
  with the first-clause cut (the default) against ``--whole-first-sentence``: two servers
  on the same model, requests interleaved, one-shot and streaming, printing the ratio
  (``--one-server`` for big models: one server, "whole" being the sentence without commas),
  then (``--rounds`` 3 or more) first audio against first-sentence length.

Usage::

    python -m benchmarks.bench_server --model-dir tests/fixtures/models/tiny --device cpu
    python -m benchmarks.bench_server --uri tcp://127.0.0.1:10200 --rounds 10
    python -m benchmarks.bench_server --model-dir tests/fixtures/models/tiny --first-clause
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from wyoming.client import AsyncClient
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

REPO_ROOT = Path(__file__).resolve().parents[1]
SHORT_TEXT = "Turned on the kitchen lights."
LONG_TEXT = (
    "The weather today is mostly sunny with a high of twenty-one degrees. "
    "In the evening clouds move in from the west. "
    "Tomorrow brings light rain in the morning, so take an umbrella. "
    "The weekend looks warm and dry."
)
#: A 200-character first sentence (its first clause: 80 characters), then a short one.
LONG_FIRST_SENTENCE = (
    "The weather in the city today is mostly sunny with a high of twenty-one degrees, and in "
    "the evening clouds move in from the west, bringing some light rain to all the northern "
    "districts until midnight. Tomorrow is dry."
)
READ_TIMEOUT_S = 300.0


@dataclass
class Measurement:
    ttfa_s: float
    total_s: float
    audio_s: float
    cycles: int


async def _read(client: AsyncClient):
    event = await asyncio.wait_for(client.read_event(), READ_TIMEOUT_S)
    if event is None:
        raise ConnectionError("server closed the connection")
    if event.type == "error":
        raise RuntimeError(f"server error: {event.data}")
    return event


async def one_shot(uri: str, text: str, voice: str | None = None) -> Measurement:
    from wyoming.tts import SynthesizeVoice

    async with AsyncClient.from_uri(uri) as client:
        started = time.perf_counter()
        await client.write_event(Synthesize(
            text=text, voice=SynthesizeVoice(name=voice) if voice else None).event())
        ttfa = None
        audio_bytes = 0
        rate = 24000
        while True:
            event = await _read(client)
            if event.type == "audio-start":
                rate = event.data.get("rate", rate)
            elif event.type == "audio-chunk":
                if ttfa is None:
                    ttfa = time.perf_counter() - started
                audio_bytes += len(event.payload or b"")
            elif event.type == "audio-stop":
                break
        total = time.perf_counter() - started
    return Measurement(ttfa or total, total, audio_bytes / 2 / rate, 1)


async def streaming(uri: str, text: str, fragment_chars: int = 12,
                    fragment_delay_s: float = 0.0) -> Measurement:
    async with AsyncClient.from_uri(uri) as client:
        started = time.perf_counter()
        ttfa = None
        audio_bytes = 0
        cycles = 0

        async def reader() -> None:
            nonlocal ttfa, audio_bytes, cycles
            while True:
                event = await _read(client)
                if event.type == "audio-chunk":
                    if ttfa is None:
                        ttfa = time.perf_counter() - started
                    audio_bytes += len(event.payload or b"")
                elif event.type == "audio-stop":
                    cycles += 1
                elif event.type == "synthesize-stopped":
                    return

        reading = asyncio.create_task(reader())
        await client.write_event(SynthesizeStart().event())
        for offset in range(0, len(text), fragment_chars):
            await client.write_event(
                SynthesizeChunk(text=text[offset:offset + fragment_chars]).event())
            if fragment_delay_s:
                await asyncio.sleep(fragment_delay_s)
        await client.write_event(Synthesize(text=text).event())
        await client.write_event(SynthesizeStop().event())
        await reading
        total = time.perf_counter() - started
    return Measurement(ttfa or total, total, audio_bytes / 2 / 24000, cycles)


def _summary(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"mean {statistics.fmean(values) * 1000:7.1f} ms  p50 " \
        f"{statistics.median(values) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


async def run_latency(uri: str, rounds: int, results: dict, short_only: bool = False) -> None:
    cases = [
        ("one-shot short", lambda: one_shot(uri, SHORT_TEXT)),
        ("one-shot 4 sentences", lambda: one_shot(uri, LONG_TEXT)),
        ("streaming 4 sentences", lambda: streaming(uri, LONG_TEXT)),
    ]
    for label, coro_factory in cases[:1] if short_only else cases:
        await coro_factory()  # warm-up round, not counted
        runs = [await coro_factory() for _ in range(rounds)]
        results[label] = [asdict(run) for run in runs]
        audio = statistics.fmean(r.audio_s for r in runs)
        rtf = statistics.fmean(r.total_s / r.audio_s for r in runs if r.audio_s)
        print(f"{label:24s} TTFA {_summary([r.ttfa_s for r in runs])}")
        print(f"{'':24s} total {_summary([r.total_s for r in runs])}  audio {audio:.2f} s  "
              f"RTF {rtf:.3f}  cycles {runs[0].cycles}")


async def run_throughput(uri: str, clients: int, requests_per_client: int,
                         results: dict) -> None:
    async def client_loop(index: int) -> list[Measurement]:
        return [await one_shot(uri, f"{SHORT_TEXT} Request {index}-{n}.")
                for n in range(requests_per_client)]

    started = time.perf_counter()
    per_client = await asyncio.gather(*(client_loop(i) for i in range(clients)))
    wall = time.perf_counter() - started
    runs = [run for runs in per_client for run in runs]
    audio = sum(r.audio_s for r in runs)
    results[f"throughput x{clients}"] = {
        "wall_s": wall, "requests": len(runs), "audio_s": audio,
        "runs": [asdict(run) for run in runs],
    }
    print(f"{clients} concurrent clients: {len(runs) / wall:6.2f} req/s  "
          f"{audio / wall:6.2f} audio s per s (aggregate RTF {wall / audio:.3f})  "
          f"TTFA {_summary([r.ttfa_s for r in runs])}")


def _without_clause_marks(text: str) -> str:
    """The same words with no clause boundary left (the cut cannot apply)."""
    return text.replace(", ", " ")


async def run_first_clause(cut_uri: str, whole_uri: str, rounds: int, results: dict,
                           *, one_server: bool = False) -> None:
    """First audio with and without the first-clause cut, requests interleaved.

    ``one_server``: both sides on one server (half the memory, for big models): "whole" is
    the same text with its commas removed, so that no clause boundary is left to cut at.
    """
    whole_text = _without_clause_marks(LONG_FIRST_SENTENCE) if one_server \
        else LONG_FIRST_SENTENCE

    def text_for(cut_side: bool) -> str:
        return LONG_FIRST_SENTENCE if cut_side else whole_text

    cases = [
        ("one-shot", lambda uri, cut_side: one_shot(uri, text_for(cut_side))),
        ("streaming", lambda uri, cut_side: streaming(uri, text_for(cut_side))),
    ]
    first = LONG_FIRST_SENTENCE.split(". ")[0] + "."
    print(f"first sentence of {len(first)} characters:")
    for label, measure in cases:
        await measure(cut_uri, True)  # warm-up rounds, not counted
        await measure(whole_uri, False)
        cut: list[Measurement] = []
        whole: list[Measurement] = []
        for _ in range(rounds):
            cut.append(await measure(cut_uri, True))
            whole.append(await measure(whole_uri, False))
        cut_p50 = statistics.median(r.ttfa_s for r in cut)
        whole_p50 = statistics.median(r.ttfa_s for r in whole)
        results[f"first clause {label}"] = {"cut": [asdict(r) for r in cut],
                                            "whole": [asdict(r) for r in whole]}
        print(f"{label:10s} first clause  TTFA {_summary([r.ttfa_s for r in cut])}  "
              f"total p50 {statistics.median(r.total_s for r in cut) * 1000:8.1f} ms")
        print(f"{label:10s} whole         TTFA {_summary([r.ttfa_s for r in whole])}  "
              f"total p50 {statistics.median(r.total_s for r in whole) * 1000:8.1f} ms")
        print(f"{label:10s} first audio ratio (clause / whole, p50): "
              f"{cut_p50 / whole_p50:.2f}x")
    if rounds >= 3 and not one_server:
        await _first_audio_by_length(cut_uri, whole_uri, max(3, rounds // 2), results)


def _sentence_of(length: int) -> str:
    """The start of the long first sentence, cut at a word, about ``length`` characters."""
    words = LONG_FIRST_SENTENCE.split(". ")[0].split()
    text = ""
    for word in words:
        if len(text) + len(word) + 2 > length:
            break
        text = f"{text} {word}" if text else word
    return text.rstrip(",") + "."


async def _first_audio_by_length(cut_uri: str, whole_uri: str, rounds: int,
                                 results: dict) -> None:
    """One-shot first audio against first-sentence length (where a cut starts to pay)."""
    print("one-shot first audio by first-sentence length (p50 of "
          f"{rounds}; the cut applies above 100 characters):")
    table = {}
    for length in (60, 100, 140, 200):
        text = _sentence_of(length) + " Tomorrow is dry."
        cut: list[float] = []
        whole: list[float] = []
        for _ in range(rounds):
            cut.append((await one_shot(cut_uri, text)).ttfa_s)
            whole.append((await one_shot(whole_uri, text)).ttfa_s)
        cut_p50, whole_p50 = statistics.median(cut), statistics.median(whole)
        chars = len(_sentence_of(length))
        table[chars] = {"cut_ttfa_s": cut, "whole_ttfa_s": whole}
        print(f"  {chars:4d} chars  whole {whole_p50 * 1000:8.1f} ms  clause "
              f"{cut_p50 * 1000:8.1f} ms  ratio {cut_p50 / whole_p50:.2f}x")
    results["first audio by length"] = table


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(args: argparse.Namespace, log_path: Path, *extra: str
                 ) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    uri = f"tcp://127.0.0.1:{port}"
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-data-"))
    command = [
        sys.executable, "-m", "wyoming_omnivoice", "--uri", uri, "--model-dir",
        str(args.model_dir), "--device", args.device, "--data-dir", str(data_dir),
        "--num-steps", str(args.num_steps), *args.server_args, *extra,
    ]
    log = log_path.open("wb")
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    started = time.perf_counter()
    while "Ready" not in log_path.read_text(errors="replace"):
        if process.poll() is not None:
            raise SystemExit(f"server exited:\n{log_path.read_text(errors='replace')}")
        if time.perf_counter() - started > 1800:
            process.kill()
            raise SystemExit("server not ready after 30 min")
        time.sleep(0.2)
    print(f"server ready in {time.perf_counter() - started:.1f} s (log {log_path})")
    return process, uri


async def main_async(args: argparse.Namespace, uri: str) -> dict:
    results: dict = {"uri": uri, "num_steps": args.num_steps, "model_dir": str(args.model_dir)}
    await run_latency(uri, args.rounds, results, short_only=args.short_only)
    for clients in args.clients:
        await run_throughput(uri, clients, args.requests_per_client, results)
    return results


def compare_first_clause(args: argparse.Namespace) -> dict:
    """Two servers on the same model, one with --whole-first-sentence; interleaved."""
    if args.model_dir is None:
        raise SystemExit("--first-clause needs --model-dir (it starts two servers)")
    logs = Path(tempfile.mkdtemp(prefix="bench-log-"))
    # One data dir: the second server reuses the voice anchors the first one built.
    args.data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-data-"))
    cut_process, cut_uri = start_server(args, logs / "cut.log")
    results: dict = {"num_steps": args.num_steps, "model_dir": str(args.model_dir),
                     "one_server": args.one_server}
    try:
        if args.one_server:
            asyncio.run(run_first_clause(cut_uri, cut_uri, args.rounds, results,
                                         one_server=True))
            return results
        whole_process, whole_uri = start_server(args, logs / "whole.log",
                                                "--whole-first-sentence")
        try:
            asyncio.run(run_first_clause(cut_uri, whole_uri, args.rounds, results))
        finally:
            whole_process.send_signal(signal.SIGTERM)
            whole_process.wait(60)
    finally:
        cut_process.send_signal(signal.SIGTERM)
        cut_process.wait(60)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--model-dir", type=Path, help="start a server with this model")
    target.add_argument("--uri", help="measure a running server (tcp://HOST:PORT)")
    parser.add_argument("--device", default="cpu", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--requests-per-client", type=int, default=3)
    parser.add_argument("--short-only", action="store_true",
                        help="latency of the short reply only (for slow models on CPU)")
    parser.add_argument("--first-clause", action="store_true",
                        help="only compare first audio of a long first sentence with and "
                             "without the first-clause cut (needs --model-dir: two servers)")
    parser.add_argument("--one-server", action="store_true",
                        help="with --first-clause: one server (half the memory); 'whole' is "
                             "the same sentence with its commas removed")
    parser.add_argument("--json", type=Path, default=None, help="write raw results here")
    parser.add_argument("--server-arg", dest="server_args", action="append", default=[],
                        help="extra server flag (repeatable), e.g. --server-arg=--debug")
    args = parser.parse_args()

    if args.first_clause:
        results = compare_first_clause(args)
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
        return
    process = None
    uri = args.uri
    if args.model_dir is not None:
        log_path = Path(tempfile.mkdtemp(prefix="bench-log-")) / "server.log"
        process, uri = start_server(args, log_path)
    try:
        results = asyncio.run(main_async(args, uri))
    finally:
        if process is not None:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
