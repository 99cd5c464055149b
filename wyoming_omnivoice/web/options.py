"""The web server's flags: ``--web-uri``, ``--web-token``, ``--web-ingress``, limits.

Off unless ``--web-uri`` is given; loopback unless told otherwise. Binding to any other
address needs ``--web-token`` (the Wyoming port has no authentication by design; this one
serves a page that writes files), except behind Home Assistant's ingress
(``--web-ingress``), where only the Supervisor's proxy may connect and Home Assistant has
already authenticated the user.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

from wyoming_omnivoice.errors import StartupError

#: Home Assistant's ingress proxy on the add-on network (the Supervisor).
INGRESS_PROXY = "172.30.32.2"
TOKEN_ENV = "WYOMING_OMNIVOICE_WEB_TOKEN"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


@dataclass(frozen=True)
class WebLimits:
    """What one request may send; each limit is named in the error that enforces it."""

    #: Any request body (JSON, form, upload), bytes.
    max_body_bytes: int = 24 * 1024 * 1024
    #: An uploaded or recorded reference file, bytes.
    max_upload_bytes: int = 16 * 1024 * 1024
    #: Longest reference recording, seconds (3-10 s is what cloning wants).
    max_upload_seconds: float = 60.0
    #: Seconds a reference may take to decode before it is refused.
    decode_timeout_s: float = 10.0
    #: Longest text spoken per request (the Wyoming --max-text-length).
    max_text_length: int = 5000
    #: Takes kept in memory (the oldest is dropped first).
    max_takes: int = 64
    #: HTTP synthesis requests at once; more wait, and beyond ``max_waiting`` get 503.
    max_synthesis: int = 2
    max_waiting: int = 16


@dataclass(frozen=True)
class WebOptions:
    host: str
    port: int
    token: str | None
    ingress: bool
    ingress_proxy: str = INGRESS_PROXY
    limits: WebLimits = WebLimits()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_web_uri(uri: str) -> tuple[str, int]:
    example = "e.g. --web-uri http://127.0.0.1:8099"
    parsed = urlparse(uri)
    if parsed.scheme != "http":
        raise StartupError(f"--web-uri {uri!r}: use http://HOST:PORT ({example}); put a "
                           "reverse proxy in front for HTTPS")
    try:
        port = parsed.port
    except ValueError:
        port = None
    if not parsed.hostname or port is None or port == 0:
        raise StartupError(f"--web-uri {uri!r}: needs a host and a port ({example})")
    if parsed.path not in ("", "/") or parsed.query:
        raise StartupError(f"--web-uri {uri!r}: give only the address ({example})")
    return parsed.hostname, port


class WebFlags(Protocol):
    """The flags the web server reads (the server's ``Config``)."""

    @property
    def web_uri(self) -> str | None: ...
    @property
    def web_token(self) -> str | None: ...
    @property
    def web_ingress(self) -> bool: ...
    @property
    def web_ingress_proxy(self) -> str: ...
    @property
    def max_text_length(self) -> int: ...


def web_options(args: WebFlags) -> WebOptions | None:
    """The checked web options, or None when the web server is off; StartupError naming
    the fix for an unsafe or malformed combination."""
    if args.web_uri is None:
        if args.web_ingress or args.web_token:
            raise StartupError("--web-token and --web-ingress need --web-uri")
        return None
    host, port = parse_web_uri(args.web_uri)
    token = args.web_token or os.environ.get(TOKEN_ENV) or None
    if token is not None and len(token) < 16:
        raise StartupError("--web-token: use at least 16 characters, e.g. "
                           f"{secrets.token_urlsafe(24)}")
    if args.web_ingress:
        try:
            ipaddress.ip_address(args.web_ingress_proxy)
        except ValueError:
            raise StartupError(f"--web-ingress-proxy {args.web_ingress_proxy!r}: give an IP "
                               "address") from None
    elif not is_loopback(host) and token is None:
        raise StartupError(f"--web-uri {args.web_uri}: listening beyond loopback needs "
                           f"--web-token (or ${TOKEN_ENV}); the studio writes voices. Use "
                           "http://127.0.0.1:PORT for this machine only, or --web-ingress "
                           "behind Home Assistant")
    return WebOptions(host=host, port=port, token=token, ingress=bool(args.web_ingress),
                      ingress_proxy=args.web_ingress_proxy,
                      limits=WebLimits(max_text_length=args.max_text_length))
