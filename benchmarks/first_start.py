"""A first start from an empty data folder to ready, as a household sees it.

A local hub (``tests/fake_hub.py``, files read from ``--model-dir``, served at ``--rate``
bytes per second like a household's connection) and the real server with ``--web-uri``.
It polls ``/health`` every half second and prints each change of what the server says it
does (phase and message), then the server log's progress lines: the downloads every few
seconds, preparing the backbone, the anchors, ready. ``--screenshot DIR`` saves the studio
page in a real browser (Debian's chromium: ``apt-get install chromium chromium-driver``)
the first time the server is in each phase of ``--shots``, and once ready.

Quick, at the tiny size (seconds)::

    python -m benchmarks.first_start --rate 400000 --screenshot shots

At the real size (a 1.76 GB backbone; ``python -m benchmarks.random_model --out
bench-out/real-random`` makes one)::

    python -m benchmarks.first_start --model-dir bench-out/real-random --rate 50000000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.fake_hub import FakeHub, Repo, content_length, content_sha256
from wyoming_omnivoice.engine.store.model_files import CLONING_FILES, REQUIRED_FILES

REPO_BACKBONE, REV_BACKBONE = "bench-org/backbone", "a" * 40
REPO_GRAPHS, REV_GRAPHS = "bench-org/graphs", "b" * 40
PROGRESS_LINE = re.compile(r"Downloading |Stored |Preparing |Prepared |Voice anchors|"
                           r"Generating the anchor|Start-up page|Voice studio|Ready|"
                           r"Start-up: ready")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def model_files(model_dir: Path) -> list[str]:
    names = [n for n in (*REQUIRED_FILES, *CLONING_FILES) if (model_dir / n).is_file()]
    return names + [n + ".data" for n in names if (model_dir / (n + ".data")).is_file()]


def serve_model(model_dir: Path, rate: float | None, manifest: Path) -> FakeHub:
    """The model's files as two hub repositories (like the real model) and a manifest that
    pins the backbone's size and SHA-256, as the packaged one does."""
    hub = FakeHub()
    hub.rate = rate
    backbone, graphs = Repo(REPO_BACKBONE, REV_BACKBONE), Repo(REPO_GRAPHS, REV_GRAPHS)
    hub.repos = {REPO_BACKBONE: backbone, REPO_GRAPHS: graphs}
    entries = []
    for name in model_files(model_dir):
        is_backbone = name.startswith("llm_backbone")
        repo = backbone if is_backbone else graphs
        repo.files[name] = (model_dir / name).resolve()
        entries.append({"group": "cloning" if name in CLONING_FILES else "core",
                        "repo": repo.name, "revision": repo.revision, "path": name,
                        "local_name": name,
                        "size": content_length(repo.files[name]) if is_backbone else None,
                        "sha256": content_sha256(repo.files[name]) if is_backbone else None})
    manifest.write_text(json.dumps({"format": 1, "model_dir": "bench-model", "files": entries}))
    hub.thread.start()
    return hub


def get_health(url: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as err:  # 503 while starting: the same JSON
        return dict(json.loads(err.read()))
    except (OSError, ValueError):
        return None


def shoot(url: str, path: Path, wait_s: float = 3.0) -> None:
    """The page in headless chromium, after ``wait_s`` for its first poll."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1000,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(url)
        time.sleep(wait_s)
        driver.save_screenshot(str(path))
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=Path("tests/fixtures/models/tiny"))
    parser.add_argument("--rate", type=float, default=None,
                        help="bytes per second the hub serves (default: as fast as it can)")
    parser.add_argument("--screenshot", type=Path, default=None,
                        help="folder for screenshots of the studio page")
    parser.add_argument("--shots", default="download,prepare,voices,ready",
                        help="phases to photograph (the first moment in each)")
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--server-arg", action="append", default=[],
                        help="an argument for the server (repeat)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="first-start-"))
    manifest = work / "manifest.json"
    hub = serve_model(args.model_dir, args.rate, manifest)
    port, web_port = free_port(), free_port()
    log_path = work / "server.log"
    command = [sys.executable, "-m", "wyoming_omnivoice", "--uri", f"tcp://127.0.0.1:{port}",
               "--data-dir", str(work / "data"), "--manifest", str(manifest),
               "--web-uri", f"http://127.0.0.1:{web_port}", "--device", "cpu",
               "--log-format", "%(relativeCreated)d %(name)s %(message)s", *args.server_arg]
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(work / "hf-home"),
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "0", "HF_TOKEN": ""}
    shots = set(args.shots.split(",")) if args.screenshot else set()
    if args.screenshot:
        args.screenshot.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    health_url = f"http://127.0.0.1:{web_port}/health"
    page_url = f"http://127.0.0.1:{web_port}/"
    last = None
    print("what /health said (seconds after the process started):")
    try:
        while time.monotonic() - began < args.timeout:
            if server.poll() is not None:
                raise SystemExit(f"the server stopped (exit {server.returncode}); "
                                 f"log: {log_path}")
            data = get_health(health_url)
            if data is not None:
                phase, message = str(data["phase"]), str(data["message"])
                if (phase, message) != last:
                    print(f"{time.monotonic() - began:7.1f} s  {phase:9} {message}")
                    last = (phase, message)
                if phase in shots and args.screenshot is not None:
                    shots.discard(phase)
                    shoot(page_url, args.screenshot / f"studio-{phase}.png")
                    print(f"          (screenshot: {args.screenshot / f'studio-{phase}.png'})")
                if data.get("ready") and not shots:
                    break
            time.sleep(0.5)
    finally:
        server.terminate()
        server.wait(60)
        hub.server.shutdown()
    size = sum(content_length(f) for r in hub.repos.values() for f in r.files.values())
    print(f"\nthe server log's progress lines ({size / 1e9:.2f} GB served; log {log_path}):")
    for line in log_path.read_text().splitlines():
        if PROGRESS_LINE.search(line):
            print("  " + line[:220])
    digest = hashlib.sha256(log_path.read_bytes()).hexdigest()[:12]
    print(f"\nlog sha256 {digest}")


if __name__ == "__main__":
    main()
