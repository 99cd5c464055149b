"""Model download against a local hub: real huggingface_hub code, a tiny threaded HTTP server.

The server mimics the hub's ``<repo>/resolve/<revision>/<path>`` URLs (HEAD with the
``X-Repo-Commit`` / ``ETag`` / ``X-Linked-*`` headers huggingface_hub reads, GET with Range)
and serves a tiny model set. No network is used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import FIXTURES, ServerProcess, free_port
from fake_hub import FakeHub, Repo
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

from wyoming_omnivoice.engine.store.model_files import CLONING_FILES, REQUIRED_FILES, ModelError
from wyoming_omnivoice.model.download import (
    VERIFIED_SIDECAR,
    ManifestError,
    check_model_dir,
    ensure_model,
    load_manifest,
)
from wyoming_omnivoice.model.verification import BY_GIT_ETAG, BY_LFS_ETAG, BY_MANIFEST

FIXTURE_TINY = FIXTURES / "models" / "tiny"
REV_A = "a" * 40
REV_B = "b" * 40
REPO_BACKBONE = "test-org/tiny-backbone"
REPO_GRAPHS = "test-org/tiny-graphs"
EXTERNAL = {"llm_backbone_fp32.onnx", "audio_embeddings_encoder.onnx"}


# --------------------------------------------------------------------------- tiny model


def _graph(path: Path, *, external: bool, width: int = 64) -> None:
    """A valid one-node ONNX graph; with ``external`` its weight lives in ``<name>.data``."""
    weight = numpy_helper.from_array(
        np.arange(width * width, dtype=np.float32).reshape(width, width), name="w"
    )
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        path.stem,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    path.parent.mkdir(parents=True, exist_ok=True)
    if external:
        convert_model_to_external_data(
            model, all_tensors_to_one_file=True, location=path.name + ".data", size_threshold=0
        )
    onnx.save(model, str(path))


def build_model_set(root: Path) -> None:
    """The engine's file names, as tiny graphs (tests/fixtures/models/tiny when it exists)."""
    wanted = list(REQUIRED_FILES) + list(CLONING_FILES)
    if all((FIXTURE_TINY / name).is_file() for name in wanted):
        shutil.copytree(FIXTURE_TINY, root, dirs_exist_ok=True)
        return
    for name in wanted:
        if name.endswith(".onnx"):
            _graph(root / name, external=name in EXTERNAL)
    (root / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": {}}))


def _external_files(root: Path) -> list[str]:
    names = []
    for name in list(REQUIRED_FILES) + list(CLONING_FILES):
        data = root / (name + ".data")
        if data.is_file():
            names.append(name + ".data")
    return names


@dataclass
class HubSetup:
    hub: FakeHub
    manifest: Path
    source: Path
    data_dir: Path
    entries: list[dict]

    @property
    def model_dir(self) -> Path:
        return self.data_dir / "models" / "tiny-test"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubSetup]:
    source = tmp_path / "source"
    build_model_set(source)
    hub = FakeHub()
    backbone = Repo(REPO_BACKBONE, REV_A)
    graphs = Repo(REPO_GRAPHS, REV_B)
    hub.repos = {REPO_BACKBONE: backbone, REPO_GRAPHS: graphs}
    entries = []
    cloning = set(CLONING_FILES)
    names = list(REQUIRED_FILES) + list(CLONING_FILES) + _external_files(source)
    for name in names:
        data = (source / name).read_bytes()
        repo = backbone if name.startswith("llm_backbone") else graphs
        repo.files[name] = data
        entry = {
            "group": "cloning" if name in cloning else "core",
            "repo": repo.name,
            "revision": repo.revision,
            "path": name,
            "local_name": name,
            "size": None,
            "sha256": None,
        }
        if repo is backbone:  # like the real manifest: hashes known for the backbone only
            entry["size"] = len(data)
            entry["sha256"] = hashlib.sha256(data).hexdigest()
        entries.append(entry)
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"format": 1, "model_dir": "tiny-test", "files": entries}))

    hub.thread.start()
    # huggingface_hub reads HF_HUB_OFFLINE once, at import: start every test online whatever
    # the environment was then; the offline tests set the variable, which the code reads.
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_TOKEN", "")
    try:
        yield HubSetup(hub, manifest, source, tmp_path / "data", entries)
    finally:
        hub.server.shutdown()
        hub.server.server_close()


