"""Reading files that users put in their folders: regular files only, size-limited, never
blocking.

A voice folder, a voices file or a transcript is whatever the user (or a sync tool, a
backup restore, a broken script) left there: a named pipe (FIFO) blocks a plain ``open``
until someone writes into it, a device file never ends, a symbolic link may loop. The
server reads such files on start-up and in the folder-scan thread, so one of them would
stop the start before the model loads, or stop the scan for good. Every read of a user's
file goes through :func:`open_user_file`: it opens with ``O_NONBLOCK`` (opening a FIFO
returns at once), checks with ``fstat`` on the opened descriptor (no race between check
and read) that it is a regular file and not larger than the limit, and only then reads.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

#: Limits by kind of file (bytes): far above any real file of the kind.
TEXT_LIMIT = 64 * 1024  # a transcript or a voice.yaml
VOICES_FILE_LIMIT = 4 * 1024 * 1024  # a voices.yaml with many voices
AUDIO_LIMIT = 256 * 1024 * 1024  # a reference recording (its duration is checked apart)


class UserFileError(ValueError):
    """A user's file that cannot be read as one: the message names it and says what to do."""


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words for a message."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def describe_unusable(path: Path) -> str | None:
    """Why ``path`` (which exists as a name) is not a readable regular file, or None when
    it is one; never opens it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if os.path.islink(path):
            return "is a symbolic link to nothing"
        return f"cannot be read ({err.strerror or err})"
    if stat.S_ISREG(mode):
        return None
    return f"is {file_kind(mode)}, not a regular file"


def open_user_file(path: str | Path, *, limit: int) -> BinaryIO:
    """``path`` opened for reading in binary mode, after checking on the opened file that
    it is a regular file of at most ``limit`` bytes.

    FileNotFoundError when it is missing; UserFileError (a ValueError) naming the file for
    every other problem. Never blocks, whatever the file is.
    """
    path = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if os.path.islink(path):
            raise UserFileError(f"{path} is a symbolic link to nothing; replace it with "
                                "the file itself.") from None
        raise
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UserFileError(f"{path} is a symbolic link loop; replace it with the file "
                                "itself.") from None
        raise UserFileError(f"{path} cannot be read ({err.strerror or err}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserFileError(f"{path} is {file_kind(info.st_mode)}, not a regular file; "
                                "replace it with a plain file.")
        if info.st_size > limit:
            raise UserFileError(f"{path} has {info.st_size} bytes, more than the {limit} "
                                "this kind of file may have; is it the right file?")
        os.set_blocking(fd, True)  # a regular file: reads never wait anyway
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_user_bytes(path: str | Path, *, limit: int) -> bytes:
    """The bytes of a user's regular file of at most ``limit`` bytes (see
    :func:`open_user_file`; a file that grows while read is cut off at the limit and
    refused)."""
    with open_user_file(path, limit=limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UserFileError(f"{path} has more than the {limit} bytes this kind of file may "
                            "have; is it the right file?")
    return data


def read_user_text(path: str | Path, *, limit: int = TEXT_LIMIT,
                   encoding: str = "utf-8-sig") -> str:
    """A user's text file (UTF-8, a byte-order mark allowed); UnicodeDecodeError when it is
    not valid text, else as :func:`read_user_bytes`."""
    return read_user_bytes(path, limit=limit).decode(encoding)
