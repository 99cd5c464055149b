"""The web server: an aiohttp application in the Wyoming server's own event loop.

:func:`create_app` builds the application (routes, the gatekeeping middlewares of
:mod:`.security`, the static assets shipped in ``wyoming_omnivoice/web/static/``);
:func:`start_web` binds it to ``--web-uri`` and returns the runner to clean up at the end.
Without a studio (``studio=None``: the server is still starting, :mod:`.health`) it serves
the page, its assets and ``/health``, and answers every studio call ``503 starting``; that
first one runs in the start-up shell's thread and is replaced by the one in the server's
loop once the server is ready.
"""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from aiohttp import web

from wyoming_omnivoice.web.health import HEALTH_KEY, Ready, StartupState, get_health
from wyoming_omnivoice.web.options import WebOptions
from wyoming_omnivoice.web.routes import PAGE_KEY, STUDIO_KEY, add_routes
from wyoming_omnivoice.web.security import (
    OPTIONS_KEY,
    gate,
    json_errors,
    login,
    security_headers,
)
from wyoming_omnivoice.web.studio import Studio

_LOGGER = logging.getLogger(__name__)


def static_dir() -> Path:
    return Path(str(resources.files("wyoming_omnivoice.web").joinpath("static")))


def create_app(options: WebOptions, studio: Studio | None,
               health: StartupState | None = None) -> web.Application:
    app = web.Application(middlewares=[security_headers, json_errors, gate],
                          client_max_size=options.limits.max_body_bytes)
    app[OPTIONS_KEY] = options
    if studio is not None:
        app[STUDIO_KEY] = studio
    app[HEALTH_KEY] = health if health is not None else Ready()
    app.router.add_get("/health", get_health)
    app[PAGE_KEY] = (static_dir() / "index.html").read_text(encoding="utf-8")
    add_routes(app)
    app.router.add_post("/api/login", login)
    app.router.add_static("/static/", static_dir(), follow_symlinks=False)
    return app


async def start_web(options: WebOptions, studio: Studio | None,
                    health: StartupState | None = None) -> web.AppRunner:
    """Listen on ``--web-uri``; OSError when the address cannot be bound."""
    runner = web.AppRunner(create_app(options, studio, health), access_log=None,
                           handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, options.host, options.port, reuse_address=True)
    await site.start()
    if studio is None:
        _LOGGER.info("Start-up page and /health on %s while the server starts", options.url)
        return runner
    if options.ingress:
        where = f"behind Home Assistant ingress (only {options.ingress_proxy} is accepted)"
    elif options.loopback:
        where = "on loopback only"
    else:
        where = "BEYOND LOOPBACK: every request needs the --web-token"
    _LOGGER.info("Voice studio and HTTP API on %s, %s", options.url, where)
    return runner
