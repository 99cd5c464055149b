"""What a studio preview costs beside a Wyoming request, and what previews do to ``describe``.

Starts one server (``--model-dir``, ``--web-uri`` on loopback) and, on the same server, for
the same voice and text, interleaves:

- a Wyoming one-shot ``synthesize`` with the real ``wyoming`` client: seconds to
  ``audio-stop`` (all the audio);
- a studio preview (``POST /api/preview``, the voice by name): seconds to the last byte of
  the WAV answer;

and prints the medians side by side with their ratio (the target: a preview costs at most
10 % more). Then it keeps ``--busy`` previews running and times Wyoming ``describe`` round
trips meanwhile (median and worst), beside describes on the idle server.

    python -m benchmarks.studio_preview --model-dir tests/fixtures/models/tiny
    python -m benchmarks.studio_preview --model-dir bench-out/real-random --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from wyoming.audio import AudioStop
from wyoming.client import AsyncClient
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice

REPO_ROOT = Path(__file__).resolve().parents[1]
TEXT = "The living room lights are on and it is 21 degrees inside."
VOICE = "en-female-young"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wyoming_seconds(uri: str, text: str, voice: str) -> float:
    began = time.perf_counter()
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Synthesize(text=text, voice=SynthesizeVoice(name=voice)).event())
        while True:
            event = await client.read_event()
            if event is None or AudioStop.is_type(event.type):
                return time.perf_counter() - began


async def describe_seconds(uri: str) -> float:
    began = time.perf_counter()
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None or Info.is_type(event.type):
                return time.perf_counter() - began


def preview_seconds(web: str, text: str, voice: str) -> float:
    began = time.perf_counter()
    request = urllib.request.Request(
        f"{web}/api/preview", data=json.dumps({"voice": voice, "text": text}).encode(),
        headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=600) as answer:
        body = answer.read()
    assert body[:4] == b"RIFF", body[:200]
    return time.perf_counter() - began


def median(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--busy", type=int, default=2, help="previews kept running")
    parser.add_argument("--describes", type=int, default=30)
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--voice", default=VOICE)
    args = parser.parse_args()

    port, web_port = free_port(), free_port()
    uri, web = f"tcp://127.0.0.1:{port}", f"http://127.0.0.1:{web_port}"
    data_dir = Path(tempfile.mkdtemp(prefix="studio-bench-"))
    log = data_dir / "server.log"
    command = [sys.executable, "-m", "wyoming_omnivoice", "--uri", uri, "--model-dir",
               str(args.model_dir), "--device", args.device, "--data-dir", str(data_dir),
               "--preload-languages", "none", "--web-uri", web]
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=REPO_ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        while "Ready" not in log.read_text(errors="replace"):
            if server.poll() is not None:
                raise SystemExit(f"server exited:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; model "
              f"{args.model_dir}; voice {args.voice}; text {len(args.text)} characters")
        asyncio.run(wyoming_seconds(uri, args.text, args.voice))  # both paths warm
        preview_seconds(web, args.text, args.voice)
        wyoming, preview = [], []
        for index in range(args.rounds):  # interleaved, alternating which goes first
            pair = [lambda: wyoming.append(asyncio.run(wyoming_seconds(uri, args.text,
                                                                        args.voice))),
                    lambda: preview.append(preview_seconds(web, args.text, args.voice))]
            for run in (pair if index % 2 == 0 else pair[::-1]):
                run()
        ratio = median(preview) / median(wyoming)
        print(f"Wyoming synthesize to audio-stop: median {median(wyoming):.3f} s "
              f"(min {min(wyoming):.3f}, max {max(wyoming):.3f}, n={len(wyoming)})")
        print(f"studio preview to WAV bytes:      median {median(preview):.3f} s "
              f"(min {min(preview):.3f}, max {max(preview):.3f}, n={len(preview)})")
        print(f"preview / Wyoming: {ratio:.3f} ({(ratio - 1) * 100:+.1f} %; target <= +10 %)")

        idle = [asyncio.run(describe_seconds(uri)) for _ in range(args.describes)]
        stop = threading.Event()
        done = [0]

        def keep_previewing() -> None:
            while not stop.is_set():
                preview_seconds(web, args.text, args.voice)
                done[0] += 1

        threads = [threading.Thread(target=keep_previewing, daemon=True)
                   for _ in range(args.busy)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        busy = []
        for _ in range(args.describes):
            busy.append(asyncio.run(describe_seconds(uri)))
            time.sleep(0.05)
        stop.set()
        for thread in threads:
            thread.join(600)
        print(f"describe, idle server:           median {median(idle) * 1000:.1f} ms, "
              f"max {max(idle) * 1000:.1f} ms (n={len(idle)})")
        print(f"describe, {args.busy} previews running: median {median(busy) * 1000:.1f} ms, "
              f"max {max(busy) * 1000:.1f} ms (n={len(busy)}; {done[0]} previews finished)")
    finally:
        server.terminate()
        server.wait(60)


if __name__ == "__main__":
    main()
