"""Start-up problems a newcomer meets: one line that says the fix, exit code 2, no traceback.

Each test starts the real server (``python -m wyoming_omnivoice``) as a subprocess. The address
tests pass an *empty* ``--model-dir``: the model check would fail on it, so seeing the
address message instead proves the address is checked before the model is looked at or
loaded.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO_ROOT, TINY_MODEL, ServerProcess, free_port

from wyoming_omnivoice.app.listen_address import bind_error_message

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

PREFIX = "wyoming-omnivoice: error: "


def run_server(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-m", "wyoming_omnivoice", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, env=env, timeout=300)


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one error line; fails when the exit code is not 2 or a traceback shows."""
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert "Traceback" not in output, output
    lines = [line for line in result.stderr.splitlines() if line.startswith(PREFIX)]
    assert len(lines) == 1, output
    return lines[0][len(PREFIX):]


@pytest.fixture
def empty_model(tmp_path: Path) -> Path:
    folder = tmp_path / "empty-model"
    folder.mkdir()
    return folder


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def address_args(uri: str, model: Path, data: Path) -> list[str]:
    return ["--uri", uri, "--model-dir", str(model), "--data-dir", str(data), "--device", "cpu"]


# --------------------------------------------------------------------------- --uri


def test_port_in_use_is_one_line_before_the_model(
    taken_port: int, empty_model: Path, tmp_path: Path
) -> None:
    uri = f"tcp://127.0.0.1:{taken_port}"
    result = run_server(*address_args(uri, empty_model, tmp_path / "data"))
    assert error_line(result) == (
        f"--uri {uri}: port {taken_port} is in use, probably by another Wyoming server; stop "
        f"it or pick another port with --uri tcp://127.0.0.1:{taken_port + 1}")


def test_piper_port_message_names_piper() -> None:
    err = OSError(errno.EADDRINUSE, "Address already in use")
    assert bind_error_message("tcp://0.0.0.0:10200", "0.0.0.0", 10200, err) == (
        "--uri tcp://0.0.0.0:10200: port 10200 is in use, probably by another Wyoming server "
        "(Piper's default is 10200); stop it or pick another port with "
        "--uri tcp://0.0.0.0:10201")


def test_unknown_host(empty_model: Path, tmp_path: Path) -> None:
    uri = "tcp://no-such-host.invalid:10200"
    line = error_line(run_server(*address_args(uri, empty_model, tmp_path / "data")))
    assert line.startswith(f"--uri {uri}: cannot resolve the host name 'no-such-host.invalid' (")
    assert line.endswith("); use an address of this machine, e.g. --uri tcp://0.0.0.0:10200 "
                         "for all interfaces")


def test_address_of_another_machine(empty_model: Path, tmp_path: Path) -> None:
    uri = "tcp://192.0.2.1:10200"  # TEST-NET-1: never an address of this machine
    assert error_line(run_server(*address_args(uri, empty_model, tmp_path / "data"))) == (
        f"--uri {uri}: 192.0.2.1 is not an address of this machine; use "
        "--uri tcp://0.0.0.0:10200 to listen on all interfaces, or one of this machine's own "
        "addresses")


def test_unix_socket_in_a_missing_folder(empty_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "no" / "such"
    uri = f"unix://{folder}/x.sock"
    assert error_line(run_server(*address_args(uri, empty_model, tmp_path / "data"))) == (
        f"--uri {uri}: the folder {folder} does not exist; create it (mkdir -p {folder}) or "
        "pick another socket path")


def test_unix_socket_path_that_is_a_file_is_left_alone(empty_model: Path,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("keep me")
    uri = f"unix://{path}"
    assert error_line(run_server(*address_args(uri, empty_model, tmp_path / "data"))) == (
        f"--uri {uri}: {path} is a file, not a socket; the server would replace it, so pick "
        "another socket path")
    assert path.read_text() == "keep me"


def test_unix_socket_with_a_live_server(empty_model: Path, tmp_path: Path) -> None:
    path = tmp_path / "live.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        other.bind(str(path))
        other.listen(1)
        uri = f"unix://{path}"
        assert error_line(run_server(*address_args(uri, empty_model, tmp_path / "data"))) == (
            f"--uri {uri}: another server is listening on {path}; stop it or pick another "
            "socket path")
        assert path.exists()


def test_stale_unix_socket_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(path))  # closed without unlinking: what a killed server leaves
    args = ["--uri", f"unix://{path}", "--model-dir", str(TINY_MODEL), "--device", "cpu",
            "--data-dir", str(tmp_path / "data")]
    server = ServerProcess(args, tmp_path / "server.log", port=0).start()
    try:
        server.wait_ready()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(path))  # the new server answers on the old path
    finally:
        assert server.stop() == 0, server.log


