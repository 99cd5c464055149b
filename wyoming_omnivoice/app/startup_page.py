"""The web server of the start: the studio page and ``/health`` while the server starts.

A first start downloads 2.2 GB, prepares the backbone and makes anchors: minutes. With
``--web-uri`` the page is there from the first second: this serves it (without a studio:
:mod:`wyoming_omnivoice.web.health`) on a thread with its own event loop, reading
:class:`.startup_status.StartupStatus`, while the start-up runs on the main thread. Once
the server is ready, :mod:`.serve` stops it and starts the web server with the studio in
the server's own loop on the same address (the page polls ``/health`` and, after a moment
without an answer, finds the studio there).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from wyoming_omnivoice.errors import StartupError

if TYPE_CHECKING:
    from aiohttp import web

    from wyoming_omnivoice.web.health import StartupState
    from wyoming_omnivoice.web.options import WebOptions

_LOGGER = logging.getLogger("wyoming_omnivoice")

#: Seconds the page server may take to bind, and to close.
_BIND_S = 30.0
_CLOSE_S = 5.0


class StartupPage:
    """Serves the page without the studio, on its own thread, until :meth:`stop`."""

    def __init__(self, options: WebOptions, status: StartupState) -> None:
        self._options = options
        self._status = status
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._bound = threading.Event()
        self._error: BaseException | None = None

    def start(self) -> None:
        """Listen on ``--web-uri`` now; StartupError when the address cannot be bound."""
        self._thread = threading.Thread(target=self._run, name="startup-page", daemon=True)
        self._thread.start()
        if not self._bound.wait(_BIND_S):
            raise StartupError("--web-uri: the start-up page did not start")
        if self._error is not None:
            self._thread.join(_CLOSE_S)
            raise StartupError(f"--web-uri: cannot listen there ({self._error}); pick a free "
                               "port") from None

    def _run(self) -> None:
        from wyoming_omnivoice.web.app import start_web

        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            self._runner = loop.run_until_complete(start_web(self._options, None,
                                                             self._status))
        except OSError as err:
            self._error = err
            self._bound.set()
            loop.close()
            return
        self._bound.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    def stop(self) -> None:
        """Close the page server (the server's own web server takes the address next)."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(_CLOSE_S)
        if thread.is_alive():
            _LOGGER.warning("The start-up page's web server did not stop in %g s", _CLOSE_S)
