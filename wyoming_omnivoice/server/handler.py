"""The Wyoming protocol on one connection: describe, one-shot synthesis and streaming.

``handle_event`` never waits for synthesis: text is prepared (:mod:`..text.prepare`), each
piece is handed to the inference worker, and the connection's ordered output
(:mod:`.output`) writes the audio. So a connection keeps reading while its audio is made (a
client that goes away is noticed at once and its pending work is cancelled), sentence N+1
is decoded while sentence N is being sent, and answers keep the order of requests.

Protocol choices (see the README):

- Every one-shot ``synthesize`` ends with ``audio-stop`` and every stream with
  ``synthesize-stopped``, whatever happened; an ``error`` event may come first (clients that
  ignore ``error`` events must not hang). A one-shot request that fails before any audio
  gets ``error``, then an empty ``audio-start``/``audio-stop``.
- Voices (:meth:`.voices.VoiceCatalog.route`): no voice: the default voice. An unknown voice
  name is spoken with the best voice for the request's language (its language if given,
  else the default voice's), with a warning in the log. A voice given only by language: the
  default voice if it speaks it, else the first voice that does.
- Empty or whitespace-only text (also after markdown/emoji cleanup): an audio cycle with
  20 ms of silence (one-shot; a stream then ``synthesize-stopped``).
- ``text_format: ssml`` is not interpreted: tags are removed and the text spoken; other
  formats than ``text``/``ssml`` get an ``unsupported-text-format`` error. A voice
  ``speaker`` is ignored (OmniVoice voices have none).
- While the server drains for SIGTERM/SIGINT, new requests get a ``shutting-down`` error.
- Hostile clients: see :mod:`.connection` (frames, timeouts, connection cap) and
  :mod:`.output` (a client that sends requests without reading is closed).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from wyoming_omnivoice.server import errors
from wyoming_omnivoice.server.connection import Connection
from wyoming_omnivoice.server.context import ServerContext
from wyoming_omnivoice.server.errors import RequestError
from wyoming_omnivoice.server.gap_guard import GapGuard
from wyoming_omnivoice.server.output import OrderedOutput, OutputOverflow, empty_cycle, silent_cycle
from wyoming_omnivoice.server.piece_plan import plan_next_piece
from wyoming_omnivoice.server.request_input import VoiceWish, check_text_format, voice_wish
from wyoming_omnivoice.server.requests import (
    Kind,
    PcmBuffer,
    Piece,
    Reply,
    Request,
    RequestState,
)
from wyoming_omnivoice.server.wire import WireError, check_fields
from wyoming_omnivoice.speech.pacing import Unit, units_of
from wyoming_omnivoice.text.prepare import feed, prepare_one_shot, prepare_streamed_sentence
from wyoming_omnivoice.text.sentences import SentenceSplitter
from wyoming_omnivoice.voices.catalog import VoicePreset

_LOGGER = logging.getLogger(__name__)

Audio = np.ndarray[Any, np.dtype[np.float32]]
_SYNTHESIZE = "synthesize"


@dataclass(eq=False)
class _Stream:
    request: Request
    splitter: SentenceSplitter
    compat_text: str | None = None
    collected: list[str] = field(default_factory=list)


class OmniVoiceEventHandler(Connection):
    """Handles one Wyoming connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: ServerContext) -> None:
        super().__init__(reader, writer, context.settings.limits, context.state.connections)
        self.ctx = context
        self._output = OrderedOutput(self, context.settings.sample_rate,
                                     finish=self._finish, abort=self._abort,
                                     guard=GapGuard(context.settings.max_gap),
                                     write_silence=self.write_silence)
        self._tasks: set[asyncio.Task[Audio]] = set()
        #: This connection's requests that are not finished.
        self._requests: set[Request] = set()
        self._stream: _Stream | None = None

    # ---- connection hooks ------------------------------------------------------------

    def busy(self) -> bool:
        """Work in progress: audio being made or sent, a request not finished.

        An open stream alone does not count: a client that opens one and then says nothing
        for the whole idle timeout is gone (its concurrency slot is freed)."""
        streamed = self._stream.request if self._stream is not None else None
        return (self._output.busy or any(not task.done() for task in self._tasks)
                or any(request is not streamed for request in self._requests))

    async def on_wire_error(self, err: WireError) -> None:
        if err.fatal:
            await super().on_wire_error(err)
            return
        _LOGGER.warning("Bad frame from a client (%s): %s", err.code, err)
        self._decline(err.event_type, RequestError(str(err), err.code))

    async def disconnect(self) -> None:
        """The client went away: drop its pending work, keep nothing running for it."""
        self.ctx.metrics.closed(self)
        self._drop_work()
        self._output.cancel()

    # ---- events ----------------------------------------------------------------------

    async def write_event(self, event: Event) -> None:
        await super().write_event(event)
        self.ctx.metrics.sent(self, event)

    async def write_silence(self, event: Event, seconds: float) -> None:
        """A chunk of the gap guard's silence: audio for the client, not for the figures
        of audio and first audio (the metrics count its seconds on their own)."""
        await super().write_event(event)
        self.ctx.metrics.silence_sent(seconds)

    async def handle_event(self, event: Event) -> bool:
        self.ctx.metrics.received(self, event)
        try:
            problem = check_fields(event)
            if problem is not None:
                self._decline(event.type, RequestError(problem, errors.INVALID_EVENT))
            elif Describe.is_type(event.type):
                self._reply(self.ctx.describe())
            elif Synthesize.is_type(event.type):
                await self._on_synthesize(event)
            elif SynthesizeStart.is_type(event.type):
                await self._on_stream_start(event)
            elif SynthesizeChunk.is_type(event.type):
                await self._on_stream_chunk(event)
            elif SynthesizeStop.is_type(event.type):
                await self._on_stream_stop()
            else:
                _LOGGER.debug("Ignoring event %r", event.type)
        except OutputOverflow as err:
            self._overflow(err)
        except ConnectionError as err:
            _LOGGER.debug("Connection lost while handling %s: %s", event.type, err)
            return False
        except Exception:  # a bug must cost one request, never the connection or server
            _LOGGER.exception("Unexpected error while handling %s", event.type)
            self._decline(event.type, RequestError(
                f"Internal error while handling {event.type}", errors.INTERNAL_ERROR))
        return not self.closed

    async def _on_synthesize(self, event: Event) -> None:
        stream = self._stream
        if stream is not None:
            if self.ctx.settings.streaming:
                _LOGGER.debug("Ignoring the compatibility synthesize inside a stream")
                return
            # Streaming disabled: the compatibility copy is the real request of the stream.
            try:
                synthesize = Synthesize.from_event(event)
            except (KeyError, TypeError, ValueError):
                return
            if not stream.request.active or stream.compat_text is not None:
                return
            stream.compat_text = synthesize.text or ""
            await self._start_one_shot(stream.compat_text, voice_wish(event),
                                       fallback=stream.request.voice)
            return
        try:
            synthesize = Synthesize.from_event(event)
            fmt = check_text_format(synthesize.text_format)
        except RequestError as err:
            self._decline(event.type, err)
            return
        except (KeyError, TypeError, ValueError) as err:
            self._decline(event.type, RequestError(f"Malformed synthesize event: {err}",
                                                  errors.INVALID_REQUEST))
            return
        await self._start_one_shot(synthesize.text or "", voice_wish(event),
                                   ssml=fmt == "ssml")

    async def _start_one_shot(self, text: str, voice: VoiceWish | None,
                              fallback: VoicePreset | None = None, ssml: bool = False) -> None:
        limit = self.ctx.settings.max_text_length
        try:
            self._refuse_when_draining()
            if len(text) > limit:
                raise RequestError(f"Text is {len(text)} characters long; the limit is {limit} "
                                   "(--max-text-length)", errors.TEXT_TOO_LONG)
            preset = fallback if voice is None and fallback is not None else self._route(voice)
            pieces = await self.ctx.state.text.prepare(
                len(text), prepare_one_shot, text, ssml=ssml,
                first_clause=self.ctx.settings.first_clause, group=False)
        except RequestError as err:
            self._decline(_SYNTHESIZE, err)
            return
        if self.closed:  # the client left while the text was prepared
            return
        if not pieces:
            _LOGGER.debug("Nothing to say in %r", text)
            self._reply(*silent_cycle(self.ctx.settings.sample_rate))
            return
        request = self._new_request(Kind.ONE_SHOT, preset, ssml)
        if not self._admit(request):
            self._decline(_SYNTHESIZE, self._busy_error())
            return
        units = [unit for piece in pieces for unit in units_of(piece)]
        _LOGGER.debug("One-shot with voice %s: %d sentence(s), %d unit(s)", preset.name,
                      len(pieces), len(units))
        for index, unit in enumerate(units):
            last = index == len(units) - 1
            self._add_piece(request, unit.text, opens=index == 0, closes=last,
                            ends_request=last, unit=unit)

    async def _on_stream_start(self, event: Event) -> None:
        if self._stream is not None:
            _LOGGER.debug("synthesize-start inside an open stream: finishing the old one")
            await self._on_stream_stop()
        try:
            ssml = check_text_format(event.data.get("text_format")) == "ssml"
            self._refuse_when_draining()
            preset = self._route(voice_wish(event))
        except RequestError as err:
            request = self._new_request(Kind.STREAM, self._default_voice(), False)
            request.fail()
            self._stream = _Stream(request=request, splitter=SentenceSplitter())
            self._reply(err.event())
            return
        request = self._new_request(Kind.STREAM, preset, ssml)
        splitter = SentenceSplitter(first_clause=self.ctx.settings.first_clause)
        self._stream = _Stream(request=request, splitter=splitter)
        _LOGGER.debug("Stream with voice %s", preset.name)
        if self.ctx.settings.streaming and not self._admit(request):
            request.fail()
            self._reply(self._busy_error().event())

    async def _on_stream_chunk(self, event: Event) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("synthesize-chunk without synthesize-start: ignored")
            return
        request = stream.request
        if not request.active:
            return
        try:
            text = SynthesizeChunk.from_event(event).text or ""
        except (KeyError, TypeError, ValueError):
            return
        request.text_length += len(text)
        limit = self.ctx.settings.max_text_length
        if request.text_length > limit:
            request.fail()
            self._reply(RequestError(f"Streamed text exceeds {limit} characters "
                                     "(--max-text-length)", errors.TEXT_TOO_LONG).event())
            return
        if not self.ctx.settings.streaming:
            stream.collected.append(text)
            return
        sentences = await self.ctx.state.text.prepare(len(text), feed, stream.splitter, text)
        if self.closed or not request.active:
            return
        for sentence in sentences:
            self._add_stream_sentence(request, sentence)

    async def _on_stream_stop(self) -> None:
        stream = self._stream
        self._stream = None
        if stream is None:
            # A stray stop: acknowledge it so a waiting client does not hang.
            self._reply(SynthesizeStopped().event())
            return
        request = stream.request
        if request.active and self.ctx.settings.streaming:
            for sentence in stream.splitter.finish():
                self._add_stream_sentence(request, sentence)
            if request.last_started is None:
                # Nothing to say (blank text): a silent audio cycle all the same, as for a
                # one-shot; Home Assistant builds its WAV from audio-start (else: no file).
                self._reply(*silent_cycle(self.ctx.settings.sample_rate))
        elif request.active and stream.compat_text is None and stream.collected:
            # Streaming disabled and no compatibility copy came: speak the collected text.
            await self._start_one_shot("".join(stream.collected), None,
                                       fallback=request.voice)
        self._output.put(Reply([SynthesizeStopped().event()], ends=request))

    # ---- requests --------------------------------------------------------------------

    def _new_request(self, kind: Kind, voice: VoicePreset, ssml: bool) -> Request:
        return Request(kind=kind, voice=voice, ssml=ssml,
                       pcm=PcmBuffer(self.ctx.settings.samples_per_chunk))

    def _default_voice(self) -> VoicePreset:
        return self.ctx.state.catalog.route(self.ctx.settings.default_voice).preset

    def _route(self, voice: VoiceWish | None) -> VoicePreset:
        route = self.ctx.state.catalog.route(
            self.ctx.settings.default_voice,
            name=voice.name if voice is not None else None,
            language=voice.language if voice is not None else None)
        if route.note:
            _LOGGER.warning("%s", route.note)
        return route.preset

    def _refuse_when_draining(self) -> None:
        if self.ctx.state.draining:
            raise RequestError("The server is shutting down; try again shortly",
                               errors.SHUTTING_DOWN)

    def _busy_error(self) -> RequestError:
        return RequestError(f"Server busy: {self.ctx.state.slots.limit} requests in progress "
                            "(--max-concurrent); try again shortly", errors.BUSY)

    def _admit(self, request: Request) -> bool:
        if not self.ctx.state.slots.try_acquire(request):
            return False
        self._requests.add(request)
        return True

    def _finish(self, request: Request) -> None:
        request.state = RequestState.FINISHED
        self.ctx.state.slots.release(request)
        self._requests.discard(request)

    def _add_stream_sentence(self, request: Request, sentence: str) -> None:
        text = prepare_streamed_sentence(sentence, ssml=request.ssml)
        if text is None:
            return
        units = units_of(text)  # one audio cycle per sentence, however it is cut
        for index, unit in enumerate(units):
            self._add_piece(request, unit.text, opens=index == 0,
                            closes=index == len(units) - 1, ends_request=False, unit=unit)

    def _add_piece(self, request: Request, text: str, *, opens: bool, closes: bool,
                   ends_request: bool, unit: Unit | None = None) -> None:
        loop = asyncio.get_running_loop()
        previous = request.last_started
        started: asyncio.Future[None] = loop.create_future()
        request.last_started = started
        piece = Piece(request=request, text=text, opens=opens, closes=closes,
                      ends_request=ends_request, unit=unit)
        request.waiting.append(piece)
        self.ctx.state.demand.enter(request)
        task = loop.create_task(self._produce(piece, previous, started))
        piece.task = task
        self._tasks.add(task)
        task.add_done_callback(partial(self._piece_done, request))
        self._output.put(piece)

    def _piece_done(self, request: Request, task: asyncio.Task[Audio]) -> None:
        self._tasks.discard(task)
        self.ctx.state.demand.leave(request)
        if not task.cancelled():
            task.exception()  # retrieved here; the output reports it

    async def _produce(self, piece: Piece, previous: asyncio.Future[None] | None,
                       started: asyncio.Future[None]) -> Audio:
        """Submit after the previous piece of the request started; return its audio."""
        job = None
        try:
            if previous is not None:
                await asyncio.wait([previous])
            request = piece.request
            if not request.active or self.closed:
                raise asyncio.CancelledError
            if piece.absorbed:  # an earlier piece speaks this text
                return np.zeros(0, dtype=np.float32)
            text, predicted = plan_next_piece(piece, self.ctx.worker.speed)
            # Normalisation is text work of unknown cost: off the event loop.
            engine_request = await self.ctx.state.text.run(self.ctx.policy.make_request,
                                                           request.voice, text)
            if not request.active or self.closed:
                raise asyncio.CancelledError
            job = self.ctx.worker.submit(engine_request)
            await asyncio.wait([job.started])
            if predicted is not None:
                predicted.started = time.monotonic()
                request.planned = predicted
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

    # ---- replies, refusals and the end of a connection -------------------------------

    def _reply(self, *events: Event) -> None:
        self._output.put(Reply(list(events)))

    def _decline(self, event_type: str | None, err: RequestError) -> None:
        """Answer a request that will not be served: an ``error``, and for a one-shot
        ``synthesize`` outside a stream its ending (an empty audio cycle) too."""
        events = [err.event()]
        if event_type == _SYNTHESIZE and self._stream is None:
            events += empty_cycle(self.ctx.settings.sample_rate)
        try:
            self._output.put(Reply(events))
        except OutputOverflow as overflow:
            self._overflow(overflow)

    def _overflow(self, err: OutputOverflow) -> None:
        _LOGGER.warning("A client sends requests without reading the answers (%s); closing "
                        "that connection", err)
        self._abort()

    def _abort(self) -> None:
        """Drop the connection now (unsent output discarded) and everything it started."""
        self._drop_work()
        self.drop()

    def _drop_work(self) -> None:
        """Cancel every piece still running and finish every request of this connection
        (whichever side noticed first that the client is gone: the reader or the sender)."""
        self.closed = True
        pending = [task for task in self._tasks if not task.done() and not task.cancelling()]
        if pending:
            _LOGGER.info("Client disconnected: cancelled %d pending piece(s)", len(pending))
        for task in pending:
            task.cancel()
        for request in list(self._requests):
            self._finish(request)
