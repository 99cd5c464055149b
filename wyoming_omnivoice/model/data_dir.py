"""The ``--data-dir`` check: created when missing, one line with the fix when unusable."""

from __future__ import annotations

import os
from pathlib import Path

from wyoming_omnivoice.errors import StartupError


def prepare_data_dir(data_dir: Path) -> Path:
    """Create ``data_dir`` when missing; StartupError saying what is wrong and what to do."""
    if data_dir.exists() and not data_dir.is_dir():
        raise StartupError(f"--data-dir {data_dir} is a file, not a folder; pass a folder "
                           "(it is created when missing)")
    for parent in data_dir.parents:
        if parent.exists() and not parent.is_dir():
            raise StartupError(f"--data-dir {data_dir}: {parent} is a file, not a folder; "
                               "pass a folder path")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        raise StartupError(f"--data-dir {data_dir}: this user may not create it; create it "
                           f"yourself (sudo mkdir -p {data_dir} && sudo chown $(id -u) "
                           f"{data_dir}) or pick a folder you own") from None
    except OSError as err:
        raise StartupError(f"--data-dir {data_dir}: cannot create it "
                           f"({err.strerror or err}); pick another folder") from None
    if not os.access(data_dir, os.W_OK | os.X_OK):
        raise StartupError(f"--data-dir {data_dir} is not writable by this user (the "
                           "server stores the model, voice anchors and caches there); make "
                           f"it writable (sudo chown -R $(id -u) {data_dir}) or pick another "
                           "folder with --data-dir")
    return data_dir
