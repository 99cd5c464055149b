"""Faults a real home produces, at start-up: one table, one real server start per case.

Each case builds its damage with :mod:`fault_kit` (a hostile voice folder, a damaged
prepared backbone, a full or read-only mount, a model folder made by ``hf download`` or
``cp -al``), starts ``python -m wyoming_omnivoice`` on it and checks what the server did:
ready (or refused with one clear line), the log lines it must and must not print, and
what it must have left on disk. The next fault is one arrange function and one row.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import describe, pcm_bytes, synthesize, types_of
from fault_kit import (
    MANIFEST_MODEL_DIR,
    Launch,
    data_dir_model,
    hardlinked_copy,
    hf_download,
    hub_with_tiny_model,
    joined_snapshots,
    make_voice,
    prepared_folder,
    shell,
    start,
    tiny_copy,
    tree_state,
    wait_ready_or_exit,
    write_manifest,
)

pytestmark = pytest.mark.slow

NO_TRACE = ("Traceback",)


@dataclass(frozen=True)
class StartFault:
    id: str
    arrange: Callable[[Path], Launch]
    ready: bool = True  # False: the start is refused (non-zero exit, one clear line)
    log_has: tuple[str, ...] = ()
    log_lacks: tuple[str, ...] = NO_TRACE
    #: Voices that must be advertised / must not be (ready cases).
    voices: tuple[str, ...] = ()
    no_voices: tuple[str, ...] = ()
    check: Callable[[Launch, str], None] | None = None
    #: How many times a line with this text may appear (a warning per start, not per file).
    at_most_once: tuple[str, ...] = ()


# --------------------------------------------------------------------------- voice folders


def fifo_transcript(tmp: Path) -> Launch:
    data = tmp / "data"
    os.mkfifo(make_voice(data, "piped", transcript=None) / "reference.txt")
    make_voice(data, "good")
    return Launch(data, tiny_copy(tmp / "model"))


def fifo_voice_yaml(tmp: Path) -> Launch:
    data = tmp / "data"
    os.mkfifo(make_voice(data, "piped") / "voice.yaml")
    make_voice(data, "good")
    return Launch(data, tiny_copy(tmp / "model"))


def fifo_reference_wav(tmp: Path) -> Launch:
    data = tmp / "data"
    folder = make_voice(data, "piped")
    (folder / "reference.wav").unlink()
    os.mkfifo(folder / "reference.wav")
    make_voice(data, "good")
    return Launch(data, tiny_copy(tmp / "model"))


def looping_reference_wav(tmp: Path) -> Launch:
    data = tmp / "data"
    folder = make_voice(data, "looped")
    (folder / "reference.wav").unlink()
    (folder / "reference.wav").symlink_to("reference.wav")
    make_voice(data, "good")
    return Launch(data, tiny_copy(tmp / "model"))


def long_reference(tmp: Path) -> Launch:
    """Three minutes of reference (the fault found 18): refused from the header."""
    data = tmp / "data"
    make_voice(data, "lecture", seconds=180.0, rate=8000)
    make_voice(data, "good")
    return Launch(data, tiny_copy(tmp / "model"))


# --------------------------------------------------------------------------- prepared backbones


def _damaged_prepared(damage: Callable[[Path], None]) -> Callable[[Path], Launch]:
    def arrange(tmp: Path) -> Launch:
        model = tiny_copy(tmp / "model")
        folder = prepared_folder(model, "int8")
        damage(folder)
        return Launch(tmp / "data", model, extra=["--precision", "int8"],
                      notes={"prepared": folder})
    return arrange


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _prepared_is_whole(launch: Launch, log: str) -> None:
    from wyoming_omnivoice.engine.store.prepared_store import find_prepared

    folder = launch.notes["prepared"]
    assert isinstance(folder, Path) and launch.model_dir is not None
    found = find_prepared(launch.model_dir, "int8")
    assert found is not None and found.path.parent == folder, "not rebuilt in place"


PREPARED_REBUILT = ("is damaged", "prepares it again", "backbone int8")
NOT_PUBLISHED = ("Running the published backbone", "Directory not empty", "download it again",
                 *NO_TRACE)


# --------------------------------------------------------------------------- model files


def _offline_data_dir_model(tmp: Path) -> tuple[Path, Path, Path]:
    data = tmp / "data"
    manifest = write_manifest(tmp / "manifest.json")
    model = data_dir_model(data, manifest)
    return data, manifest, model


def full_disk_after_mtime_change(tmp: Path) -> Launch:
    """The model folder restored by a `cp` without -p (new mtimes: every file is hashed
    again) onto a disk that is full: the record cannot be written."""
    data, manifest, model = _offline_data_dir_model(tmp)
    saved = tmp / "saved-model"
    shutil.move(model, saved)
    model.mkdir()
    pages = sum(-(-f.stat().st_size // 4096) + 1 for f in saved.rglob("*") if f.is_file())
    setup = "\n".join([
        shell("mount", "-t", "tmpfs", "-o", f"size={(pages + 64) * 4}k", "tmpfs", model),
        shell("cp", "-r", f"{saved}/.", model),  # no -p: new modification times
        f"cat /dev/zero > {shell(model / 'filler')} 2>/dev/null || true",
    ])
    return Launch(data, extra=["--manifest", str(manifest), "--precision", "published"],
                  env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf-home")},
                  namespace_setup=setup)


def lost_record_with_corrupted_backbone(tmp: Path) -> Launch:
    data, manifest, model = _offline_data_dir_model(tmp)
    (model / ".verified.json").unlink()
    victim = model / "llm_backbone_fp32.onnx"
    good = victim.read_bytes()
    victim.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))  # same size, one bit off
    return Launch(data, extra=["--manifest", str(manifest)],
                  env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf-home")})


def crash_leftovers(tmp: Path) -> Launch:
    data, manifest, model = _offline_data_dir_model(tmp)
    old = 1_000_000_000  # 2001: long before any write still running
    leftovers = [data / "anchors" / ".0123abcd.npz.k2j3h4.tmp",
                 data / "cache" / "clone_prompts" / ".good-0123.npz.x8y7.tmp",
                 model / ".cache-copy.q1w2e3",
                 model / ".cache-copy.pid999999999.r4t5"]  # its writer is gone
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half written")
        os.utime(path, (old, old))
    make_voice(data, "good")
    return Launch(data, extra=["--manifest", str(manifest)],
                  env={"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp / "hf-home")},
                  notes={"leftovers": leftovers})


def _leftovers_gone(launch: Launch, log: str) -> None:
    left = [str(p) for p in launch.notes["leftovers"] if Path(p).exists()]  # type: ignore[attr-defined]
    assert not left, f"crash leftovers not cleaned: {left}"


def read_only_data_dir(tmp: Path) -> Launch:
    data = tmp / "data"
    data.mkdir()
    setup = "\n".join([shell("mount", "--bind", data, data),
                       shell("mount", "-o", "remount,bind,ro", data)])
    return Launch(data, tiny_copy(tmp / "model"), namespace_setup=setup)


def read_only_anchors(tmp: Path) -> Launch:
    data = tmp / "data"
    (data / "anchors").mkdir(parents=True)
    setup = "\n".join([shell("mount", "--bind", data / "anchors", data / "anchors"),
                       shell("mount", "-o", "remount,bind,ro", data / "anchors")])
    return Launch(data, tiny_copy(tmp / "model"), namespace_setup=setup)


# --------------------------------------------------------------------------- model folders


def hf_cache_snapshot(tmp: Path) -> Launch:
    """`hf download` of both repositories, joined into one folder by links."""
    hub = hub_with_tiny_model()
    snapshots = hf_download(hub, tmp / "hf-home")
    joined = joined_snapshots(snapshots, tmp / "joined")
    cache = tmp / "hf-home" / "hub"
    return Launch(tmp / "data", joined, hub=hub,
                  notes={"cache": cache, "before": tree_state(cache),
                         "joined_before": tree_state(joined)})


def _user_folders_unchanged(launch: Launch, log: str) -> None:
    cache, joined = launch.notes["cache"], launch.model_dir
    assert isinstance(cache, Path) and joined is not None
    assert tree_state(cache) == launch.notes["before"], "the Hugging Face cache changed"
    assert tree_state(joined) == launch.notes["joined_before"], "the joined folder changed"
    assert list((launch.data_dir / "prepared").rglob("backbone.onnx")), \
        "the prepared backbone is not under --data-dir"


def hardlinked_model(tmp: Path) -> Launch:
    model = hardlinked_copy(tiny_copy(tmp / "original"), tmp / "model")
    return Launch(tmp / "data", model, extra=["--precision", "int8"])


def download_reuses_hf_cache(tmp: Path) -> Launch:
    hub = hub_with_tiny_model()
    hf_download(hub, tmp / "hf-home")
    hub.clear()
    manifest = write_manifest(tmp / "manifest.json")
    return Launch(tmp / "data", extra=["--manifest", str(manifest)], hub=hub,
                  env={"HF_HOME": str(tmp / "hf-home"), "HF_ENDPOINT": hub.url,
                       "HF_HUB_DISABLE_TELEMETRY": "1", "HF_TOKEN": ""})


def _nothing_downloaded(launch: Launch, log: str) -> None:
    assert launch.hub is not None
    assert launch.hub.gets() == [], f"fetched again: {launch.hub.gets()}"
    model = launch.data_dir / "models" / MANIFEST_MODEL_DIR
    assert (model / "llm_backbone_fp32.onnx.data").stat().st_nlink == 2  # linked, no copy


# --------------------------------------------------------------------------- the table

FAULTS = [
    StartFault("fifo-transcript", fifo_transcript,
               log_has=("reference.txt is a named pipe (FIFO)",), voices=("good",),
               no_voices=("piped",)),
    StartFault("fifo-voice-yaml", fifo_voice_yaml,
               log_has=("voice.yaml is a named pipe (FIFO)",), voices=("good",),
               no_voices=("piped",)),
    StartFault("fifo-reference-wav", fifo_reference_wav,
               log_has=("reference.wav is a named pipe (FIFO), not a regular file; replace",),
               log_lacks=("rename it", *NO_TRACE), voices=("good",), no_voices=("piped",)),
    StartFault("looping-reference-wav", looping_reference_wav,
               log_has=("reference.wav is a symbolic link loop; replace",),
               log_lacks=("rename it", *NO_TRACE), voices=("good",), no_voices=("looped",)),
    StartFault("long-reference", long_reference,
               log_has=("3.0 minutes long; at most 60 s",), voices=("good",),
               no_voices=("lecture",), log_lacks=("Encoded cloned voice 'lecture'", *NO_TRACE)),
    StartFault("prepared-record-cut",
               _damaged_prepared(lambda f: _cut(f / "prepared.json")),
               log_has=PREPARED_REBUILT, log_lacks=NOT_PUBLISHED, check=_prepared_is_whole),
    StartFault("prepared-graph-deleted",
               _damaged_prepared(lambda f: (f / "backbone.onnx").unlink()),
               log_has=PREPARED_REBUILT, log_lacks=NOT_PUBLISHED, check=_prepared_is_whole),
    StartFault("prepared-weights-cut",
               _damaged_prepared(lambda f: _cut(f / "backbone.onnx.data")),
               log_has=PREPARED_REBUILT, log_lacks=NOT_PUBLISHED, check=_prepared_is_whole),
    StartFault("prepared-weights-zero-bytes",  # what a power loss before fsync leaves
               _damaged_prepared(lambda f: (f / "backbone.onnx.data").write_bytes(b"")),
               log_has=PREPARED_REBUILT, log_lacks=NOT_PUBLISHED, check=_prepared_is_whole),
    StartFault("full-disk-record", full_disk_after_mtime_change,
               log_has=("Cannot update", "the start goes on"),
               at_most_once=("Cannot update",)),
    StartFault("lost-record-corrupt-backbone", lost_record_with_corrupted_backbone,
               ready=False, log_has=("llm_backbone_fp32.onnx has SHA-256",
                                     "(corrupted)", "HF_HUB_OFFLINE")),
    StartFault("crash-leftovers", crash_leftovers, voices=("good",), check=_leftovers_gone,
               log_has=("temp file(s) left by an interrupted write",)),
    StartFault("read-only-data-dir", read_only_data_dir, ready=False,
               log_has=("is on a read-only mount",), log_lacks=("chown", *NO_TRACE)),
    StartFault("read-only-anchors", read_only_anchors,
               log_has=("Cannot write the anchor cache",),
               at_most_once=("Cannot write the anchor cache",)),
    StartFault("hf-cache-snapshot", hf_cache_snapshot, check=_user_folders_unchanged,
               log_lacks=("drop --model-dir", "escapes model directory", *NO_TRACE)),
    StartFault("hard-linked-model", hardlinked_model, log_has=("backbone int8",),
               log_lacks=("hardlink attack", "Running the published backbone", *NO_TRACE)),
    StartFault("download-reuses-hf-cache", download_reuses_hf_cache,
               log_has=("from the Hugging Face cache",), check=_nothing_downloaded),
]


@pytest.fixture(scope="module")
def built_anchors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Voice anchors of the first case that built them, copied into the later cases' data
    dirs (only to save time: a start finds them valid, or builds them again)."""
    return tmp_path_factory.mktemp("anchors") / "anchors"


