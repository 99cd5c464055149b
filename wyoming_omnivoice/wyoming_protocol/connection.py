"""One client connection, hardened against clients that misbehave or vanish.

:class:`Connection` replaces ``wyoming.server.AsyncEventHandler.run`` (which trusts frame
sizes and waits forever on half a frame) and its ``write_event``:

- accept or refuse: beyond ``max_connections`` open connections a new one gets a
  ``too-many-connections`` error and is closed, the others are untouched;
- read: bounded frames with a per-frame timeout and an idle timeout (:mod:`.wire`); an
  unusable frame goes to :meth:`Connection.on_wire_error` (the connection is closed when
  the frame boundaries are lost);
- write: every event with a drain timeout (``write_timeout``): a client that accepts no data
  for that long is dropped at once, its unsent output discarded;
- a bounded send buffer: asyncio's transport buffer (drain waits above it) and the kernel
  send buffer (fixed, so it cannot autotune to megabytes per stuck client).

Subclasses implement ``handle_event`` (what the events mean), ``busy`` (whether work is in
progress, which suspends the idle timeout) and ``disconnect`` (drop pending work).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from dataclasses import dataclass

from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.server import AsyncEventHandler

from wyoming_omnivoice.wyoming_protocol.errors import TOO_MANY_CONNECTIONS
from wyoming_omnivoice.wyoming_protocol.wire import (
    DEFAULT_FRAME_TIMEOUT_S,
    IdleTimeout,
    WireError,
    read_frame,
)

_LOGGER = logging.getLogger(__name__)

#: Output buffered per connection: 256 KiB is over 5 s of 24 kHz 16-bit audio, plenty for
#: any network a TTS server sees.
TRANSPORT_HIGH_WATER = 64 * 1024
KERNEL_SEND_BUFFER = 256 * 1024


@dataclass(frozen=True)
class ConnectionLimits:
    """Per-connection limits (command-line flags)."""

    #: A started frame must arrive completely within this many seconds (--read-timeout).
    read_timeout: float = DEFAULT_FRAME_TIMEOUT_S
    #: A client that accepts no output for this many seconds is dropped (--write-timeout).
    write_timeout: float = 30.0
    #: A connection with nothing in progress that sends nothing for this many seconds is
    #: closed (--idle-timeout; 0: never).
    idle_timeout: float = 300.0
    #: Most connections open at once (--max-connections); more are refused with an error.
    max_connections: int = 64


class Connection(AsyncEventHandler):
    """A client connection: bounded reads, timed writes, refuse, drop and close."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 limits: ConnectionLimits, registry: set[Connection]) -> None:
        super().__init__(reader, writer)
        self.limits = limits
        self._registry = registry
        #: No more work is started for this connection (closing, dropped or refused).
        self.closed = False
        self._dropped = False
        _bound_send_buffer(writer)

    # ---- hooks for subclasses --------------------------------------------------------

    def busy(self) -> bool:
        """Whether work is in progress (the idle timeout waits while it is)."""
        return False

    async def on_wire_error(self, err: WireError) -> None:
        """A frame that cannot be used. Here: log it; when fatal, say why before closing."""
        _LOGGER.warning("Bad frame from a client (%s)%s: %s", err.code,
                        "; closing that connection" if err.fatal else "", err)
        if err.fatal:
            # The frame boundaries are lost: say why, then close this connection only.
            with contextlib.suppress(ConnectionError, OSError):
                await self.write_event(Error(text=str(err), code=err.code).event())

    # ---- reading ---------------------------------------------------------------------

    async def run(self) -> None:
        """Read bounded frames until EOF, a fatal wire error or ``handle_event`` says stop."""
        self._is_running = True
        if len(self._registry) >= self.limits.max_connections:
            await self._refuse_connection()
            return
        self._registry.add(self)
        try:
            while self._is_running and not self.closed:
                try:
                    event = await read_frame(self.reader,
                                             frame_timeout=self.limits.read_timeout,
                                             idle_timeout=self.limits.idle_timeout,
                                             busy=self.busy)
                except IdleTimeout as err:
                    _LOGGER.debug("Closing an idle connection: %s", err)
                    break
                except WireError as err:
                    await self.on_wire_error(err)
                    if err.fatal:
                        break
                    continue
                except (ConnectionError, OSError) as err:
                    _LOGGER.debug("Connection error while reading: %s", err)
                    break
                if event is None:
                    break
                if not await self.handle_event(event):
                    break
        finally:
            self._registry.discard(self)
            await self.disconnect()
            await self._close_writer()

    async def _refuse_connection(self) -> None:
        """Over --max-connections: say so and close, without touching the others."""
        _LOGGER.warning("Refusing a connection: %d already open (--max-connections)",
                        self.limits.max_connections)
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await self.write_event(Error(
                text=f"Too many connections (the server allows "
                     f"{self.limits.max_connections}); try again shortly",
                code=TOO_MANY_CONNECTIONS).event())
        self.closed = True
        await self._close_writer()

    # ---- writing and closing ---------------------------------------------------------

    async def write_event(self, event: Event) -> None:
        """Write with a drain timeout: a client that stops reading is dropped."""
        if self._dropped or self.writer.is_closing():
            raise ConnectionResetError("connection closed")
        timeout = self.limits.write_timeout if self.limits.write_timeout > 0 else None
        try:
            await asyncio.wait_for(async_write_event(event, self.writer), timeout)
        except TimeoutError:
            _LOGGER.warning("Client accepted no data for %g s (--write-timeout); dropping it",
                            self.limits.write_timeout)
            self.drop()
            raise ConnectionResetError("client is not reading") from None

    def drop(self) -> None:
        """Close at once, discarding unsent output (a stuck client never drains it)."""
        self._dropped = True
        self.closed = True
        self._is_running = False
        self.writer.transport.abort()

    async def _close_writer(self) -> None:
        if self._dropped:
            return
        self.writer.close()
        timeout = self.limits.write_timeout if self.limits.write_timeout > 0 else None
        try:
            await asyncio.wait_for(self.writer.wait_closed(), timeout)
        except (TimeoutError, ConnectionError, OSError):
            self.writer.transport.abort()


def _bound_send_buffer(writer: asyncio.StreamWriter) -> None:
    """Cap what one connection can have queued: asyncio's buffer and the kernel's."""
    transport = writer.transport
    with contextlib.suppress(AttributeError, NotImplementedError, RuntimeError):
        transport.set_write_buffer_limits(high=TRANSPORT_HIGH_WATER)
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, KERNEL_SEND_BUFFER)
