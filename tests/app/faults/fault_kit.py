"""Building blocks of the fault cases: broken voice folders, damaged caches, model folders
as users have them (Hugging Face cache snapshots made by ``hf download``, ``cp -al``
copies), full and read-only mounts, and a way to start the real server on them.

A fault case (see ``test_faults_start.py``) is a function that builds the damage under a
temporary folder and returns a :class:`Launch`: how to start the server on it. Mounts are
made in a private user and mount namespace (``unshare -rm``), so no test needs root and
nothing outside the test's folders is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from conftest import READY_TIMEOUT_S, TINY_MODEL, ServerProcess, free_port, require_slow
from fake_hub import FakeHub, Repo

from wyoming_omnivoice.engine.store.model_files import CLONING_FILES, REQUIRED_FILES

#: The tiny model's files (graphs, their weights, the tokenizer).
MODEL_FILES = [name for name in (*REQUIRED_FILES, *CLONING_FILES)
               if (TINY_MODEL / name).is_file()]
MODEL_FILES += [name + ".data" for name in MODEL_FILES if (TINY_MODEL / (name + ".data")).is_file()]
REPO_BACKBONE, REV_BACKBONE = "test-org/tiny-backbone", "a" * 40
REPO_GRAPHS, REV_GRAPHS = "test-org/tiny-graphs", "b" * 40
#: Folder name of the model under <data-dir>/models in the test manifest.
MANIFEST_MODEL_DIR = "tiny-test"


# --------------------------------------------------------------------------- launching


@dataclass
class Launch:
    """How a fault case starts the server: its flags, environment and, for mounts, the
    shell lines run first inside a private namespace."""

    data_dir: Path
    model_dir: Path | None = None  # None: the model is taken from <data-dir> (a manifest)
    extra: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    namespace_setup: str | None = None
    hub: FakeHub | None = None  # a local hub that must serve while the server starts
    notes: dict[str, object] = field(default_factory=dict)  # what the checks compare

    def args(self, port: int) -> list[str]:
        model = ["--model-dir", str(self.model_dir)] if self.model_dir is not None else []
        return ["--uri", f"tcp://127.0.0.1:{port}", *model, "--device", "cpu",
                "--data-dir", str(self.data_dir), "--debug", *self.extra]

    def close(self) -> None:
        if self.hub is not None:
            self.hub.server.shutdown()
            self.hub.server.server_close()


class NamespacedServer(ServerProcess):
    """A server started inside ``unshare -rm`` after ``setup`` (mounts) ran there."""

    setup: str = "true"

    def start(self) -> ServerProcess:
        require_slow("a server process")
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        command = ["unshare", "-rm", "sh", "-ec", f'{self.setup}\nexec "$0" "$@"',
                   sys.executable, *self.entry, *self.args]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env=env, cwd=Path(__file__).resolve().parents[3])
        return self


def require_namespaces() -> None:
    """Mount faults need unprivileged user namespaces (Linux)."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("this host gives no user namespaces (unshare -rm), which the mount "
                    "faults use to make a full or read-only disk without root")


def start(launch: Launch, log_dir: Path) -> ServerProcess:
    port = free_port()
    log = log_dir / f"server-{port}.log"
    if launch.namespace_setup is not None:
        require_namespaces()
        server: ServerProcess = NamespacedServer(launch.args(port), log, port, env=launch.env)
        server.setup = launch.namespace_setup  # type: ignore[attr-defined]
    else:
        server = ServerProcess(launch.args(port), log, port, env=launch.env)
    return server.start()


def wait_ready_or_exit(server: ServerProcess, timeout: float = READY_TIMEOUT_S) -> bool:
    """True once the server is ready, False when it exited first (a refused start)."""
    try:
        server.wait_ready(timeout)
    except RuntimeError:
        if server.alive:
            raise
        return False
    return True


# --------------------------------------------------------------------------- model folders


def tiny_copy(target: Path) -> Path:
    """A private copy of the tiny model (never the fixture itself: links to it would make
    onnx refuse it for every other test)."""
    shutil.copytree(TINY_MODEL, target, ignore=shutil.ignore_patterns("prepared"))
    return target


def hardlinked_copy(source: Path, target: Path) -> Path:
    """What ``cp -al`` (or a deduplicating backup tool) makes: every file a hard link."""
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    return target


