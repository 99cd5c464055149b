"""Bounded, validating reader for Wyoming frames from untrusted clients.

A Wyoming frame is a JSON header line, then ``data_length`` bytes of JSON data and
``payload_length`` bytes of payload. ``wyoming.event.async_read_event`` trusts the header:
a client can make the server wait forever on half a frame, allocate whatever
``data_length`` says, or crash the connection task with a header that is not an object.
This reader is the one the TCP/Unix handlers use instead:

- Sizes are capped. A text-to-speech server never needs a large client frame: the header
  line is capped at :data:`MAX_HEADER_BYTES`, the JSON data at :data:`MAX_DATA_BYTES`, a
  payload (no TTS event carries one) at :data:`MAX_PAYLOAD_BYTES`. Payloads within the cap
  are read and ignored.
- Once the first byte of a frame has arrived, the whole frame must arrive within
  ``frame_timeout`` seconds (a client that sends half a frame and stalls is dropped).
  Between frames, a connection that starts no frame for ``idle_timeout`` seconds while
  ``busy()`` says nothing is in progress for it ends with :class:`IdleTimeout`.
- :class:`WireError` says what was wrong. ``fatal=True`` means the frame boundaries are
  lost (unparsable header, bad lengths, over a cap, timeout): the caller answers an
  ``error`` event (``invalid-frame``, ``frame-too-large``, ``timeout``) and closes that
  connection only. ``fatal=False`` means the frame was read completely but its content is
  unusable (data not an object, invalid UTF-8 or JSON in the data, bytes that are not UTF-8
  in a header line that still reads as JSON, no event type): the caller answers an
  ``invalid-event`` error and keeps reading.

:func:`check_fields` validates the field types of the events the server acts on (``text``
must be a string, ``voice`` an object of strings, ...), so a wrong type gets an ``error``
event instead of an exception deep inside the handler.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from wyoming.event import Event

_LOGGER = logging.getLogger(__name__)

#: Longest header line accepted, newline included (also asyncio's default reader limit).
MAX_HEADER_BYTES = 64 * 1024
#: Largest JSON data block accepted (texts are limited by --max-text-length long before).
MAX_DATA_BYTES = 1024 * 1024
#: Largest payload accepted; TTS requests carry none, so a payload is read and dropped.
MAX_PAYLOAD_BYTES = 64 * 1024
#: Seconds a started frame may take to arrive completely (default of --read-timeout).
DEFAULT_FRAME_TIMEOUT_S = 30.0


class IdleTimeout(Exception):
    """The connection started no frame for ``idle_timeout`` seconds with nothing in progress."""


class WireError(Exception):
    """A frame that cannot be used; ``fatal`` when the connection must be closed."""

    def __init__(self, text: str, code: str, *, fatal: bool,
                 event_type: str | None = None) -> None:
        super().__init__(text)
        self.code = code
        self.fatal = fatal
        #: The frame's event type when it was readable (a refused ``synthesize`` still
        #: gets its ``audio-stop``).
        self.event_type = event_type


def _length(header: dict[str, Any], key: str, cap: int, what: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise WireError(f"{key} must be a whole number of bytes, not {value!r}",
                        "invalid-frame", fatal=True)
    if value < 0:
        raise WireError(f"{key} must not be negative ({value})", "invalid-frame", fatal=True)
    if value > cap:
        raise WireError(
            f"{key} {value} exceeds the limit of {cap} bytes: this text-to-speech server "
            f"only accepts {what}", "frame-too-large", fatal=True)
    return value


def _decode_json(blob: bytes, what: str, *, fatal: bool) -> Any:
    """The JSON value of ``blob``; a :class:`WireError` (``invalid-frame`` when ``fatal``,
    else ``invalid-event``: the frame was read whole) when it is not UTF-8 or not JSON."""
    code = "invalid-frame" if fatal else "invalid-event"
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as err:
        raise WireError(f"{what} is not valid UTF-8 ({err.reason} at byte {err.start})",
                        code, fatal=fatal) from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise WireError(f"{what} is not valid JSON ({err})", code, fatal=fatal) from None


def _decode_header(line: bytes) -> tuple[Any, str | None]:
    """The header line's JSON value, and what is wrong with its bytes when they are not
    UTF-8 but the line still reads as JSON (its lengths are then known: the frame is read
    whole, and only this event is refused: a character cut between two chunks that carry
    their data inside the header line). A line that reads as nothing is fatal."""
    try:
        return _decode_json(line, "header line", fatal=True), None
    except WireError as err:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as bad:
            try:
                header = json.loads(line.decode("utf-8", "surrogateescape"))
            except (json.JSONDecodeError, RecursionError):
                raise err from None
            return header, f"header line is not valid UTF-8 ({bad.reason} at byte {bad.start})"
        raise


async def _read_line(reader: asyncio.StreamReader, first: bytes) -> bytes:
    if first == b"\n":
        return first
    try:
        rest = await reader.readuntil(b"\n")
    except asyncio.LimitOverrunError:
        raise WireError(
            f"header line longer than {MAX_HEADER_BYTES} bytes: this text-to-speech server "
            "only accepts short event headers", "frame-too-large", fatal=True) from None
    except asyncio.IncompleteReadError as err:
        if len(first) + len(err.partial) > MAX_HEADER_BYTES:
            raise WireError(f"header line longer than {MAX_HEADER_BYTES} bytes",
                            "frame-too-large", fatal=True) from None
        raise EOFError("connection closed inside a header line") from None
    line = first + rest
    if len(line) > MAX_HEADER_BYTES:
        raise WireError(
            f"header line longer than {MAX_HEADER_BYTES} bytes: this text-to-speech server "
            "only accepts short event headers", "frame-too-large", fatal=True)
    return line


async def _read_exactly(reader: asyncio.StreamReader, size: int) -> bytes:
    if size == 0:
        return b""
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise EOFError("connection closed inside a frame") from None


async def _first_byte(reader: asyncio.StreamReader, idle_timeout: float,
                      busy: Callable[[], bool] | None) -> bytes:
    """Wait for the next byte; :class:`IdleTimeout` after ``idle_timeout`` s of nothing
    while ``busy()`` is false (the wait goes on while the connection has work running)."""
    while True:
        try:
            async with asyncio.timeout(idle_timeout if idle_timeout > 0 else None):
                return await reader.read(1)
        except TimeoutError:
            if busy is not None and busy():
                continue
            raise IdleTimeout(f"no event for {idle_timeout:g} s (--idle-timeout)") from None


async def read_frame(reader: asyncio.StreamReader, *,
                     frame_timeout: float = DEFAULT_FRAME_TIMEOUT_S,
                     idle_timeout: float = 0.0,
                     busy: Callable[[], bool] | None = None) -> Event | None:
    """Read one event; None at a clean end of stream (or EOF inside a frame).

    Raises :class:`WireError` for an unusable frame and :class:`TimeoutError` (wrapped in a
    fatal ``WireError``) when a started frame does not complete within ``frame_timeout``;
    :class:`IdleTimeout` when no frame starts within ``idle_timeout`` (0: wait forever) and
    ``busy()`` is false.
    """
    while True:
        first = await _first_byte(reader, idle_timeout, busy)
        if not first:
            return None
        try:
            async with asyncio.timeout(frame_timeout if frame_timeout > 0 else None):
                line = await _read_line(reader, first)
                if not line.strip():
                    continue  # blank lines between frames are harmless
                return await _read_rest(reader, line)
        except EOFError as err:
            _LOGGER.debug("Client closed the connection mid-frame: %s", err)
            return None
        except TimeoutError:
            raise WireError(
                f"incomplete frame: nothing completed it within {frame_timeout:g} s "
                "(--read-timeout)", "timeout", fatal=True) from None


async def _read_rest(reader: asyncio.StreamReader, line: bytes) -> Event:
    header, not_utf8 = _decode_header(line)
    if not isinstance(header, dict):
        raise WireError(f"header line must be a JSON object, not {type(header).__name__}",
                        "invalid-frame", fatal=True)
    data_length = _length(header, "data_length", MAX_DATA_BYTES, "short texts")
    payload_length = _length(header, "payload_length", MAX_PAYLOAD_BYTES,
                             "events without audio payloads")
    data_blob = await _read_exactly(reader, data_length)
    payload = await _read_exactly(reader, payload_length)
    # The whole frame is consumed: from here on errors leave the connection usable.
    event_type = header.get("type")
    if not_utf8 is not None:
        readable = isinstance(event_type, str) and event_type.isascii()
        raise WireError(not_utf8, "invalid-event", fatal=False,
                        event_type=event_type if readable else None)
    if not isinstance(event_type, str) or not event_type:
        raise WireError(f"event type must be a non-empty string, not {event_type!r}",
                        "invalid-event", fatal=False)
    data = header.get("data")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise WireError(f"{event_type}: data must be a JSON object, not "
                        f"{type(data).__name__}", "invalid-event", fatal=False,
                        event_type=event_type)
    if data_blob:
        try:
            extra = _decode_json(data_blob, f"{event_type}: data", fatal=False)
        except WireError as err:
            err.event_type = event_type
            raise
        if not isinstance(extra, dict):
            raise WireError(f"{event_type}: data must be a JSON object, not "
                            f"{type(extra).__name__}", "invalid-event", fatal=False,
                            event_type=event_type)
        data = {**data, **extra}
    if payload:
        _LOGGER.debug("Ignoring a %d-byte payload on %s", len(payload), event_type)
    return Event(type=event_type, data=data, payload=payload or None)


# --------------------------------------------------------------------------- field types

_VOICE_FIELDS = ("name", "language", "speaker")


def _check_voice(event_type: str, voice: Any) -> str | None:
    if voice is None:
        return None
    if not isinstance(voice, dict):
        return f"{event_type}: voice must be an object like {{\"name\": ...}}, " \
               f"not {type(voice).__name__}"
    for key in _VOICE_FIELDS:
        value = voice.get(key)
        if value is not None and not isinstance(value, str):
            return f"{event_type}: voice.{key} must be a string, not {type(value).__name__}"
    return None


def _check_optional_str(event_type: str, data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        return f"{event_type}: {key} must be a string, not {type(value).__name__}"
    return None


def check_fields(event: Event) -> str | None:
    """A message naming the first field of a TTS event with a wrong type, else None."""
    data = event.data
    if event.type in ("synthesize", "synthesize-chunk"):
        if "text" not in data:
            return f"{event.type}: the text field is missing"
        if not isinstance(data["text"], str):
            return f"{event.type}: text must be a string, not {type(data['text']).__name__}"
    if event.type in ("synthesize", "synthesize-start"):
        return (_check_voice(event.type, data.get("voice"))
                or _check_optional_str(event.type, data, "text_format"))
    return None