@pytest.mark.parametrize("fault", FAULTS, ids=[fault.id for fault in FAULTS])
async def test_start_fault(fault: StartFault, tmp_path: Path, built_anchors: Path) -> None:
    launch = fault.arrange(tmp_path)
    anchors = launch.data_dir / "anchors"
    if built_anchors.is_dir() and not anchors.exists():
        shutil.copytree(built_anchors, anchors)
    server = None
    try:
        server = start(launch, tmp_path)
        ready = wait_ready_or_exit(server)
        log = server.log
        if ready and not built_anchors.exists() and anchors.is_dir():
            shutil.copytree(anchors, built_anchors)
        assert ready == fault.ready, log
        for text in fault.log_has:
            assert text in log, f"missing {text!r} in:\n{log}"
        for text in fault.log_lacks:
            assert text not in log, f"unwanted {text!r} in:\n{log}"
        for text in fault.at_most_once:
            assert sum(text in line for line in log.splitlines()) == 1, log
        if not ready:
            assert server.wait_exit(30) != 0
        else:
            info = await describe(server.uri)
            names = {voice.name for program in info.tts for voice in program.voices}
            assert set(fault.voices) <= names and not set(fault.no_voices) & names, names
            events = await synthesize(server.uri, "The lights are on.", voice=(
                fault.voices[0] if fault.voices else None))
            assert types_of(events)[-1] == "audio-stop" and pcm_bytes(events)
        if fault.check is not None:
            fault.check(launch, log)
    finally:
        if server is not None:
            server.stop()
        launch.close()

