"""Why a request is not served: an error code and a message for a person.

The codes are the protocol's (docs/home-assistant.md lists them): the Wyoming handler
sends them in ``error`` events, the HTTP API in its JSON errors. A request that fails still
ends properly (see :mod:`wyoming_omnivoice.wyoming_protocol.handler`).
"""

from __future__ import annotations

from wyoming_omnivoice.speech.worker import BusyError, WorkerStoppedError
from wyoming_omnivoice.text.characters import TextRefused, check_characters

#: Error codes of request-level errors (the connection stays usable).
TEXT_TOO_LONG = "text-too-long"
TEXT_INVALID = "text-invalid"
BUSY = "busy"
INVALID_REQUEST = "invalid-request"
INVALID_EVENT = "invalid-event"
UNSUPPORTED_TEXT_FORMAT = "unsupported-text-format"
SYNTHESIS_FAILED = "synthesis-failed"
WORKER_STOPPED = "worker-stopped"
SHUTTING_DOWN = "shutting-down"
INTERNAL_ERROR = "internal-error"


class RequestError(Exception):
    """A request-level failure with an error code."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code


def check_text_length(length: int, limit: int, *, streamed: bool = False) -> None:
    """``text-too-long`` past ``limit`` characters (a stream's: counted over the stream)."""
    if length <= limit:
        return
    if streamed:
        raise RequestError(f"Streamed text exceeds {limit} characters "
                           "(--max-text-length)", TEXT_TOO_LONG)
    raise RequestError(f"Text is {length} characters long; the limit is {limit} "
                       "(--max-text-length)", TEXT_TOO_LONG)


def text_invalid(err: TextRefused) -> RequestError:
    """``text-invalid``: the text holds a character that cannot be spoken (which, where)."""
    return RequestError(str(err), TEXT_INVALID)


def checked_text(text: str) -> str:
    """A request's whole text as the server takes it (:mod:`.text.characters`: surrogate
    pairs joined, controls and noncharacters replaced by spaces), or ``text-invalid``."""
    try:
        return check_characters(text)
    except TextRefused as err:
        raise text_invalid(err) from None


def request_error_for(err: BaseException) -> RequestError:
    """The request error to report for an exception from the worker or the engine."""
    if isinstance(err, RequestError):
        return err
    if isinstance(err, TextRefused):
        return text_invalid(err)
    if isinstance(err, BusyError):
        return RequestError(f"Server busy: {err}; try again shortly", BUSY)
    if isinstance(err, WorkerStoppedError):
        return RequestError(f"Synthesis unavailable: {err}", WORKER_STOPPED)
    if isinstance(err, ValueError):
        return RequestError(str(err) or "invalid request", INVALID_REQUEST)
    return RequestError(f"Synthesis failed: {type(err).__name__}: {err}", SYNTHESIS_FAILED)
