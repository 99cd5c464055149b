"""The Wyoming event handler: describe, one-shot synthesis and streaming synthesis.

One handler runs per connection. ``handle_event`` never waits for synthesis: text is split
into segments, each segment is handed to the inference worker, and an ordered sender task
writes the audio. So a connection keeps reading while its audio is produced (a client that
goes away is noticed at once and its pending work is cancelled), sentence N+1 is decoded
while sentence N is being sent, and ``describe`` is answered at once (behind only the
answers already queued on the same connection, so replies keep the order of requests).

Protocol choices (see the README):
- Unknown voice name: an ``error`` event (code ``unknown-voice``) naming it and the available
  voices; the connection stays usable. No voice: the default voice. A voice given only by
  language: the default voice if it speaks it, else the first voice that does.
- Empty or whitespace-only text (also after markdown/emoji cleanup): one-shot answers an
  empty ``audio-start``/``audio-stop``; a stream answers only ``synthesize-stopped``.
- A failure inside a request sends one ``error`` event; an open one-shot audio cycle is still
  closed with ``audio-stop`` and a stream still ends with ``synthesize-stopped``, so clients
  that ignore ``error`` events do not hang.
- Hostile clients (see :mod:`.wire`): frames are read with size caps and a per-frame read
  timeout; an unusable frame gets an ``error`` event (and, when the frame boundaries are
  lost, that connection is closed). Output per connection is bounded (64 KiB in asyncio,
  a fixed 256 KiB kernel send buffer); a client that reads nothing for ``--write-timeout``
  seconds is dropped and its pending work cancelled, so it never holds the engine.
- ``text_format: ssml`` is not interpreted: tags are removed and the text spoken; other
  formats than ``text``/``ssml`` get an ``unsupported-text-format`` error. A voice
  ``speaker`` is ignored (OmniVoice voices have none).
- While the server drains for SIGTERM/SIGINT, new requests get a ``shutting-down`` error.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import Describe, Info
from wyoming.server import AsyncEventHandler
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from wyoming_omnivoice.text.cleanup import clean_text, has_speech
from wyoming_omnivoice.text.sentences import SentenceSplitter, split_sentences

from .voices import VoiceCatalog, VoicePreset
from .wire import DEFAULT_FRAME_TIMEOUT_S, IdleTimeout, WireError, check_fields, read_frame
from .worker import BusyError, InferenceWorker, WorkerStoppedError

_LOGGER = logging.getLogger(__name__)

SAMPLE_WIDTH = 2
CHANNELS = 1
#: One-shot text: sentences after the first are merged up to this many characters.
GROUP_CHARS = 200
#: Output buffered per connection: asyncio's transport buffer (drain waits above it) and
#: the kernel send buffer (fixed, so it cannot autotune to megabytes per stuck client).
#: 256 KiB is over 5 s of 24 kHz 16-bit audio, plenty for any network a TTS server sees.
TRANSPORT_HIGH_WATER = 64 * 1024
KERNEL_SEND_BUFFER = 256 * 1024


class RequestError(Exception):
    """A request-level failure with a Wyoming error code."""

    def __init__(self, text: str, code: str) -> None:
        super().__init__(text)
        self.code = code


class RequestLimiter:
    """Counts synthesis requests (one-shot or stream) in service; used on the loop thread."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    def try_acquire(self) -> bool:
        if self.active >= self.limit:
            return False
        self.active += 1
        return True

    def release(self) -> None:
        self.active = max(0, self.active - 1)


