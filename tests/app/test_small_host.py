"""A small host: the memory the server may use is read before the heavy work (cgroup limit,
else available memory), a start that does not fit stops with one line, and the first start
(int8 preparation, anchors, warm-up) runs inside a memory limit scaled to the tiny model,
enforced by a real cgroup (root; skipped with the reason where none can be made)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, ServerProcess, free_port, synthesize, tiny_server_args, types_of
from memory_limit import MemoryCgroup

from wyoming_omnivoice.model import memory_room
from wyoming_omnivoice.wyoming_protocol.errors import StartupError

TINY = FIXTURES / "models" / "tiny"
GB = 10**9


def fake_host(root: Path, *, available_kb: int, cgroup_line: str) -> tuple[Path, Path]:
    proc = root / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(f"MemTotal: 8000000 kB\nMemAvailable: {available_kb} kB\n")
    (proc / "self" / "cgroup").write_text(cgroup_line + "\n")
    return proc, root / "sys"


def test_cgroup_v2_limit_less_what_the_cgroup_holds_is_the_room(tmp_path: Path) -> None:
    proc, sys_root = fake_host(tmp_path, available_kb=6_000_000, cgroup_line="0::/addon")
    (sys_root / "addon").mkdir(parents=True)
    (sys_root / "cgroup.controllers").write_text("cpu memory\n")
    (sys_root / "addon" / "memory.max").write_text(str(3 * GB))
    (sys_root / "addon" / "memory.current").write_text(str(GB))
    # Reclaimable file cache is not counted as held.
    (sys_root / "addon" / "memory.stat").write_text(f"anon 1\ninactive_file {GB // 2}\n")
    (sys_root / "memory.max").write_text("max\n")
    room = memory_room.memory_room(proc, sys_root)
    assert room is not None
    assert room.available == 3 * GB - GB // 2
    assert "3.00 GB" in room.source and "memory.max" in room.source


def v2_tree(sys_root: Path, folders: dict[str, dict[str, str]]) -> None:
    """A fake cgroup v2 hierarchy: ``{"addon": {"memory.max": "..."}, ...}``."""
    sys_root.mkdir(parents=True, exist_ok=True)
    (sys_root / "cgroup.controllers").write_text("cpu io memory pids\n")
    for folder, files in folders.items():
        (sys_root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (sys_root / folder / name).write_text(text + "\n")


def test_cgroup_v2_the_tightest_of_the_cgroup_and_its_parents(tmp_path: Path) -> None:
    """The Supervisor limits the add-on's parent slice; the add-on's own cgroup says max."""
    proc, sys_root = fake_host(tmp_path, available_kb=16_000_000,
                               cgroup_line="0::/hassio.slice/addon_omnivoice")
    v2_tree(sys_root, {
        "hassio.slice": {"memory.max": str(int(2.5 * GB)), "memory.current": str(GB),
                         "memory.stat": "anon 700000000\ninactive_file 200000000"},
        "hassio.slice/addon_omnivoice": {"memory.max": "max", "memory.current": "0",
                                         "memory.stat": "inactive_file 0"},
        "": {"memory.max": "max"},
    })
    room = memory_room.memory_room(proc, sys_root)
    assert room is not None
    assert room.available == int(2.5 * GB) - (GB - 200_000_000)
    assert str(sys_root / "hassio.slice" / "memory.max") in room.source
    assert "0.80 GB of it in use" in room.source


def test_cgroup_v2_under_a_hybrid_layout(tmp_path: Path) -> None:
    """systemd's hybrid layout mounts v2 at <root>/unified (no cgroup.controllers at the
    root); a v1 line for another controller is ignored."""
    proc, sys_root = fake_host(tmp_path, available_kb=16_000_000,
                               cgroup_line="3:cpu,cpuacct:/x\n0::/svc")
    (sys_root / "unified" / "svc").mkdir(parents=True)
    (sys_root / "unified" / "svc" / "memory.max").write_text(str(3 * GB))
    room = memory_room.memory_room(proc, sys_root)
    assert room is not None and room.available == 3 * GB
    assert "unified" in room.source


def test_a_v2_limit_too_small_stops_the_start_with_its_file(tmp_path: Path) -> None:
    """The reading and the check together: the one line names the v2 limit's file."""
    proc, sys_root = fake_host(tmp_path, available_kb=16_000_000, cgroup_line="0::/addon")
    limit = memory_room.start_need(TINY, "fp32") // 2
    v2_tree(sys_root, {"addon": {"memory.max": str(limit), "memory.current": "0"}})
    room = memory_room.memory_room(proc, sys_root)
    with pytest.raises(StartupError) as raised:
        memory_room.check_start_memory(TINY, "fp32", room=room)
    assert str(sys_root / "addon" / "memory.max") in str(raised.value)


