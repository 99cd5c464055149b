"""Files in a user's folder that are not what they seem: one table for the reader that
every read of a user's file goes through (:mod:`wyoming_omnivoice.user_files`). Each must
give one clear error naming the file, at once (never block)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from wyoming_omnivoice.user_files import UserFileError, read_user_text


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.symlink_to("nowhere.txt")


def _folder(path: Path) -> None:
    path.mkdir()


def _huge(path: Path) -> None:
    path.write_bytes(b"x" * (64 * 1024 + 1))


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")  # endless: a read without a limit never ends


BAD_FILES: list[tuple[str, Callable[[Path], None], str]] = [
    ("fifo", _fifo, r"is a named pipe \(FIFO\), not a regular file"),
    ("symlink-loop", _loop, "is a symbolic link loop"),
    ("dangling-link", _dangling, "is a symbolic link to nothing"),
    ("folder", _folder, "is a folder, not a regular file"),
    ("too-large", _huge, "more than the 65536"),
    ("device", _device, "is a device file, not a regular file"),
]


@pytest.mark.parametrize(("make", "message"), [case[1:] for case in BAD_FILES],
                         ids=[case[0] for case in BAD_FILES])
def test_a_bad_user_file_is_refused_at_once(tmp_path: Path, make: Callable[[Path], None],
                                            message: str) -> None:
    path = tmp_path / "reference.txt"
    make(path)
    with pytest.raises(UserFileError, match=message) as info:
        read_user_text(path)
    assert str(path) in str(info.value)


def test_a_good_user_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "reference.txt"
    path.write_text("\ufeffHello there.", encoding="utf-8")
    assert read_user_text(path) == "Hello there."
    with pytest.raises(FileNotFoundError):
        read_user_text(tmp_path / "missing.txt")