@dataclass
class ServerContext:
    """Everything the handlers share (built once at startup)."""

    catalog: VoiceCatalog
    default_voice: str
    worker: InferenceWorker
    limiter: RequestLimiter
    sample_rate: int
    #: Builds the engine request for (voice, text); raises ValueError for bad input.
    make_request: Callable[[VoicePreset, str], Any]
    samples_per_chunk: int = 1024
    max_text_length: int = 5000
    streaming: bool = True
    info_factory: Callable[[], Info] | None = None
    #: A started frame must arrive completely within this many seconds (--read-timeout).
    read_timeout: float = DEFAULT_FRAME_TIMEOUT_S
    #: A client that accepts no output for this many seconds is dropped (--write-timeout).
    write_timeout: float = 30.0
    #: A connection with nothing in progress that sends nothing for this many seconds is
    #: closed (--idle-timeout; 0: never).
    idle_timeout: float = 300.0
    #: Most connections open at once (--max-connections); more are refused with an error.
    max_connections: int = 64
    #: Set on SIGTERM/SIGINT: in-flight requests finish, new ones are refused.
    draining: bool = False
    #: Live connection handlers (for a graceful shutdown).
    handlers: set[Any] = field(default_factory=set)
    #: Called on every describe (non-blocking): picks up voice folders added meanwhile.
    on_describe: Callable[[], None] | None = None

    def voices_changed_hook(self) -> None:
        """Run ``on_describe``; a failure there is logged, never breaks describe."""
        if self.on_describe is None:
            return
        try:
            self.on_describe()
        except Exception:
            _LOGGER.exception("Looking for new voices failed")

    def info(self) -> Info:
        from .info import build_info

        if self.info_factory is not None:
            return self.info_factory()
        return build_info(self.catalog, streaming=self.streaming, healthy=self.worker.alive)

    def resolve_voice(self, voice: SynthesizeVoice | None) -> VoicePreset:
        default = self.catalog.get(self.default_voice)
        if default is None:  # only possible if the catalog was built without it
            raise RequestError(f"The default voice {self.default_voice!r} is missing",
                               "unknown-voice")
        if voice is None:
            return default
        if voice.name:
            preset = self.catalog.get(voice.name)
            if preset is None:
                folded = voice.name.casefold()
                preset = next((p for p in self.catalog if p.name.casefold() == folded), None)
            if preset is None:
                raise RequestError(
                    f"Unknown voice {voice.name!r}. Available voices: "
                    f"{', '.join(self.catalog.names)}",
                    "unknown-voice",
                )
            return preset
        if voice.language:
            if self.catalog.find_for_language(voice.language) is None:
                _LOGGER.warning("No voice speaks %r; using the default voice", voice.language)
                return default
            single = VoiceCatalog([default])
            if single.find_for_language(voice.language) is not None:
                return default
            return self.catalog.find_for_language(voice.language) or default
        return default


_SSML_TAG = re.compile(r"<[^<>]*>")
TEXT_FORMATS = ("text", "ssml")


def text_format_of(value: Any) -> str:
    """The request's text format as a plain lower-case string ("text" when absent)."""
    if value is None:
        return "text"
    return str(getattr(value, "value", value)).strip().lower() or "text"


def check_text_format(value: Any) -> str:
    fmt = text_format_of(value)
    if fmt not in TEXT_FORMATS:
        raise RequestError(f"Unsupported text_format {fmt!r}: use 'text' (or 'ssml', whose "
                           "tags are removed and only the text is spoken)",
                           "unsupported-text-format")
    return fmt


def ssml_to_text(text: str) -> str:
    """SSML is not interpreted: tags are removed, entities decoded, the words spoken."""
    return html.unescape(_SSML_TAG.sub(" ", text))


def prepare_sentence(text: str) -> str:
    """Cleanup for one sentence: markdown, URLs and emoji removed, lines joined."""
    cleaned = clean_text(text)
    return " ".join(part for part in cleaned.split("\n") if part.strip())


def group_sentences(sentences: list[str], limit: int = GROUP_CHARS) -> list[str]:
    """First sentence alone (fast first audio), later ones merged up to ``limit`` chars."""
    if not sentences:
        return []
    groups = [sentences[0]]
    current = ""
    for sentence in sentences[1:]:
        if current and len(current) + 1 + len(sentence) > limit:
            groups.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        groups.append(current)
    return groups


def audio_to_pcm(audio: np.ndarray) -> bytes:
    """float32 [-1, 1] -> 16-bit little-endian PCM."""
    samples = np.clip(np.asarray(audio, dtype=np.float32).reshape(-1), -1.0, 1.0)
    return np.round(samples * 32767.0).astype("<i2").tobytes()


def _error_for(err: BaseException) -> RequestError:
    if isinstance(err, RequestError):
        return err
    if isinstance(err, BusyError):
        return RequestError(f"Server busy: {err}; try again shortly", "busy")
    if isinstance(err, WorkerStoppedError):
        return RequestError(f"Synthesis unavailable: {err}", "worker-stopped")
    if isinstance(err, ValueError):
        return RequestError(str(err) or "invalid request", "invalid-request")
    return RequestError(f"Synthesis failed: {type(err).__name__}: {err}", "synthesis-failed")


