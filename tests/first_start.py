"""A first start for the tests: a local hub that serves the tiny model slowly, and the real
server started on an empty data folder with ``--web-uri``, so ``/health`` and the studio
page can be watched while it downloads, prepares and makes its anchors."""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import TINY_MODEL, ServerProcess, free_port
from fake_hub import FakeHub, Repo

from wyoming_omnivoice.engine.store.model_files import REQUIRED_FILES

REPO_BACKBONE, REPO_GRAPHS = "test-org/tiny-backbone", "test-org/tiny-graphs"
REVISION = "c" * 40
#: Bytes per second: the tiny model's 5.5 MB take about 4 s.
SLOW_RATE = 1_500_000


@dataclass
class FirstStart:
    hub: FakeHub
    server: ServerProcess
    web_port: int

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/health"

    def get(self, path: str) -> tuple[int, dict[str, Any]] | None:
        """Status and JSON of ``GET path`` on the web port; None while nobody answers."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.web_port}{path}",
                                        timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())
        except OSError:
            return None

    def stop(self) -> None:
        self.server.stop()
        self.hub.server.shutdown()
        self.hub.server.server_close()


def start_first_start(tmp_path: Path, *extra: str, rate: float = SLOW_RATE) -> FirstStart:
    """The server's first start against a slow hub (its log: ``tmp_path/server.log``)."""
    hub = FakeHub()
    hub.rate = rate
    backbone, graphs = Repo(REPO_BACKBONE, REVISION), Repo(REPO_GRAPHS, REVISION)
    hub.repos = {REPO_BACKBONE: backbone, REPO_GRAPHS: graphs}
    names = [n for n in REQUIRED_FILES if (TINY_MODEL / n).is_file()]
    names += [n + ".data" for n in names if (TINY_MODEL / (n + ".data")).is_file()]
    entries = []
    for name in names:
        repo = backbone if name.startswith("llm_backbone") else graphs
        repo.files[name] = (TINY_MODEL / name).read_bytes()
        entries.append({"group": "core", "repo": repo.name, "revision": REVISION,
                        "path": name, "local_name": name, "size": len(repo.files[name]),
                        "sha256": hashlib.sha256(repo.files[name]).hexdigest()})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"format": 1, "model_dir": "tiny-first-start",
                                    "files": entries}))
    hub.thread.start()
    port, web_port = free_port(), free_port()
    args = ["--uri", f"tcp://127.0.0.1:{port}", "--data-dir", str(tmp_path / "data"),
            "--manifest", str(manifest), "--device", "cpu", "--preload-languages", "none",
            "--web-uri", f"http://127.0.0.1:{web_port}", *extra]
    server = ServerProcess(args, tmp_path / "server.log", port)
    server.env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf-home"),
                  "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "0", "HF_TOKEN": ""}
    return FirstStart(hub, server.start(), web_port)
