"""Serving: the Wyoming server on ``--uri``, signals, a bounded drain, zeroconf.

On SIGTERM/SIGINT the server stops listening, refuses new requests (``shutting-down``),
lets requests in progress finish for up to ``--shutdown-timeout`` seconds (by default what
a long reply takes on the device: :data:`.flags.SHUTDOWN_TIMEOUT_S`), then ends every request
still in progress with a ``shutting-down`` error and its end event and closes the
connections. A second signal stops without waiting (the requests are still ended so). If
the inference worker dies, the server stops with exit code 1 (the container restarts it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from wyoming.server import AsyncServer, AsyncStdioServer

from wyoming_omnivoice.app.listen_address import listen_error_message
from wyoming_omnivoice.wyoming_protocol.context import WyomingContext
from wyoming_omnivoice.wyoming_protocol.errors import SHUTTING_DOWN, RequestError, StartupError
from wyoming_omnivoice.wyoming_protocol.handler import OmniVoiceEventHandler

if TYPE_CHECKING:
    from wyoming_omnivoice.app.config import Config

_LOGGER = logging.getLogger("wyoming_omnivoice")

WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")

#: Starts a side service in this loop (the web server); returns its stop.
SideService = Callable[[], Awaitable[Callable[[], Awaitable[None]]]]


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


async def serve(config: Config, context: WyomingContext,
                side: SideService | None = None,
                on_ready: Callable[[], None] | None = None) -> int:
    """Serve until a signal (exit 0) or the worker's death (exit 1); ``side`` (the web
    server) starts after the Wyoming server and stops after it; ``on_ready`` is called
    once it listens."""
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
    stop_side = None
    if side is not None:
        try:
            stop_side = await side()
        except OSError as err:
            await server.stop()
            raise StartupError(f"--web-uri: cannot listen there ({err}); pick a free "
                               "port") from None
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
                 len(context.service.catalog), context.service.voices.default_voice,
                 "streaming" if context.settings.streaming else "no streaming")
    if on_ready is not None:
        on_ready()
    await stop.wait()
    _LOGGER.info("Stopping")
    # Resolved for the device at start-up (cli); a Config built elsewhere: the CPU's.
    await drain(server, context, config.shutdown_timeout_on("cpu"), drained)
    await cut_off_requests(context)
    if stop_side is not None:
        await stop_side()
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
        _LOGGER.warning("%d request(s) still in progress after %g s (--shutdown-timeout); "
                        "each gets a shutting-down error and its end, then the server "
                        "closes their connections", service.active, timeout)


#: How long the cut requests' last events may take to be written.
_FLUSH_S = 2.0


async def cut_off_requests(context: WyomingContext) -> None:
    """End every request still in progress: ``error`` (``shutting-down``) and its end
    event on each connection, written before the server closes them."""
    handlers = [c for c in list(context.connections) if isinstance(c, OmniVoiceEventHandler)]
    if not handlers:
        return
    err = RequestError("The server is shutting down; this request was cut off before it "
                       "finished. Try again shortly.", SHUTTING_DOWN)
    counts = await asyncio.gather(*(h.cut_off(err, _FLUSH_S) for h in handlers),
                                  return_exceptions=True)
    cut = sum(c for c in counts if isinstance(c, int))
    if cut:
        _LOGGER.info("The server ended %d request(s) with a shutting-down error and closes "
                     "%d connection(s)", cut, len(handlers))


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
