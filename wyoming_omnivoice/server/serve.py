"""Serving: the Wyoming server on ``--uri``, signals, a bounded drain, zeroconf.

On SIGTERM/SIGINT the server stops listening, refuses new requests (``shutting-down``),
lets requests in progress finish for up to ``--shutdown-timeout`` seconds, then closes the
connections. A second signal stops without waiting. If the inference worker dies, the
server stops with exit code 1 (the container restarts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from wyoming.server import AsyncServer, AsyncStdioServer

from wyoming_omnivoice.server.context import WyomingContext
from wyoming_omnivoice.server.errors import StartupError
from wyoming_omnivoice.server.handler import OmniVoiceEventHandler
from wyoming_omnivoice.server.listen_address import listen_error_message

if TYPE_CHECKING:
    from wyoming_omnivoice.server.config import Config

_LOGGER = logging.getLogger("wyoming_omnivoice")

WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


def zeroconf_host(host: str | None) -> str | None:
    """The address to announce: None (auto-detect the LAN IP) for wildcard binds."""
    if host is None or host in WILDCARD_HOSTS:
        return None
    return host


def stop_listening(server: AsyncServer) -> None:
    """Close the listening socket; connections already open carry on.

    wyoming's servers offer no public way to stop accepting without stopping every handler,
    so this is the one place that uses their private ``_server`` (an ``asyncio.Server``;
    absent for stdio). If a wyoming release renames it, listening simply goes on until
    ``server.stop()``, and new requests are still refused while draining.
    """
    listener = getattr(server, "_server", None)
    if isinstance(listener, asyncio.AbstractServer):
        listener.close()


async def serve(config: Config, context: WyomingContext) -> int:
    """Serve until a signal (exit 0) or the worker's death (exit 1)."""
    server = AsyncServer.from_uri(config.uri)
    factory = partial(OmniVoiceEventHandler, context=context)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    drained = asyncio.Event()
    exit_code = 0

    def on_worker_death(_err: BaseException) -> None:
        nonlocal exit_code
        exit_code = 1
        loop.call_soon_threadsafe(stop.set)

    context.service.worker.on_death = on_worker_death

    if isinstance(server, AsyncStdioServer):
        _LOGGER.info("Ready (stdio)")
        await server.run(factory)
        return exit_code

    try:
        await server.start(factory)
    except OSError as err:  # taken since the check before the model loaded
        raise StartupError(listen_error_message(config.uri, err)) from None
    if config.zeroconf is not None:
        await _start_zeroconf(config)
    signals = 0

    def on_signal(signum: int) -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            _LOGGER.warning("Second %s: stopping without waiting",
                            signal.Signals(signum).name)
            context.service.draining = True
            drained.set()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    _LOGGER.info("Ready: listening on %s with %d voice(s), default %r, %s", config.uri,
                 len(context.service.catalog), context.service.settings.default_voice,
                 "streaming" if context.settings.streaming else "no streaming")
    await stop.wait()
    _LOGGER.info("Stopping")
    await drain(server, context, config.shutdown_timeout, drained)
    await server.stop()
    await _wait_closed(context, 2.0)
    return exit_code


async def _wait_closed(context: WyomingContext, timeout: float) -> None:
    """Give closing connections a moment to flush what was already written to them."""
    async def closed() -> None:
        while context.connections:
            await asyncio.sleep(0.02)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(closed(), timeout)


async def drain(server: AsyncServer, context: WyomingContext, timeout: float,
                abort: asyncio.Event | None = None) -> None:
    """Stop listening, refuse new requests, wait (bounded) for requests in progress."""
    stop_listening(server)
    context.service.draining = True
    service = context.service
    if service.active == 0:
        return
    _LOGGER.info("Waiting up to %g s for %d request(s) in progress", timeout,
                 service.active)

    async def finished() -> None:
        while service.active > 0 and not (abort is not None and abort.is_set()):
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(finished(), timeout)
    except TimeoutError:
        _LOGGER.warning("%d request(s) still in progress after %g s; closing them",
                        service.active, timeout)


async def _start_zeroconf(config: Config) -> None:
    try:
        from wyoming.zeroconf import HomeAssistantZeroconf
    except ImportError:
        raise StartupError(
            "--zeroconf needs the zeroconf package: pip install 'wyoming-omnivoice[zeroconf]'"
        ) from None
    uri = urlparse(config.uri)
    if uri.port is None or config.zeroconf is None:  # validate() makes both sure
        raise StartupError("--zeroconf needs a tcp://HOST:PORT URI")
    announcer = HomeAssistantZeroconf(port=uri.port, name=config.zeroconf,
                                      host=zeroconf_host(uri.hostname))
    await announcer.register_server()
    _LOGGER.info("Announced over zeroconf as %r at %s:%s", config.zeroconf, announcer.host,
                 uri.port)
