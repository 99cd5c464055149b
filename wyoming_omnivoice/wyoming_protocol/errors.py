"""Errors on the Wyoming side: request errors as ``error`` events, connection-level codes.

Every ``error`` event the server sends carries one of the codes of
:mod:`wyoming_omnivoice.speech.errors`; docs/home-assistant.md lists them. A request that
fails still ends properly: a one-shot request with ``audio-stop``, a stream with
``synthesize-stopped`` (see :mod:`.handler`).
"""

from __future__ import annotations

import logging

from wyoming.error import Error
from wyoming.event import Event

from wyoming_omnivoice.errors import StartupError, one_line
from wyoming_omnivoice.speech import (
    BUSY,
    INTERNAL_ERROR,
    INVALID_EVENT,
    INVALID_REQUEST,
    SHUTTING_DOWN,
    SYNTHESIS_FAILED,
    TEXT_TOO_LONG,
    UNSUPPORTED_TEXT_FORMAT,
    WORKER_STOPPED,
    RequestError,
    request_error_for,
)

__all__ = [
    "BUSY", "INTERNAL_ERROR", "INVALID_EVENT", "INVALID_REQUEST", "SHUTTING_DOWN",
    "SYNTHESIS_FAILED", "TEXT_TOO_LONG", "TOO_MANY_CONNECTIONS", "UNSUPPORTED_TEXT_FORMAT",
    "WORKER_STOPPED", "RequestError", "StartupError", "error_event", "one_line",
    "request_error_for",
]

_LOGGER = logging.getLogger(__name__)

#: Connection-level codes (see :mod:`.connection` and :mod:`.wire`).
TOO_MANY_CONNECTIONS = "too-many-connections"


def error_event(err: RequestError) -> Event:
    """The ``error`` event for this failure (logged once, at info level). A message may
    quote what a client sent (an event type, a field): a character that cannot be written
    as UTF-8 (a lone surrogate) is written as its escape, so the event can be sent."""
    _LOGGER.info("Request error (%s): %s", err.code, err)
    text = (str(err) or err.code).encode("utf-8", "backslashreplace").decode("utf-8")
    return Error(text=text, code=err.code).event()
