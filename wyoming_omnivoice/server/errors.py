"""The errors the server reports: at start-up (the process stops) and per request (an event).

Every ``error`` event the server sends carries one of the codes below; README's protocol
section lists them. A request that fails still ends properly: a one-shot request with
``audio-stop``, a stream with ``synthesize-stopped`` (see :mod:`.handler`).
"""

from __future__ import annotations

import logging

from wyoming.error import Error
from wyoming.event import Event

from wyoming_omnivoice.speech.worker import BusyError, WorkerStoppedError

_LOGGER = logging.getLogger(__name__)

#: Error codes of request-level ``error`` events (the connection stays usable).
TEXT_TOO_LONG = "text-too-long"
BUSY = "busy"
INVALID_REQUEST = "invalid-request"
INVALID_EVENT = "invalid-event"
UNSUPPORTED_TEXT_FORMAT = "unsupported-text-format"
SYNTHESIS_FAILED = "synthesis-failed"
WORKER_STOPPED = "worker-stopped"
SHUTTING_DOWN = "shutting-down"
INTERNAL_ERROR = "internal-error"
#: Connection-level codes (see :mod:`.connection` and :mod:`.wire`).
TOO_MANY_CONNECTIONS = "too-many-connections"


def one_line(message: str) -> str:
    """A multi-line message as one log line (lines joined, indentation dropped)."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


class StartupError(Exception):
    """A bad flag, file or model: the message is shown as is and the process exits 2."""


class RequestError(Exception):
    """A request-level failure with a Wyoming error code."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code

    def event(self) -> Event:
        """The ``error`` event for this failure (logged once, at info level)."""
        _LOGGER.info("Request error (%s): %s", self.code, self)
        return Error(text=str(self) or self.code, code=self.code).event()


def request_error_for(err: BaseException) -> RequestError:
    """The request error to report for an exception from the worker or the engine."""
    if isinstance(err, RequestError):
        return err
    if isinstance(err, BusyError):
        return RequestError(f"Server busy: {err}; try again shortly", BUSY)
    if isinstance(err, WorkerStoppedError):
        return RequestError(f"Synthesis unavailable: {err}", WORKER_STOPPED)
    if isinstance(err, ValueError):
        return RequestError(str(err) or "invalid request", INVALID_REQUEST)
    return RequestError(f"Synthesis failed: {type(err).__name__}: {err}", SYNTHESIS_FAILED)
