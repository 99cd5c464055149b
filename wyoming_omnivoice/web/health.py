"""``GET /health``, and the answer of the studio's API while the server is still starting.

The web server starts before the model is downloaded and loaded, so the page can say what
the first start is doing. Until the studio is attached, every studio call is answered
``503 starting`` with what the server is doing; ``/health`` answers ``503`` with the same
JSON until the server is ready, then ``200``. What it reports comes from the start-up
shell through :class:`StartupState` (the web knows nothing of how a start goes).
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from wyoming_omnivoice.web.errors import ApiError


class StartupState(Protocol):
    """The start-up shell's status: ``health()`` is a JSON object with at least ``ready``
    (bool) and ``message`` (what the server is doing, in words)."""

    def health(self) -> dict[str, Any]: ...


class Ready:
    """The state of a web server whose studio is there from the start (tests, tools)."""

    def health(self) -> dict[str, Any]:
        return {"status": "ready", "ready": True, "phase": "ready", "message": "Ready",
                "work": []}


HEALTH_KEY: web.AppKey[StartupState] = web.AppKey("health", StartupState)


async def get_health(request: web.Request) -> web.Response:
    """``200`` once ready, ``503`` before; the JSON says what the server is doing."""
    state = request.app[HEALTH_KEY].health()
    return web.json_response(state, status=200 if state.get("ready") else 503)


def starting(request: web.Request) -> ApiError:
    """The studio is not there yet: what the server is doing instead."""
    message = str(request.app[HEALTH_KEY].health().get("message", "starting"))
    return ApiError(503, "starting", f"The server is starting ({message}). The studio opens "
                    "as soon as it is ready.")