def test_cgroup_v1_limit_and_host_memory(tmp_path: Path) -> None:
    proc, sys_root = fake_host(tmp_path, available_kb=1_000_000,
                               cgroup_line="4:memory:/docker/abc")
    folder = sys_root / "memory" / "docker" / "abc"
    folder.mkdir(parents=True)
    (folder / "memory.limit_in_bytes").write_text(str(4 * GB))
    (folder / "memory.usage_in_bytes").write_text("0")
    (sys_root / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712")
    room = memory_room.memory_room(proc, sys_root)
    assert room is not None
    assert room.available == 1_000_000 * 1024  # the host has less than the limit allows
    assert "available on the host" in room.source


def test_a_container_sees_its_cgroup_at_the_mount_root(tmp_path: Path) -> None:
    proc, sys_root = fake_host(tmp_path, available_kb=20_000_000,
                               cgroup_line="0::/../../host/path")
    sys_root.mkdir()
    (sys_root / "cgroup.controllers").write_text("memory\n")
    (sys_root / "memory.max").write_text(str(2 * GB))
    room = memory_room.memory_room(proc, sys_root)
    assert room is not None and room.available == 2 * GB


def test_a_start_that_does_not_fit_stops_with_the_figures_and_the_fix() -> None:
    need = memory_room.start_need(TINY, "fp32")
    small = memory_room.MemoryRoom(need - 1, "a memory limit of X")
    with pytest.raises(StartupError) as raised:
        memory_room.check_start_memory(TINY, "fp32", room=small)
    message = str(raised.value)
    assert "\n" not in message
    assert f"{need / GB:.1f} GB" in message and "a memory limit of X" in message
    # int8 needs less than fp32, so the advice names it when it would fit.
    assert memory_room.start_need(TINY, "int8") <= need
    memory_room.check_start_memory(TINY, "int8", room=memory_room.MemoryRoom(need, "ok"))


def test_int8_is_the_smallest_start() -> None:
    needs = {p: memory_room.start_need(TINY, p) for p in ("int8", "fp32", "fp16")}
    assert needs["int8"] < needs["fp32"] < needs["fp16"]


# --------------------------------------------------------------------------- real cgroups


def limited_server(tmp_path: Path, limit_bytes: int) -> tuple[ServerProcess, MemoryCgroup]:
    cgroup = MemoryCgroup.create("omnivoice-test", limit_bytes)
    if cgroup is None:
        pytest.skip(f"no memory cgroup can be made here: {MemoryCgroup.unavailable}")
    model = tmp_path / "tiny"
    shutil.copytree(TINY, model, ignore=shutil.ignore_patterns("prepared"))
    port = free_port()
    args = tiny_server_args(port, tmp_path / "data")
    args[args.index("--model-dir") + 1] = str(model)
    server = ServerProcess(args, tmp_path / "server.log", port, preexec=cgroup.preexec())
    return server, cgroup


def test_the_real_cgroup_of_a_process_is_read(tmp_path: Path) -> None:
    """A real memory cgroup (v2 where it can be made, else v1; root): a process inside it
    reads its limit from the real /proc and /sys/fs/cgroup."""
    limit = 3 * GB
    cgroup = MemoryCgroup.create("omnivoice-read", limit)
    if cgroup is None:
        pytest.skip(f"no memory cgroup can be made here: {MemoryCgroup.unavailable}")
    script = ("from wyoming_omnivoice.model.memory_room import memory_room\n"
              "room = memory_room()\nprint(room.available)\nprint(room.source)\n")
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True, preexec_fn=cgroup.preexec(), timeout=60)
    finally:
        cgroup.close()
    available, source = done.stdout.splitlines()
    assert int(available) <= limit
    if "memory limit" in source:  # else the host has less available than the limit
        limit_file = "memory.max" if cgroup.version == 2 else "memory.limit_in_bytes"
        assert f"{cgroup.path / limit_file}" in source


@pytest.mark.slow
async def test_first_start_inside_a_memory_limit_scaled_to_the_model(tmp_path: Path) -> None:
    """Preparation (int8), 15 anchors and warm-up inside the limit the server's own estimate
    asks for: no kill, a reply after."""
    limit = int(memory_room.start_need(TINY, "int8") * 1.1)
    server, cgroup = limited_server(tmp_path, limit)
    try:
        server.start().wait_ready()
        assert "Preparing the int8 backbone" in server.log
        events = await synthesize(server.uri, "The lights are on.")
        assert types_of(events)[-1] == "audio-stop"
        # Queued on the worker before the server listened: done before the reply.
        assert "Warmed up: every graph ran once" in server.log
        assert "Start-up: ready" in server.log and "engine " in server.log
    finally:
        server.stop()
        kills = cgroup.oom_kills()
        cgroup.close()
    assert kills == 0


@pytest.mark.slow
def test_too_little_memory_stops_with_one_line_not_a_kill(tmp_path: Path) -> None:
    """Below the estimate (and below what the start really uses) the server exits 2 with
    the figures; without the check the kernel kills it (137) with nothing in the log."""
    server, cgroup = limited_server(tmp_path, 160 * 2**20)
    try:
        code = server.start().wait_exit(120)
        kills = cgroup.oom_kills()
    finally:
        server.stop()
        cgroup.close()
    assert kills == 0, server.log
    assert code == 2, server.log
    (line,) = [line for line in server.log.splitlines() if "Not enough memory" in line]
    assert "needs about" in line and "has 0." in line and "memory limit" in line