def tree_state(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: link targets and file hashes (to show it unchanged)."""
    state = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            state[key] = "-> " + os.readlink(path)
        elif path.is_file():
            state[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            state[key] = "dir"
    return state


def hub_with_tiny_model() -> FakeHub:
    """A local hub serving the tiny model as two repositories, like the real model."""
    hub = FakeHub()
    backbone, graphs = Repo(REPO_BACKBONE, REV_BACKBONE), Repo(REPO_GRAPHS, REV_GRAPHS)
    hub.repos = {REPO_BACKBONE: backbone, REPO_GRAPHS: graphs}
    for name in MODEL_FILES:
        repo = backbone if name.startswith("llm_backbone") else graphs
        repo.files[name] = (TINY_MODEL / name).read_bytes()
    hub.thread.start()
    return hub


def hf_download(hub: FakeHub, hf_home: Path) -> dict[str, Path]:
    """``hf download REPO --revision REV`` of both repositories into the Hugging Face cache
    under ``hf_home``, by the real ``hf`` command; returns repository -> snapshot folder."""
    hf = shutil.which("hf", path=str(Path(sys.executable).parent)) or shutil.which("hf")
    assert hf, "the hf command of huggingface_hub is missing"
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_HOME": str(hf_home), "HF_TOKEN": "",
           "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_UPDATE_CHECK": "1",
           "HF_HUB_OFFLINE": "0"}
    snapshots = {}
    for repo in hub.repos.values():
        result = subprocess.run([hf, "download", repo.name, "--revision", repo.revision],
                                env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        folder = hf_home / "hub" / f"models--{repo.name.replace('/', '--')}" / "snapshots"
        snapshots[repo.name] = folder / repo.revision
        assert snapshots[repo.name].is_dir(), result.stdout + result.stderr
    return snapshots


def joined_snapshots(snapshots: dict[str, Path], target: Path) -> Path:
    """One folder that joins the repositories' snapshots by symbolic links (``ln -s``)."""
    target.mkdir(parents=True)
    for snapshot in snapshots.values():
        for entry in snapshot.iterdir():
            (target / entry.name).symlink_to(entry)
    return target


def write_manifest(path: Path, *, hashes: bool = True) -> Path:
    """A manifest of the tiny model as the two hub repositories (sizes and SHA-256 pinned
    when ``hashes``, like the real manifest pins them for the backbone)."""
    entries = []
    for name in MODEL_FILES:
        data = (TINY_MODEL / name).read_bytes()
        backbone = name.startswith("llm_backbone")
        entries.append({
            "group": "cloning" if name in CLONING_FILES else "core",
            "repo": REPO_BACKBONE if backbone else REPO_GRAPHS,
            "revision": REV_BACKBONE if backbone else REV_GRAPHS,
            "path": name, "local_name": name,
            "size": len(data) if hashes else None,
            "sha256": hashlib.sha256(data).hexdigest() if hashes else None,
        })
    path.write_text(json.dumps({"format": 1, "model_dir": MANIFEST_MODEL_DIR,
                                "files": entries}))
    return path


def data_dir_model(data_dir: Path, manifest: Path) -> Path:
    """The tiny model downloaded and verified into ``<data-dir>/models`` (as a first start
    leaves it: files and their ``.verified.json``)."""
    from wyoming_omnivoice.model.download import ensure_model

    model_dir = data_dir / "models" / MANIFEST_MODEL_DIR
    model_dir.mkdir(parents=True)
    for name in MODEL_FILES:
        (model_dir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(TINY_MODEL / name, model_dir / name)
    ensure_model(data_dir, manifest=manifest)  # all present and valid: only records them
    return model_dir


def prepared_folder(model_dir: Path, variant: str = "int8") -> Path:
    """The prepared backbone of a model folder, built by the real preparation."""
    from wyoming_omnivoice.engine.offline import prepare_backbone

    return prepare_backbone(model_dir, variant).path.parent


# --------------------------------------------------------------------------- voice folders


def speechlike(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    """Noise bursts with short pauses, roughly like syllables."""
    rng = np.random.default_rng(seed)
    out = []
    while sum(map(len, out)) < seconds * rate:
        out.append(rng.uniform(-0.3, 0.3, int(rng.uniform(0.15, 0.4) * rate)))
        out.append(np.zeros(int(0.05 * rate)))
    return np.concatenate(out)[: int(seconds * rate)].astype(np.float32)


def make_voice(data_dir: Path, name: str, *, transcript: str | None = "Hello, I am a voice.",
               seconds: float = 3.0, rate: int = 24000) -> Path:
    folder = data_dir / "voices" / name
    folder.mkdir(parents=True)
    sf.write(folder / "reference.wav", speechlike(seconds, rate), rate, subtype="PCM_16")
    if transcript is not None:
        (folder / "reference.txt").write_text(transcript, encoding="utf-8")
    return folder


def shell(*words: str | Path) -> str:
    return " ".join(shlex.quote(str(word)) for word in words)