def _assert_complete(setup: HubSetup, names: list[str]) -> None:
    for name in names:
        local = setup.model_dir / name
        assert local.is_file() and not local.is_symlink(), name
        assert local.read_bytes() == (setup.source / name).read_bytes(), name


def _names(setup: HubSetup, group: str) -> list[str]:
    return [e["local_name"] for e in setup.entries if e["group"] == group]


# --------------------------------------------------------------------------- manifest


def test_packaged_manifest_pins_the_a4_file_set() -> None:
    manifest = load_manifest()
    core = {f.local_name: f for f in manifest.select()}
    everything = {f.local_name: f for f in manifest.select(include_cloning=True)}
    assert set(REQUIRED_FILES) <= set(core)
    assert set(CLONING_FILES) <= set(everything) - set(core)
    assert {"llm_backbone_fp32.onnx.data", "audio_embeddings_encoder.onnx.data"} <= set(core)
    assert not any("llm_decoder" in name for name in everything)
    backbone = core["llm_backbone_fp32.onnx.data"]
    assert backbone.repo == "dellusional/OmniVoice-ONNX-bidirectional"
    assert backbone.revision == "a0109dfbd1ec0ec5874d15a1b32353886a5f17dc"
    assert backbone.size == 1_761_869_824
    assert backbone.sha256 == "7ba81a2fdcfb63f9cc7c1d0186414a8edc437cb913c92ca6b2a7778c87baca17"
    assert core["llm_backbone_fp32.onnx"].size == 9_111_300
    for entry in everything.values():
        if entry.repo == "onnx-community/OmniVoice-Onnx":
            assert entry.revision == "65b5f5324837023204c6a6fa8c0c3ece2f1ab2bf"
        assert entry.local_name.split("/")[-1] == entry.path.split("/")[-1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"path": "../escape.onnx"}, "path"),
        ({"local_name": "/abs/x.onnx"}, "local_name"),
        ({"sha256": "xyz"}, "sha256"),
        ({"group": "extra"}, "group"),
        ({"size": -1}, "size"),
        ({"repo": "no-slash"}, "repo"),
        ({"colour": "red"}, "unknown keys"),
    ],
)
def test_manifest_validation_names_file_and_entry(
    tmp_path: Path, change: dict, message: str
) -> None:
    entry = {"repo": "a/b", "revision": REV_A, "path": "x.onnx", "local_name": "x.onnx"}
    entry.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": 1, "files": [entry]}))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert str(path) in str(info.value)
    assert "files[0]" in str(info.value) and message in str(info.value)


def test_manifest_duplicate_local_name_and_missing_file(tmp_path: Path) -> None:
    entry = {"repo": "a/b", "revision": REV_A, "path": "x.onnx"}
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"files": [entry, dict(entry)]}))
    with pytest.raises(ManifestError, match="appears twice"):
        load_manifest(path)
    with pytest.raises(ManifestError, match="does not exist"):
        load_manifest(tmp_path / "nope.json")


# --------------------------------------------------------------------------- download


