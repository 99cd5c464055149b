"""What the server is doing during its start, for ``/health`` and the studio page.

:class:`StartupStatus` holds the phase that :mod:`.cli` sets as the start goes on (the model
files, loading the engine, the voices' anchors, ready) and adds the long work running now
(:func:`.progress.running`: a file downloading, the backbone being prepared, anchors being
made), each with its numbers. The web server reads it through its
:class:`~wyoming_omnivoice.web.health.StartupState` interface (``health()``); nothing of
the web is imported here. Thread-safe: the start-up runs on the main thread, the page's
requests on the web server's.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from wyoming_omnivoice.progress import DOWNLOAD, PREPARE, running

#: The phases, in order, with what the page says while no long work is running.
PHASES = {
    "starting": "Starting",
    "model": "Checking the model files",
    "engine": "Loading the model",
    "voices": "Making the default voice's anchor",
    "worker": "Starting the synthesis worker",
    "ready": "Ready",
}
#: The phase a kind of long work stands for (a prepare runs inside ``engine``, and again
#: inside ``voices`` for the anchors' fp32 backbone), and what the page says then.
_WORK_PHASE = {DOWNLOAD: "download", PREPARE: "prepare"}
_WORK_WORDS = {"download": "Downloading the model",
               "prepare": "Preparing the model for this machine"}


class StartupStatus:
    """The start's phase and the work running; :meth:`health` is the JSON of ``/health``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._phase = "starting"
        self._began = time.monotonic()
        self._ready_after: float | None = None
        #: How the model runs other than intended, once the engine is loaded (the published
        #: backbone in place of the variant chosen, one row per forward): ``model_notes``.
        self.model_notes: tuple[str, ...] = ()

    @property
    def phase(self) -> str:
        return self._phase

    def enter(self, phase: str) -> None:
        """The start moved on to ``phase`` (one of :data:`PHASES`)."""
        if phase not in PHASES:
            raise ValueError(f"unknown start-up phase {phase!r}")
        with self._lock:
            self._phase = phase
            if phase == "ready" and self._ready_after is None:
                self._ready_after = time.monotonic() - self._began

    def ready(self) -> None:
        self.enter("ready")

    def health(self) -> dict[str, Any]:
        """``ready``, the phase (``download``/``prepare`` while that work runs), a message
        the page shows as is, the long work running with its numbers, and the seconds."""
        with self._lock:
            phase, ready_after = self._phase, self._ready_after
        work = [item.as_dict() for item in running()]
        ready = phase == "ready"
        shown = phase
        if work and not ready:  # the newest is the most specific: a step of a prepare
            shown = _WORK_PHASE.get(str(work[-1]["kind"]), phase)
        doing = _WORK_WORDS.get(shown, PHASES[phase])
        text = "; ".join(str(item["text"]) for item in work)
        message = text if work and not ready else doing
        if work and ready:
            message = f"Ready; in the background: {text}"
        return {"status": "ready" if ready else "starting", "ready": ready, "phase": shown,
                "doing": doing, "message": message, "work": work,
                "seconds": round(time.monotonic() - self._began, 1),
                "model_notes": list(self.model_notes),
                "ready_after_s": None if ready_after is None else round(ready_after, 1)}