@dataclass(eq=False)
class _Request:
    """One one-shot request or one stream on a connection."""

    voice: VoicePreset | None
    ssml: bool = False
    has_slot: bool = False
    failed: bool = False
    audio_open: bool = False
    finished: bool = False
    text_length: int = 0
    leftover: bytes = b""
    last_started: asyncio.Future | None = None


@dataclass(eq=False)
class _Segment:
    """A piece of text whose audio is written as (part of) one audio cycle."""

    request: _Request
    text: str
    task: asyncio.Task | None = None
    send_start: bool = True
    send_stop: bool = True
    final: bool = False


@dataclass(eq=False)
class _Control:
    """An event written in order with the audio (error, synthesize-stopped, empty cycle)."""

    request: _Request | None
    events: list[Event] = field(default_factory=list)
    final: bool = False


@dataclass(eq=False)
class _Stream:
    request: _Request
    splitter: SentenceSplitter
    compat_text: str | None = None
    collected: list[str] = field(default_factory=list)


class OmniVoiceEventHandler(AsyncEventHandler):
    """Handles one Wyoming connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: ServerContext) -> None:
        super().__init__(reader, writer)
        self.ctx = context
        self._queue: asyncio.Queue[_Segment | _Control] = asyncio.Queue()
        self._sender: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._requests: set[_Request] = set()
        self._stream: _Stream | None = None
        self._closed = False
        self._dropped = False
        #: The sender is writing an item (audio or control events) right now.
        self._sending = False
        _bound_send_buffer(writer)

    # ---- connection ------------------------------------------------------------------

    async def run(self) -> None:
        """Read bounded frames until EOF, a fatal wire error or ``handle_event`` says stop.

        Replaces ``AsyncEventHandler.run`` (which trusts frame sizes and waits forever on
        half a frame); see :mod:`.wire`.
        """
        self._is_running = True
        if len(self.ctx.handlers) >= self.ctx.max_connections:
            await self._refuse()
            return
        self.ctx.handlers.add(self)
        try:
            while self._is_running and not self._closed:
                try:
                    event = await read_frame(self.reader, frame_timeout=self.ctx.read_timeout,
                                             idle_timeout=self.ctx.idle_timeout,
                                             busy=self._busy)
                except IdleTimeout as err:
                    _LOGGER.debug("Closing an idle connection: %s", err)
                    break
                except WireError as err:
                    await self._on_wire_error(err)
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
            self.ctx.handlers.discard(self)
            await self.disconnect()
            await self._close_writer()

    def _busy(self) -> bool:
        """Whether this connection has work in progress (audio being made or sent).

        An open stream alone does not count: a client that opens one and then says nothing
        for the whole idle timeout is gone (its concurrency slot is freed)."""
        streamed = self._stream.request if self._stream is not None else None
        return (self._sending or not self._queue.empty()
                or any(not task.done() for task in self._tasks)
                or any(request is not streamed for request in self._requests))

    async def _refuse(self) -> None:
        """Over --max-connections: say so and close, without touching the others."""
        _LOGGER.warning("Refusing a connection: %d already open (--max-connections)",
                        self.ctx.max_connections)
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await self.write_event(Error(
                text=f"Too many connections (the server allows "
                     f"{self.ctx.max_connections}); try again shortly",
                code="too-many-connections").event())
        self._closed = True
        await self._close_writer()

    async def _on_wire_error(self, err: WireError) -> None:
        _LOGGER.warning("Bad frame from a client (%s)%s: %s", err.code,
                        "; closing that connection" if err.fatal else "", err)
        event = Error(text=str(err), code=err.code).event()
        if not err.fatal:
            self._send_control(None, [event])
            return
        # The frame boundaries are lost: say why, then close this connection only.
        with contextlib.suppress(ConnectionError, OSError):
            await self.write_event(event)

    async def write_event(self, event: Event) -> None:
        """Write with a drain timeout: a client that stops reading is dropped."""
        if self._dropped or self.writer.is_closing():
            raise ConnectionResetError("connection closed")
        timeout = self.ctx.write_timeout if self.ctx.write_timeout > 0 else None
        try:
            await asyncio.wait_for(async_write_event(event, self.writer), timeout)
        except TimeoutError:
            _LOGGER.warning("Client accepted no data for %g s (--write-timeout); dropping it",
                            self.ctx.write_timeout)
            self._drop()
            raise ConnectionResetError("client is not reading") from None

    def _drop(self) -> None:
        """Close at once, discarding unsent output (a stuck client never drains it)."""
        self._dropped = True
        self._closed = True
        self._is_running = False
        self.writer.transport.abort()

    async def _close_writer(self) -> None:
        if self._dropped:
            return
        self.writer.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(),
                                   self.ctx.write_timeout if self.ctx.write_timeout > 0
                                   else None)
        except (TimeoutError, ConnectionError, OSError):
            self.writer.transport.abort()

    # ---- events ----------------------------------------------------------------------

    async def handle_event(self, event: Event) -> bool:
        try:
            problem = check_fields(event)
            if problem is not None:
                self._send_control(None, [_error_event(RequestError(problem,
                                                                    "invalid-event"))])
                return True
            if Describe.is_type(event.type):
                self.ctx.voices_changed_hook()
                if self._queue.empty():
                    await self.write_event(self.ctx.info().event())
                else:  # answers queued before it (an error, say) go first
                    self._send_control(None, [self.ctx.info().event()])
            elif Synthesize.is_type(event.type):
                self._on_synthesize(event)
            elif SynthesizeStart.is_type(event.type):
                self._on_stream_start(event)
            elif SynthesizeChunk.is_type(event.type):
                self._on_stream_chunk(event)
            elif SynthesizeStop.is_type(event.type):
                self._on_stream_stop()
            else:
                _LOGGER.debug("Ignoring event %r", event.type)
        except ConnectionError as err:
            _LOGGER.debug("Connection lost while handling %s: %s", event.type, err)
            return False
        except Exception:  # a bug must cost one request, never the connection or server
            _LOGGER.exception("Unexpected error while handling %s", event.type)
            self._send_control(None, [_error_event(RequestError(
                f"Internal error while handling {event.type}", "internal-error"))])
        return True

    async def disconnect(self) -> None:
        """The client went away: drop its pending work, keep nothing running for it."""
        self._drop_work()
        if self._sender is not None:
            self._sender.cancel()

    def _drop_work(self) -> None:
        """Cancel every segment still running and release every request of this connection
        (whichever side noticed first that the client is gone: the reader or the sender)."""
        self._closed = True
        pending = [task for task in self._tasks if not task.done() and not task.cancelling()]
        if pending:
            _LOGGER.info("Client disconnected: cancelled %d pending segment(s)", len(pending))
        for task in pending:
            task.cancel()
        for request in list(self._requests):
            self._release(request)

    def _on_synthesize(self, event: Event) -> None:
        if self._stream is not None:
            if self.ctx.streaming:
                _LOGGER.debug("Ignoring the compatibility synthesize inside a stream")
                return
            # Streaming disabled: the compatibility copy is the real request of the stream.
            try:
                synthesize = Synthesize.from_event(event)
            except (KeyError, TypeError, ValueError):
                return
            if self._stream.request.failed or self._stream.compat_text is not None:
                return
            self._stream.compat_text = synthesize.text or ""
            self._start_one_shot(synthesize.text or "", synthesize.voice,
                                 fallback=self._stream.request.voice)
            return
        try:
            synthesize = Synthesize.from_event(event)
            fmt = check_text_format(synthesize.text_format)
        except RequestError as err:
            self._send_control(None, [_error_event(err)])
            return
        except (KeyError, TypeError, ValueError) as err:
            self._send_control(None, [_error_event(RequestError(
                f"Malformed synthesize event: {err}", "invalid-request"))])
            return
        self._start_one_shot(synthesize.text or "", synthesize.voice, ssml=fmt == "ssml")

    def _start_one_shot(self, text: str, voice: SynthesizeVoice | None,
                        fallback: VoicePreset | None = None, ssml: bool = False) -> None:
        request = _Request(voice=None, ssml=ssml)
        try:
            self._refuse_when_draining()
            if voice is None and fallback is not None:
                request.voice = fallback
            else:
                request.voice = self.ctx.resolve_voice(voice)
            if len(text) > self.ctx.max_text_length:
                raise RequestError(
                    f"Text is {len(text)} characters long; the limit is "
                    f"{self.ctx.max_text_length} (--max-text-length)", "text-too-long")
            if ssml:
                text = ssml_to_text(text)
            groups = group_sentences(
                [s for s in (prepare_sentence(x) for x in split_sentences(text)) if has_speech(s)]
            )
            if groups and not self._admit(request):
                raise RequestError(
                    f"Server busy: {self.ctx.limiter.limit} requests in progress "
                    "(--max-concurrent); try again shortly", "busy")
        except RequestError as err:
            self._send_control(None, [_error_event(err)])
            return
        if not groups:
            _LOGGER.debug("Nothing to say in %r", text)
            self._send_control(None, [self._audio_start(), AudioStop().event()])
            return
        _LOGGER.debug("One-shot with voice %s in %d segment(s)", request.voice.name, len(groups))
        for index, group in enumerate(groups):
            last = index == len(groups) - 1
            self._add_segment(request, group, send_start=index == 0, send_stop=last, final=last)

    def _on_stream_start(self, event: Event) -> None:
        if self._stream is not None:
            _LOGGER.debug("synthesize-start inside an open stream: finishing the old one")
            self._on_stream_stop()
        text_format: Any = None
        try:
            start = SynthesizeStart.from_event(event)
            voice = start.voice
            text_format = start.text_format
        except (KeyError, TypeError, ValueError):
            voice = None
        request = _Request(voice=None)
        self._stream = _Stream(request=request, splitter=SentenceSplitter())
        try:
            request.ssml = check_text_format(text_format) == "ssml"
            self._refuse_when_draining()
            request.voice = self.ctx.resolve_voice(voice)
            if self.ctx.streaming and not self._admit(request):
                raise RequestError(
                    f"Server busy: {self.ctx.limiter.limit} requests in progress "
                    "(--max-concurrent); try again shortly", "busy")
        except RequestError as err:
            request.failed = True
            self._send_control(request, [_error_event(err)])

    def _on_stream_chunk(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("synthesize-chunk without synthesize-start: ignored")
            return
        if stream.request.failed:
            return
        try:
            text = SynthesizeChunk.from_event(event).text or ""
        except (KeyError, TypeError, ValueError):
            return
        request = stream.request
        request.text_length += len(text)
        if request.text_length > self.ctx.max_text_length:
            request.failed = True
            self._send_control(request, [_error_event(RequestError(
                f"Streamed text exceeds {self.ctx.max_text_length} characters "
                "(--max-text-length)", "text-too-long"))])
            return
        if not self.ctx.streaming:
            stream.collected.append(text)
            return
        for sentence in stream.splitter.add(text):
            self._add_stream_sentence(request, sentence)

    def _on_stream_stop(self) -> None:
        stream = self._stream
        self._stream = None
        if stream is None:
            # A stray stop: acknowledge it so a waiting client does not hang.
            self._send_control(None, [SynthesizeStopped().event()])
            return
        request = stream.request
        if self.ctx.streaming and not request.failed:
            for sentence in stream.splitter.finish():
                self._add_stream_sentence(request, sentence)
        elif not request.failed and stream.compat_text is None and stream.collected:
            # Streaming disabled and no compatibility copy came: speak the collected text.
            self._start_one_shot("".join(stream.collected), None, fallback=request.voice)
        self._send_control(request, [SynthesizeStopped().event()], final=True)

    # ---- request plumbing ------------------------------------------------------------

    def _refuse_when_draining(self) -> None:
        if self.ctx.draining:
            raise RequestError("The server is shutting down; try again shortly",
                               "shutting-down")

    def _admit(self, request: _Request) -> bool:
        if not self.ctx.limiter.try_acquire():
            return False
        request.has_slot = True
        self._requests.add(request)
        return True

    def _release(self, request: _Request) -> None:
        request.finished = True
        if request.has_slot:
            request.has_slot = False
            self.ctx.limiter.release()
        self._requests.discard(request)

    def _add_stream_sentence(self, request: _Request, sentence: str) -> None:
        text = prepare_sentence(ssml_to_text(sentence) if request.ssml else sentence)
        if has_speech(text):
            self._add_segment(request, text, send_start=True, send_stop=True, final=False)

    def _add_segment(self, request: _Request, text: str, *, send_start: bool, send_stop: bool,
                     final: bool) -> None:
        loop = asyncio.get_running_loop()
        previous = request.last_started
        started: asyncio.Future = loop.create_future()
        request.last_started = started
        segment = _Segment(request=request, text=text, send_start=send_start,
                           send_stop=send_stop, final=final)
        segment.task = loop.create_task(self._produce(segment, previous, started))
        self._tasks.add(segment.task)
        segment.task.add_done_callback(self._task_done)
        self._enqueue(segment)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved here; the sender reports it

    async def _produce(self, segment: _Segment, previous: asyncio.Future | None,
                       started: asyncio.Future) -> np.ndarray:
        """Submit after the previous segment of the request started; return its audio."""
        job = None
        try:
            if previous is not None:
                await asyncio.wait([previous])
            request = segment.request
            if request.failed or self._closed or request.voice is None:
                raise asyncio.CancelledError
            engine_request = self.ctx.make_request(request.voice, segment.text)
            job = self.ctx.worker.submit(engine_request)
            await asyncio.wait([job.started])
            if not started.done():
                started.set_result(None)
            return await job.future
        except asyncio.CancelledError:
            if job is not None:
                job.cancel()
            raise
        finally:
            if not started.done():
                started.set_result(None)

    def _send_control(self, request: _Request | None, events: list[Event],
                      final: bool = False) -> None:
        self._enqueue(_Control(request=request, events=events, final=final))

    def _enqueue(self, item: _Segment | _Control) -> None:
        self._queue.put_nowait(item)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_loop())

    def _audio_start(self) -> Event:
        return AudioStart(rate=self.ctx.sample_rate, width=SAMPLE_WIDTH,
                          channels=CHANNELS).event()

    # ---- ordered output --------------------------------------------------------------

    async def _send_loop(self) -> None:
        try:
            while True:
                item = await self._queue.get()
                self._sending = True
                if isinstance(item, _Control):
                    for event in item.events:
                        await self.write_event(event)
                    if item.final and item.request is not None:
                        self._release(item.request)
                else:
                    await self._send_segment(item)
                self._sending = False
        except ConnectionError as err:
            _LOGGER.debug("Client gone while sending audio: %s", err)
            await self._abort()
        except Exception:
            _LOGGER.exception("Unexpected error while sending; closing the connection")
            await self._abort()

    async def _abort(self) -> None:
        self._drop_work()
        self._drop()

    async def _send_segment(self, segment: _Segment) -> None:
        request = segment.request
        audio: np.ndarray | None = None
        if segment.task is None:  # never scheduled: nothing to send
            request.failed = True
        elif not request.failed:
            try:
                audio = await segment.task
            except asyncio.CancelledError:
                if self._closed:
                    raise
                audio = None
            except Exception as err:  # engine or queue failure: fail this request only
                request.failed = True
                await self.write_event(_error_event(_error_for(err)))
        elif segment.task is not None:
            segment.task.cancel()
        if audio is not None and not request.failed:
            if segment.send_start:
                await self.write_event(self._audio_start())
                request.audio_open = True
            # Full chunks only; the remainder waits for the next segment of the same cycle.
            pcm = request.leftover + audio_to_pcm(audio)
            step = self.ctx.samples_per_chunk * SAMPLE_WIDTH
            full = len(pcm) - len(pcm) % step
            for offset in range(0, full, step):
                await self._write_chunk(pcm[offset:offset + step])
            request.leftover = pcm[full:]
        if request.audio_open and (segment.send_stop or request.failed):
            if request.leftover:
                await self._write_chunk(request.leftover)
                request.leftover = b""
            await self.write_event(AudioStop().event())
            request.audio_open = False
        if segment.final:
            self._release(request)


    async def _write_chunk(self, pcm: bytes) -> None:
        await self.write_event(AudioChunk(rate=self.ctx.sample_rate, width=SAMPLE_WIDTH,
                                          channels=CHANNELS, audio=pcm).event())


def _bound_send_buffer(writer: asyncio.StreamWriter) -> None:
    """Cap what one connection can have queued: asyncio's buffer and the kernel's."""
    transport = writer.transport
    with contextlib.suppress(AttributeError, NotImplementedError, RuntimeError):
        transport.set_write_buffer_limits(high=TRANSPORT_HIGH_WATER)
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, KERNEL_SEND_BUFFER)


def _error_event(err: RequestError) -> Event:
    _LOGGER.info("Request error (%s): %s", err.code, err)
    return Error(text=str(err) or err.code, code=err.code).event()
