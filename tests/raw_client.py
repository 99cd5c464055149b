"""A raw TCP client of a Wyoming server: arbitrary bytes sent, Wyoming events read back, and
well-formed frames built by hand (the hostile-client tests). :class:`Raw` runs on an event
loop; :class:`BlockingRaw` on a plain socket, so that one connection can serve every
example of a property test (each example is a call of its own)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket

from conftest import READ_TIMEOUT_S, ServerProcess
from wyoming.event import Event, async_read_event


class Raw:
    """A raw TCP connection: send arbitrary bytes, read Wyoming events back."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, server: ServerProcess) -> Raw:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port,
                                                       limit=8 * 1024 * 1024)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send_event(self, event_type: str, data: dict | None = None,
                         payload: bytes | None = None) -> None:
        await self.send(frame(event_type, data, payload))

    async def read(self) -> Event | None:
        """The next event, or None when the server closed the connection."""
        try:
            return await asyncio.wait_for(async_read_event(self.reader), READ_TIMEOUT_S)
        except (ConnectionError, OSError):
            return None

    async def read_until(self, end: set[str]) -> list[Event]:
        events: list[Event] = []
        while True:
            event = await self.read()
            assert event is not None, f"connection closed after {[e.type for e in events]}"
            events.append(event)
            if event.type in end:
                return events

    async def read_to_close(self) -> list[Event]:
        """Every event until the server closes the connection."""
        events: list[Event] = []
        while True:
            event = await self.read()
            if event is None:
                return events
            events.append(event)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


def frame(event_type: str, data: dict | None = None, payload: bytes | None = None) -> bytes:
    """A well-formed Wyoming frame (data as a separate block, like the wyoming library)."""
    header: dict = {"type": event_type}
    blob = json.dumps(data).encode() if data else b""
    if blob:
        header["data_length"] = len(blob)
    if payload:
        header["payload_length"] = len(payload)
    return json.dumps(header).encode() + b"\n" + blob + (payload or b"")


class BlockingRaw:
    """A raw TCP connection on a blocking socket: send bytes, read Wyoming events back."""

    def __init__(self, server: ServerProcess) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.port),
                                             timeout=READ_TIMEOUT_S)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self) -> Event | None:
        """The next event, or None when the server closed the connection."""
        line = self.file.readline()
        if not line:
            return None
        header = json.loads(line)
        data = dict(header.get("data") or {})
        if header.get("data_length"):
            data.update(json.loads(self.file.read(header["data_length"])))
        payload = self.file.read(header["payload_length"]) \
            if header.get("payload_length") else None
        return Event(type=header["type"], data=data, payload=payload)

    def read_until(self, end: set[str]) -> list[Event]:
        events: list[Event] = []
        while True:
            event = self.read()
            assert event is not None, f"connection closed after {[e.type for e in events]}"
            events.append(event)
            if event.type in end:
                return events

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()
