"""A download's progress through huggingface_hub's own hook: its ``tqdm_class``.

``hf_hub_download(tqdm_class=...)`` (huggingface_hub 1.1 and later) makes its progress bar
from the class given: one bar for a plain HTTP download, one for a Xet download whose
network bytes go to ``update_transfer`` (defined here, so the Xet reporter uses this one bar
for both). The class made by :func:`bar_class` draws nothing: every ``update`` goes to a
:class:`.progress.Progress`, which logs a line every few seconds (bytes done, percent,
rate, time left) and lists the download for the start-up status while it runs.
"""

from __future__ import annotations

import logging
from typing import Any

from huggingface_hub.utils.tqdm import tqdm as hub_tqdm

from wyoming_omnivoice.progress import DOWNLOAD, Progress

_LOGGER = logging.getLogger("wyoming_omnivoice.model.download")


def bar_class(label: str, expected_size: int | None) -> type[hub_tqdm]:
    """A tqdm class for one file: ``label`` names it in the log (``Downloading x (file 2 of
    9)``); ``expected_size`` (the manifest's) stands in when the hub sends no length."""

    class LoggedBar(hub_tqdm):
        """Counts into a Progress instead of drawing (huggingface_hub's bars are off)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            kwargs["disable"] = True  # nothing drawn: the log line is the progress
            total = kwargs.get("total") or expected_size
            initial = int(kwargs.get("initial") or 0)
            super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
            self.n = initial
            self.total = total
            self._work = Progress(DOWNLOAD, label, total, done=initial, logger=_LOGGER)
            self._work.__enter__()

        def update(self, n: float | None = 1) -> bool | None:
            self.n += int(n or 0)
            self._work.set(self.n, self.total or None)
            return None

        def update_transfer(self, n: float) -> None:
            """Xet's network bytes: the bytes written (``update``) are what is counted."""

        def set_transfer_postfix_str(self, *_args: Any, **_kwargs: Any) -> None:
            return None

        def close(self) -> None:
            work = getattr(self, "_work", None)  # None: __init__ failed (tqdm's __del__)
            if work is not None:
                work.__exit__(None, None, None)
            super().close()

    return LoggedBar
