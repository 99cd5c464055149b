#!/usr/bin/env python3
"""The server end to end, as Home Assistant sees it (issue 30, item 7): a real server process
and the real ``wyoming`` client.

    python -m benchmarks.server_gpu --model-dir MODEL --device cuda --json server.json
    python -m benchmarks.server_gpu --model-dir tests/fixtures/models/tiny --device cpu \
        --rounds 3 --requests-per-client 1          # the GPU check's dry run does this

Starts ``python -m wyoming_omnivoice --device DEVICE`` on a free loopback port, waits for
its ``Ready`` and (up to ``--warm-wait`` s) its ``Warmed up`` log line, then measures over
Wyoming connections:

- the first ``audio-chunk`` of a short reply (one-shot ``synthesize``; p50/p95 of
  ``--rounds`` after one warm-up round);
- a streamed three-sentence reply (``synthesize-start``, text in 12-character
  ``synthesize-chunk`` fragments as an LLM sends them, ``synthesize-stop``): first audio
  and time to ``synthesize-stopped``;
- ``--clients`` concurrent clients (default 8), each sending ``--requests-per-client``
  different short replies back to back: replies/s, aggregate RTF, first audio under load.

Writes the figures (ms, replies/s) to ``--json`` as soon as each part is measured and copies
the server's log to ``--log``. Nothing here is GPU-specific: on the CPU with the tiny model it
is the check's dry run of this section.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_server import Measurement, one_shot, start_server, streaming

SHORT = "The living room lights are now turned on."
THREE_SENTENCES = ("The weather today is mostly sunny with a high of twenty-one degrees. "
                   "In the evening clouds move in from the west. "
                   "Tomorrow brings light rain in the morning, so take an umbrella.")
CLIENT_TEXTS = ("Turn on the heating in the bedroom.", "The front door is locked.",
                "It will rain tomorrow afternoon.", "Timer set for ten minutes.",
                "The garage door is closed.", "Good night, all lights are off.",
                "The kitchen is twenty one degrees.", SHORT)


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def wait_warm(log: Path, process: subprocess.Popen[bytes], seconds: float) -> float:
    """Seconds waited for the server's ``Warmed up`` line (it warms up after ``Ready``)."""
    started = time.perf_counter()
    while time.perf_counter() - started < seconds and process.poll() is None:
        if "Warmed up" in log.read_text(errors="replace"):
            break
        time.sleep(0.1)
    return time.perf_counter() - started


class Results:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, Any] = {}

    def put(self, **figures: Any) -> None:
        self.data.update(figures)
        if self.path is not None:
            self.path.write_text(json.dumps(self.data, indent=1) + "\n")


async def measure(uri: str, args: argparse.Namespace, out: Results) -> None:
    await one_shot(uri, SHORT)  # warm-up round, not counted
    short = [await one_shot(uri, SHORT) for _ in range(args.rounds)]
    first = [r.ttfa_s for r in short]
    out.put(first_audio_p50_ms=ms(first, 0.5), first_audio_p95_ms=ms(first, 0.95),
            short_total_p50_ms=ms([r.total_s for r in short], 0.5),
            short_audio_s=short[0].audio_s, rounds=args.rounds)
    print(f"short reply, one-shot: first audio p50 {ms(first, 0.5):.1f} ms, p95 "
          f"{ms(first, 0.95):.1f} ms of {args.rounds}; audio {short[0].audio_s:.2f} s",
          flush=True)
    await streaming(uri, THREE_SENTENCES)
    streamed = [await streaming(uri, THREE_SENTENCES) for _ in range(max(2, args.rounds // 3))]
    out.put(stream_first_audio_ms=ms([r.ttfa_s for r in streamed], 0.5),
            stream_total_ms=ms([r.total_s for r in streamed], 0.5),
            stream_audio_s=streamed[0].audio_s, stream_cycles=streamed[0].cycles)
    print(f"streamed three sentences: first audio p50 {out.data['stream_first_audio_ms']:.1f}"
          f" ms, total p50 {out.data['stream_total_ms']:.1f} ms, audio "
          f"{streamed[0].audio_s:.2f} s, {streamed[0].cycles} audio cycle(s)", flush=True)

    async def client(index: int) -> list[Measurement]:
        return [await one_shot(uri, CLIENT_TEXTS[(index + n) % len(CLIENT_TEXTS)])
                for n in range(args.requests_per_client)]

    started = time.perf_counter()
    runs = [r for rs in await asyncio.gather(*(client(i) for i in range(args.clients)))
            for r in rs]
    wall = time.perf_counter() - started
    audio = sum(r.audio_s for r in runs)
    key = f"replies_per_s_{args.clients}"
    out.put(**{key: len(runs) / wall, f"aggregate_rtf_{args.clients}": wall / audio,
               f"first_audio_p50_ms_{args.clients}": ms([r.ttfa_s for r in runs], 0.5),
               f"first_audio_p95_ms_{args.clients}": ms([r.ttfa_s for r in runs], 0.95),
               "clients": args.clients, "replies": len(runs)})
    print(f"{args.clients} concurrent clients, {len(runs)} different short replies: "
          f"{len(runs) / wall:.2f} replies/s, aggregate RTF {wall / audio:.4f}, first audio "
          f"p50 {ms([r.ttfa_s for r in runs], 0.5):.0f} ms, p95 "
          f"{ms([r.ttfa_s for r in runs], 0.95):.0f} ms", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cuda", choices=("auto", "cuda", "cpu"))
    parser.add_argument("--precision", default=None, help="server --precision (default: its)")
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests-per-client", type=int, default=3)
    parser.add_argument("--warm-wait", type=float, default=60.0)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--log", type=Path, default=None, help="copy the server log here")
    parser.add_argument("--server-arg", dest="server_args", action="append", default=[])
    args = parser.parse_args(argv)
    if args.precision:
        args.server_args += ["--precision", args.precision]
    out = Results(args.json)
    # a time limit's SIGTERM ends this process through the finally below: the server too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    log = Path(tempfile.mkdtemp(prefix="server-gpu-")) / "server.log"
    started = time.perf_counter()
    process, uri = start_server(args, log)
    ready = time.perf_counter() - started
    warm = wait_warm(log, process, args.warm_wait)
    out.put(device=args.device, precision=args.precision or "server default",
            num_steps=args.num_steps, ready_s=ready, warm_after_ready_s=warm)
    print(f"server {uri}: ready after {ready:.1f} s, warmed up {warm:.1f} s later", flush=True)
    try:
        asyncio.run(measure(uri, args, out))
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        if args.log is not None:
            shutil.copyfile(log, args.log)
    if "first_audio_p50_ms" in out.data:
        print(f"through the server: first audio p50 {out.data['first_audio_p50_ms']:.1f} ms "
              f"(target <= 100 ms on an H200), {args.clients} clients "
              f"{out.data.get(f'replies_per_s_{args.clients}', float('nan')):.2f} replies/s "
              f"(skwid: 14.1 at 8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
