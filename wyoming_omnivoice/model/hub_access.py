"""Talking to the Hugging Face hub quietly: a quick reachability probe and deduplicated logs.

Without a network, huggingface_hub retries each request five times with back-off (about
24 s) and logs every attempt twice: through its own stream handler and, with the prefix,
through the root logger. Before a download the server therefore asks the hub once (two
short tries, no back-off); when the hub cannot be reached at all, the start stops in a
second or two with one message. During the download, :func:`quiet_hub_logs` routes the
hub's log records through one handler that prints each distinct problem once.
"""

from __future__ import annotations

import logging
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

_LOGGER = logging.getLogger("wyoming_omnivoice.model.download")

PROBE_TIMEOUT_S = 5.0
PROBE_TRIES = 2
HUB_LOGGER = "huggingface_hub"
_DIGITS = re.compile(r"\d+")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a redirect answer already proves the hub is reachable


def unreachable_reason(endpoint: str, repo: str, revision: str, path: str) -> str | None:
    """None when the hub answers (any HTTP status), else why it cannot be reached."""
    url = f"{endpoint.rstrip('/')}/{repo}/resolve/{revision}/{quote(path)}"
    opener = urllib.request.build_opener(_NoRedirect)
    reason = ""
    for attempt in range(PROBE_TRIES):
        if attempt:
            time.sleep(1.0)
        try:
            with opener.open(urllib.request.Request(url, method="HEAD"),
                             timeout=PROBE_TIMEOUT_S):
                return None
        except urllib.error.HTTPError:
            return None  # the hub answered; huggingface_hub reports what the status means
        except OSError as err:  # URLError, timeouts, refused connections
            cause = getattr(err, "reason", err)
            reason = str(getattr(cause, "strerror", None) or cause)
    return f"cannot reach {endpoint} ({reason}; tried {PROBE_TRIES} times)"


class _OncePerProblem(logging.Handler):
    """Forwards each distinct hub message once (numbers ignored: "Retrying in 2s" = "4s")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        key = _DIGITS.sub("#", message)
        if key in self.seen:
            return
        self.seen.add(key)
        _LOGGER.log(record.levelno, "huggingface_hub: %s", message)


@contextmanager
def quiet_hub_logs() -> Iterator[None]:
    """Inside: the hub's warnings are printed once each, without the duplicate handler."""
    hub = logging.getLogger(HUB_LOGGER)
    saved = (list(hub.handlers), hub.propagate)
    once = _OncePerProblem()
    hub.handlers = [once]
    hub.propagate = False
    try:
        yield
    finally:
        hub.handlers, hub.propagate = saved