def test_zeroconf_on_loopback_warns(empty_model: Path, tmp_path: Path) -> None:
    port = free_port()
    result = run_server("--zeroconf", *address_args(f"tcp://127.0.0.1:{port}", empty_model,
                                                    tmp_path / "data"))
    assert (f"--zeroconf with --uri tcp://127.0.0.1:{port}: the server listens on a loopback "
            "address that Home Assistant on another machine cannot reach; use "
            f"--uri tcp://0.0.0.0:{port}") in result.stderr
    assert error_line(result).startswith(f"Model directory {empty_model.resolve()}")


# --------------------------------------------------------------------------- other flags


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    path = tmp_path / "hostname"
    path.write_text("box\n")
    result = run_server("--uri", f"tcp://127.0.0.1:{free_port()}", "--model-dir",
                        str(TINY_MODEL), "--data-dir", str(path))
    assert error_line(result) == (f"--data-dir {path} is a file, not a folder; pass a folder "
                                  "(it is created when missing)")


def _read_only_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    if os.access(folder, os.W_OK):  # root ignores the mode: try a kernel folder instead
        folder = Path("/proc/sys/kernel")
        if not folder.is_dir() or os.access(folder, os.W_OK):
            pytest.skip("no folder here is read-only for this user")
    return folder


def test_read_only_data_dir_says_the_fix(tmp_path: Path) -> None:
    folder = _read_only_folder(tmp_path)
    result = run_server("--uri", f"tcp://127.0.0.1:{free_port()}", "--model-dir",
                        str(TINY_MODEL), "--data-dir", str(folder))
    assert error_line(result) == (
        f"--data-dir {folder} is not writable by this user (the server stores the model, "
        "voice anchors and caches there); make it writable (sudo chown -R $(id -u) "
        f"{folder}) or pick another folder with --data-dir")


def test_device_cuda_without_cuda_gives_the_install_commands(tmp_path: Path) -> None:
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this onnxruntime has CUDA: the message is for CPU-only installs")
    result = run_server("--uri", f"tcp://127.0.0.1:{free_port()}", "--model-dir",
                        str(TINY_MODEL), "--data-dir", str(tmp_path / "data"),
                        "--device", "cuda")
    line = error_line(result)
    assert line.startswith("device 'cuda' was requested but this onnxruntime has no CUDA "
                           "provider")
    assert "pip uninstall -y onnxruntime && pip install -e '.[gpu]'" in line


def test_bad_instruct_in_the_default_voice_is_one_line(tmp_path: Path) -> None:
    voices = tmp_path / "voices.yaml"
    voices.write_text("voices:\n  - name: grandpa\n    description: Old man\n"
                      "    languages: [en]\n    instruct: old\n", encoding="utf-8")
    result = run_server("--uri", f"tcp://127.0.0.1:{free_port()}", "--model-dir",
                        str(TINY_MODEL), "--data-dir", str(tmp_path / "data"),
                        "--voices-file", str(voices), "--voice", "grandpa")
    line = error_line(result)
    assert "Unsupported instruct item 'old' in 'old'." in line
    assert len(result.stderr.splitlines()) == 1, result.stderr


def test_warm_up_log_counts_in_good_grammar(caplog: pytest.LogCaptureFixture) -> None:
    from wyoming_omnivoice import Engine

    engine = Engine.load(TINY_MODEL, device="cpu")
    with caplog.at_level("INFO", logger="wyoming_omnivoice.engine.warm_up"):
        done = engine.warm_up()
    assert done == 1
    assert "Warm-up: 1 forward shape ready" in caplog.messages
