"""The web server's gatekeepers, as aiohttp middlewares (outermost first).

1. :func:`json_errors`: every refusal and failure becomes a JSON error (``errors.py``);
   aiohttp's own (404, 405, 413 body too large) included, the last naming its limit.
2. :func:`gate`: who may ask.
   - Ingress (``--web-ingress``): only the ingress proxy's address; its ``X-Ingress-Path``
     (checked to be a plain path) becomes the page's base path.
   - Loopback without a token: the ``Host`` header must be a loopback name, so a page
     elsewhere cannot reach the studio through DNS rebinding.
   - With ``--web-token``: every API request carries ``Authorization: Bearer TOKEN`` or
     the session cookie set by ``POST /api/login`` (the page and its assets are public; they
     hold no data).
   - State-changing requests (not GET/HEAD/OPTIONS) that come with an ``Origin`` must come
     from the studio's own origin (behind a proxy, the one it forwards as
     ``X-Forwarded-Proto``/``X-Forwarded-Host``): a page on the LAN cannot post to it.
     Requests without ``Origin`` are not from a browser page (curl, OpenAI clients).
3. Security headers on every answer: no sniffing, no referrer, a strict CSP (the page uses
   only its own assets), framing only by its own origin (the Home Assistant sidebar).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from wyoming_omnivoice.web.errors import ApiError, error_response
from wyoming_omnivoice.web.options import WebOptions, is_loopback

_LOGGER = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

SESSION_COOKIE = "omnivoice_session"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Paths served without a token: the page shell, its assets, the login and ``/health``.
PUBLIC_PATHS = frozenset({"/", "/index.html", "/api/login", "/health"})
_INGRESS_PATH_RE = re.compile(r"^(/[A-Za-z0-9._~-]+)*$")
OPTIONS_KEY: web.AppKey[WebOptions] = web.AppKey("web_options", WebOptions)
BASE_PATH = "base_path"

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "media-src 'self' blob:; connect-src 'self' blob:; object-src 'none'; base-uri 'self'; "
       "form-action 'self'; frame-ancestors 'self'")


def session_value(token: str) -> str:
    """The cookie value for a token: a keyed hash, so the cookie is not the token itself."""
    return hmac.new(token.encode(), b"wyoming-omnivoice studio session",
                    hashlib.sha256).hexdigest()


def token_matches(request: web.Request, token: str) -> bool:
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer ") and hmac.compare_digest(
            header[len("Bearer "):].strip().encode(), token.encode()):
        return True
    cookie = request.cookies.get(SESSION_COOKIE, "")
    return bool(cookie) and hmac.compare_digest(cookie.encode(), session_value(token).encode())


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        if err.status in (401, 403):
            _LOGGER.debug("Web request %s %s from %s refused (%s)", request.method,
                          request.path, request.remote, err.code)
        return error_response(err.status, err.code, err.message)
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[OPTIONS_KEY].limits.max_body_bytes
        return error_response(413, "body_too_large", f"The request body is over the limit of "
                              f"{limit} bytes (request body limit)")
    except web.HTTPException as err:
        if err.status < 400:
            raise
        code = {404: "not_found", 405: "method_not_allowed"}.get(err.status, "http_error")
        return error_response(err.status, code, err.reason)
    except Exception:
        _LOGGER.exception("Web request %s %s failed", request.method, request.path)
        return error_response(500, "internal_error", "Internal error; see the server log")


def _own_origin(request: web.Request, options: WebOptions) -> str:
    if options.ingress:
        host = request.headers.get("X-Forwarded-Host")
        proto = request.headers.get("X-Forwarded-Proto", "http")
        if host:
            return f"{proto}://{host}".lower()
    return f"{request.scheme}://{request.host}".lower()


def _check_origin(request: web.Request, options: WebOptions) -> None:
    if request.method in SAFE_METHODS:
        return
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        raise ApiError(403, "cross_site", "Cross-site requests are refused")
    origin = request.headers.get("Origin")
    if origin is None:
        return
    if origin.lower().rstrip("/") != _own_origin(request, options):
        raise ApiError(403, "bad_origin", f"Requests from {origin[:100]} are refused; use the "
                       "studio page itself")


def _host_name(host: str) -> str:
    return (urlsplit(f"//{host}").hostname or "").lower()


@web.middleware
async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
    options = request.app[OPTIONS_KEY]
    request[BASE_PATH] = ""
    if options.ingress:
        if request.remote != options.ingress_proxy:
            raise ApiError(403, "not_ingress", "Only Home Assistant's ingress proxy may use "
                           "this port; open the studio from the Home Assistant sidebar")
        base = request.headers.get("X-Ingress-Path", "").rstrip("/")
        if not _INGRESS_PATH_RE.match(base):
            raise ApiError(400, "bad_ingress_path", "X-Ingress-Path is not a plain path")
        request[BASE_PATH] = base
    elif options.token is None and not is_loopback(_host_name(request.host)):
        raise ApiError(403, "host_not_allowed", "This studio answers only to localhost "
                       "names; open it as http://127.0.0.1:PORT/ or start it with --web-token")
    if (options.token is not None and not options.ingress
            and request.path not in PUBLIC_PATHS and not request.path.startswith("/static/")
            and not token_matches(request, options.token)):
        raise ApiError(401, "unauthorized", "Log in with the studio token (--web-token), or "
                       "send Authorization: Bearer TOKEN")
    _check_origin(request, options)
    return await handler(request)


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("Cache-Control", "no-store")
    return response


async def login(request: web.Request) -> web.Response:
    """``POST /api/login {"token": ...}``: sets the session cookie when the token is right."""
    options = request.app[OPTIONS_KEY]
    if options.token is None:
        return web.json_response({"ok": True, "token_required": False})
    try:
        body = await request.json()
    except ValueError:
        raise ApiError(400, "bad_json", "The body must be JSON: {\"token\": \"...\"}") from None
    token = body.get("token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not hmac.compare_digest(token.encode(),
                                                             options.token.encode()):
        raise ApiError(401, "unauthorized", "That is not the studio token")
    response = web.json_response({"ok": True, "token_required": True})
    response.set_cookie(SESSION_COOKIE, session_value(options.token), httponly=True,
                        samesite="Strict", path="/")
    return response