def test_fresh_download_materialises_verified_real_files(setup: HubSetup) -> None:
    model_dir = ensure_model(setup.data_dir, manifest=setup.manifest)
    assert model_dir == setup.model_dir.resolve()
    core = _names(setup, "core")
    _assert_complete(setup, core)
    for name in _names(setup, "cloning"):
        assert not (model_dir / name).exists()
    assert {r[1].split("/resolve/")[1].split("/", 1)[1] for r in setup.hub.gets()} == set(core)
    record = json.loads((model_dir / VERIFIED_SIDECAR).read_text())["files"]
    for name in core:
        assert record[name]["sha256"] == hashlib.sha256((model_dir / name).read_bytes()).hexdigest()
    check_model_dir(model_dir)  # loadable as --model-dir too


def test_present_files_are_not_downloaded_again(setup: HubSetup) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    assert setup.hub.requests == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    # with a size in the manifest / with only the size recorded when it was downloaded
    ["llm_backbone_fp32.onnx.data", "audio_heads_decoder.onnx"],
)
def test_truncated_file_is_fetched_again(setup: HubSetup, name: str) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    victim = setup.model_dir / name
    good = victim.read_bytes()
    victim.write_bytes(good[: len(good) // 3])
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    assert victim.read_bytes() == good
    assert [r[1].rsplit("/", 1)[1] for r in setup.hub.gets()] == [name]


def test_same_size_corruption_is_detected_by_hash(setup: HubSetup) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    victim = setup.model_dir / "llm_backbone_fp32.onnx.data"
    good = victim.read_bytes()
    victim.write_bytes(bytes([good[0] ^ 0xFF]) + good[1:])
    os.utime(victim, ns=(1, 1))  # a different mtime invalidates the cached hash
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    assert victim.read_bytes() == good
    assert len(setup.hub.gets("llm_backbone_fp32.onnx.data")) == 1


def test_hash_mismatch_is_refused_and_never_written(setup: HubSetup) -> None:
    manifest = json.loads(setup.manifest.read_text())
    for entry in manifest["files"]:
        if entry["local_name"] == "llm_backbone_fp32.onnx.data":
            entry["sha256"] = "0" * 64
    setup.manifest.write_text(json.dumps(manifest))
    with pytest.raises(ModelError) as info:
        ensure_model(setup.data_dir, manifest=setup.manifest)
    text = str(info.value)
    assert "llm_backbone_fp32.onnx.data" in text and REPO_BACKBONE in text
    assert "SHA-256" in text and "0" * 64 in text
    assert not (setup.model_dir / "llm_backbone_fp32.onnx.data").exists()
    assert len(setup.hub.gets("llm_backbone_fp32.onnx.data")) == 2  # re-fetched once


def test_hub_etag_checks_files_without_a_manifest_hash(setup: HubSetup) -> None:
    # audio_heads_decoder.onnx has no hash in the manifest: the hub's LFS ETag (a SHA-256)
    # is the reference, and a transfer that does not match it is refused.
    setup.hub.bad_etag.add("audio_heads_decoder.onnx")
    with pytest.raises(ModelError, match=r"audio_heads_decoder\.onnx .*SHA-256"):
        ensure_model(setup.data_dir, manifest=setup.manifest)
    assert not (setup.model_dir / "audio_heads_decoder.onnx").exists()
    setup.hub.bad_etag.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    _assert_complete(setup, ["audio_heads_decoder.onnx"])


def test_a_git_etag_checks_files_kept_in_git(setup: HubSetup) -> None:
    """tokenizer.json is kept in git, not LFS: its ETag is the git blob SHA-1, checked too."""
    setup.hub.bad_etag.add("tokenizer.json")
    with pytest.raises(ModelError, match=r"tokenizer\.json .*git blob SHA-1"):
        ensure_model(setup.data_dir, manifest=setup.manifest)
    assert not (setup.model_dir / "tokenizer.json").exists()


def test_the_record_says_what_each_file_was_checked_against(setup: HubSetup) -> None:
    model_dir = ensure_model(setup.data_dir, manifest=setup.manifest)
    record = json.loads((model_dir / VERIFIED_SIDECAR).read_text())["files"]
    against = {name: entry["checked_against"] for name, entry in record.items()}
    assert against["llm_backbone_fp32.onnx.data"] == BY_MANIFEST
    assert against["llm_backbone_fp32.onnx"] == BY_MANIFEST
    assert against["audio_heads_decoder.onnx"] == BY_LFS_ETAG
    assert against["audio_embeddings_encoder.onnx.data"] == BY_LFS_ETAG
    assert against["tokenizer.json"] == BY_GIT_ETAG
    for entry in setup.entries:
        if entry["group"] == "core":
            assert record[entry["local_name"]]["source"] == \
                f"{entry['repo']}@{entry['revision'][:12]}:{entry['path']}"


def test_later_starts_check_files_against_the_record(setup: HubSetup) -> None:
    """A file without a hash in the manifest, changed after the first download (same size,
    other bytes, new mtime), is caught by the SHA-256 recorded then and fetched again."""
    ensure_model(setup.data_dir, manifest=setup.manifest)
    victim = setup.model_dir / "audio_heads_decoder.onnx"
    good = victim.read_bytes()
    victim.write_bytes(good[:-1] + bytes([good[-1] ^ 0xFF]))
    os.utime(victim, ns=(1, 1))
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    assert victim.read_bytes() == good
    assert [r[1].rsplit("/", 1)[1] for r in setup.hub.gets()] == ["audio_heads_decoder.onnx"]


def test_a_file_recorded_from_another_revision_is_fetched_again(setup: HubSetup) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    sidecar = setup.model_dir / VERIFIED_SIDECAR
    record = json.loads(sidecar.read_text())
    record["files"]["tokenizer.json"]["source"] = f"{REPO_GRAPHS}@{'c' * 12}:tokenizer.json"
    sidecar.write_text(json.dumps(record))
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest)
    assert [r[1].rsplit("/", 1)[1] for r in setup.hub.gets()] == ["tokenizer.json"]


def test_offline_mode_lists_missing_files_and_a_command(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as info:
        ensure_model(setup.data_dir, manifest=setup.manifest)
    text = str(info.value)
    assert "HF_HUB_OFFLINE" in text
    for name in _names(setup, "core"):
        assert name in text
    for name in _names(setup, "cloning"):
        assert name not in text
    model_dir = str(setup.model_dir.resolve())
    assert f"hf download {REPO_BACKBONE} llm_backbone_fp32.onnx llm_backbone_fp32.onnx.data " \
        f"--revision {REV_A} --local-dir {model_dir}" in text
    assert f"hf download {REPO_GRAPHS} " in text and f"--revision {REV_B}" in text
    assert setup.hub.requests == []


@pytest.mark.slow
def test_the_printed_download_commands_work(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Copy-paste the offline message's `hf download` lines, then start offline again."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as info:
        ensure_model(setup.data_dir, manifest=setup.manifest)
    commands = [
        shlex.split(line) for line in str(info.value).splitlines()
        if line.strip().startswith("hf download ")
    ]
    assert len(commands) == 2
    hf = shutil.which("hf", path=str(Path(sys.executable).parent)) or shutil.which("hf")
    assert hf, "the hf command of huggingface_hub is missing"
    env = {
        **os.environ, "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_UPDATE_CHECK": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    for command in commands:
        result = subprocess.run([hf, *command[1:]], env=env, capture_output=True, text=True,
                                timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
    setup.hub.clear()
    assert ensure_model(setup.data_dir, manifest=setup.manifest) == setup.model_dir.resolve()
    assert setup.hub.requests == []
    _assert_complete(setup, _names(setup, "core"))


def test_offline_mode_with_complete_folder_needs_no_network(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    setup.hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert ensure_model(setup.data_dir, manifest=setup.manifest) == setup.model_dir.resolve()
    assert setup.hub.requests == []


def test_offline_mode_takes_files_from_the_hub_cache(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Files fetched earlier with `hf download` (no --local-dir) sit in the hub cache.
    from huggingface_hub import constants

    cache = tmp_path / "hub-cache"
    for entry in setup.entries:
        if entry["group"] != "core":
            continue
        folder = "models--" + entry["repo"].replace("/", "--")
        target = cache / folder / "snapshots" / entry["revision"] / entry["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((setup.source / entry["path"]).read_bytes())
    corrupt = cache / f"models--{REPO_BACKBONE.replace('/', '--')}" / "snapshots" / REV_A
    (corrupt / "llm_backbone_fp32.onnx").write_bytes(b"not the graph")
    # The cache names blobs by the hub's ETag: a blob whose bytes do not match its name is
    # refused like a bad download.
    graphs = cache / f"models--{REPO_GRAPHS.replace('/', '--')}"
    heads = graphs / "snapshots" / REV_B / "audio_embeddings_encoder.onnx"
    blob = graphs / "blobs" / hashlib.sha256(b"another file").hexdigest()
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(heads.read_bytes()[:-1] + b"\x00")
    heads.unlink()
    heads.symlink_to(blob)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError) as info:
        ensure_model(setup.data_dir, manifest=setup.manifest)
    text = str(info.value)
    assert "  - llm_backbone_fp32.onnx  (" in text  # the bad cached copy is refused
    assert "  - audio_embeddings_encoder.onnx  (" in text  # its blob is not its ETag
    assert "audio_heads_decoder.onnx" not in text  # the good ones were taken
    assert (setup.model_dir / "audio_heads_decoder.onnx").is_file()
    assert setup.hub.requests == []


def test_cloning_graphs_only_when_asked(setup: HubSetup) -> None:
    ensure_model(setup.data_dir, manifest=setup.manifest)
    cloning = _names(setup, "cloning")
    assert cloning and not any(setup.hub.gets(name) for name in cloning)
    setup.hub.clear()
    ensure_model(setup.data_dir, manifest=setup.manifest, include_cloning=True)
    fetched = sorted(r[1].rsplit(f"/{REV_B}/", 1)[1] for r in setup.hub.gets())
    assert fetched == sorted(cloning)
    _assert_complete(setup, cloning)
    check_model_dir(setup.model_dir, include_cloning=True)


@pytest.mark.slow
def test_interrupted_transfer_resumes_with_range(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch
) -> None:
    # huggingface_hub writes in chunks of DOWNLOAD_CHUNK_SIZE (10 MB): make the chunks smaller
    # than the tiny file so that bytes received before the cut reach the disk, as they do
    # for the real 1.7 GB file.
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 1024)
    name = "llm_backbone_fp32.onnx.data"
    setup.hub.cut_once.add(name)
    ensure_model(setup.data_dir, manifest=setup.manifest)
    _assert_complete(setup, [name])
    ranges = [r[2] for r in setup.hub.gets(name)]
    assert len(ranges) == 2
    assert ranges[0] is None
    size = len(setup.hub.repos[REPO_BACKBONE].files[name])
    assert ranges[1] is not None and ranges[1].startswith("bytes=")
    assert 0 < int(ranges[1][len("bytes="):].split("-")[0]) < size


def test_download_failure_names_remaining_files(setup: HubSetup) -> None:
    setup.hub.missing.add("audio_heads_decoder.onnx")
    with pytest.raises(ModelError) as info:
        ensure_model(setup.data_dir, manifest=setup.manifest)
    text = str(info.value)
    assert "Could not download audio_heads_decoder.onnx" in text
    assert f"hf download {REPO_GRAPHS} audio_heads_decoder.onnx" in text
    assert not (setup.model_dir / "audio_heads_decoder.onnx").exists()


# --------------------------------------------------------------------------- the server


def _server(setup: HubSetup, data_dir: Path, log_dir: Path, **env: str) -> ServerProcess:
    port = free_port()
    args = [
        "--uri", f"tcp://127.0.0.1:{port}", "--data-dir", str(data_dir),
        "--manifest", str(setup.manifest), "--device", "cpu",
    ]
    server = ServerProcess(args, log_dir / f"server-{port}.log", port)
    server.env = {"HF_HOME": str(log_dir / "hf-home"), **env}
    return server.start()


@pytest.mark.slow
def test_server_first_start_downloads_then_serves(
    setup: HubSetup, shared_data_dir: Path, tmp_path: Path
) -> None:
    """The README's first start: no model yet -> download, verify, load, answer describe."""
    assert all((FIXTURE_TINY / name).is_file() for name in REQUIRED_FILES), "tiny model missing"
    server = _server(setup, shared_data_dir, tmp_path)
    try:
        server.wait_ready()
        result = subprocess.run(
            [sys.executable, "-m", "wyoming_omnivoice.health_check", "--uri", server.uri],
            capture_output=True, text=True, timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("healthy: omnivoice")
    finally:
        server.stop()
    model_dir = shared_data_dir / "models" / "tiny-test"
    for name in _names(setup, "core"):
        assert (model_dir / name).read_bytes() == (FIXTURE_TINY / name).read_bytes(), name
    assert "Downloading llm_backbone_fp32.onnx.data" in server.log


@pytest.mark.slow
def test_server_offline_without_model_says_what_is_missing(
    setup: HubSetup, tmp_path: Path
) -> None:
    server = _server(setup, tmp_path / "data", tmp_path, HF_HUB_OFFLINE="1")
    assert server.wait_exit(timeout=120) != 0
    log = server.log
    assert "HF_HUB_OFFLINE" in log
    assert f"hf download {REPO_BACKBONE} llm_backbone_fp32.onnx llm_backbone_fp32.onnx.data" in log
    assert setup.hub.requests == []


# --------------------------------------------------------------------------- --model-dir


def test_check_model_dir_accepts_a_complete_folder(tmp_path: Path) -> None:
    build_model_set(tmp_path)
    check_model_dir(tmp_path)
    check_model_dir(tmp_path, include_cloning=True)


def test_check_model_dir_lists_missing_graphs_with_a_fix(tmp_path: Path) -> None:
    build_model_set(tmp_path)
    (tmp_path / CLONING_FILES[0]).unlink()
    check_model_dir(tmp_path)  # cloning encoders are not needed without cloned voices
    (tmp_path / "audio_heads_decoder.onnx").unlink()
    with pytest.raises(ModelError) as info:
        check_model_dir(tmp_path, include_cloning=True)
    text = str(info.value)
    assert "missing audio_heads_decoder.onnx" in text and f"missing {CLONING_FILES[0]}" in text
    assert "hf download onnx-community/OmniVoice-Onnx" in text
    assert "--revision 65b5f5324837023204c6a6fa8c0c3ece2f1ab2bf" in text


def test_check_model_dir_finds_missing_and_truncated_external_data(tmp_path: Path) -> None:
    build_model_set(tmp_path)
    data = tmp_path / "llm_backbone_fp32.onnx.data"
    assert data.is_file()
    data.write_bytes(data.read_bytes()[:10])
    with pytest.raises(ModelError, match=r"llm_backbone_fp32\.onnx\.data .*truncated"):
        check_model_dir(tmp_path)
    data.unlink()
    with pytest.raises(ModelError) as info:
        check_model_dir(tmp_path)
    assert "missing llm_backbone_fp32.onnx.data (external data of llm_backbone_fp32.onnx)" in str(
        info.value
    )
    assert "hf download dellusional/OmniVoice-ONNX-bidirectional" in str(info.value)


def test_check_model_dir_explains_the_causal_decoder(tmp_path: Path) -> None:
    build_model_set(tmp_path)
    (tmp_path / "llm_backbone_fp32.onnx").unlink()
    (tmp_path / "llm_decoder.onnx").write_bytes(b"x")
    with pytest.raises(ModelError, match="causal decoder"):
        check_model_dir(tmp_path)
    with pytest.raises(ModelError, match="does not exist"):
        check_model_dir(tmp_path / "nowhere")


# --------------------------------------------------------------------------- no network


@pytest.mark.slow
def test_unreachable_hub_fails_fast_with_every_size(
    setup: HubSetup, tmp_path: Path
) -> None:
    """No network: one message with the files and their sizes; no retries, no hub noise."""
    entries = json.loads(setup.manifest.read_text())
    for entry in entries["files"]:
        if entry["repo"] == REPO_GRAPHS:
            entry["approx_size"] = 2_500_000  # what the packaged manifest gives for onnx-community
    setup.manifest.write_text(json.dumps(entries))
    server = _server(setup, tmp_path / "data", tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{free_port()}")
    assert server.wait_exit(timeout=120) == 2
    log = server.log
    lines = log.splitlines()
    assert "Traceback" not in log
    assert sum("Could not download" in line for line in lines) == 1, log
    assert "cannot reach http://127.0.0.1:" in log and "tried 2 times" in log
    assert "Retrying" not in log and "huggingface_hub:" not in log, log
    assert f"{REPO_GRAPHS} revision {REV_B}, path audio_heads_decoder.onnx, about 2.5 MB)" in log
    assert "(about " in log and " in all)" in log
    assert setup.hub.requests == []  # nothing reached the (working) hub


def test_hub_warnings_are_printed_once(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from wyoming_omnivoice.model.hub_access import quiet_hub_logs

    hub_logger = logging.getLogger("huggingface_hub.utils._http")
    with caplog.at_level(logging.WARNING), quiet_hub_logs():
        for wait in (1, 2, 4, 8, 8):
            hub_logger.warning("'[Errno 111] Connection refused' thrown while requesting HEAD x")
            hub_logger.warning(f"Retrying in {wait}s [Retry {wait}/5].")
    assert caplog.messages == [
        "huggingface_hub: '[Errno 111] Connection refused' thrown while requesting HEAD x",
        "huggingface_hub: Retrying in 1s [Retry 1/5].",
    ]
    assert all(record.name == "wyoming_omnivoice.model.download" for record in caplog.records)


@pytest.mark.slow
def test_a_download_logs_its_progress_while_it_runs(
    setup: HubSetup, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """huggingface_hub's own progress hook (``tqdm_class``) feeds a line every few seconds
    (here every 0.2 s, from a slow hub): bytes done, percent, rate and time left; and the
    download is listed as work running while it runs, and no longer once it is done."""
    from huggingface_hub import constants

    from wyoming_omnivoice import progress

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)
    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.2)
    setup.hub.rate = 1_000_000  # bytes per second: the 2.6 MB file takes about 2.6 s
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.update(f"{s.kind}: {s.label}" for s in progress.running())
            stop.wait(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with caplog.at_level(logging.INFO, logger="wyoming_omnivoice"):
            ensure_model(setup.data_dir, manifest=setup.manifest)
    finally:
        stop.set()
        watcher.join()
    name = "audio_embeddings_encoder.onnx.data"
    lines = [m for m in caplog.messages if m.startswith(f"Downloading {name} (file ")]
    assert len(lines) >= 2, caplog.messages
    percents = []
    for index, line in enumerate(lines):
        # The rate (and so the time left) is given from half a second on.
        rate = r", [\d.]+ [kM]B/s, about \d+ s left"
        rate = rate if index else f"({rate})?"
        match = re.search(r": ([\d.]+ [kM]B) of 2\.6 MB \((\d+) %\)" + rate + "$", line)
        assert match, line
        percents.append(int(match.group(2)))
    assert percents == sorted(percents) and len(set(percents)) >= 2
    assert any(label.startswith(f"download: Downloading {name} (file ") for label in seen)
    assert progress.running() == []
    _assert_complete(setup, [name])
