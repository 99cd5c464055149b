"""The Wyoming protocol on one connection: describe, one-shot synthesis and streaming.

The handler is protocol translation only: each event is parsed once
(:func:`.request_input.parse_event`), the typed request goes to the speech service
(:mod:`wyoming_omnivoice.speech.service`: voice routing, text preparation, the worker), and
the audio pieces it returns are written as events by the connection's ordered output
(:mod:`.output`). ``handle_event`` never waits for synthesis. So a connection keeps
reading while its audio is made (a client that goes away is noticed at once and its
pending work is cancelled), sentence N+1 is decoded while sentence N is being sent, and
answers keep the order of requests.

Protocol choices (docs/home-assistant.md says each in full): every one-shot ends with
``audio-stop`` and every stream with ``synthesize-stopped``, whatever happened, an ``error``
event perhaps first (a one-shot failing before any audio: ``error``, then an empty audio
cycle); voices are routed by :meth:`.catalog.VoiceCatalog.route`; blank text gets 20 ms of
silence; SSML tags are removed, other formats refused; while the server drains, new
requests get ``shutting-down`` and unfinished ones that error and their end
(:meth:`OmniVoiceEventHandler.cut_off`). Hostile clients: :mod:`.connection` (frames,
timeouts, the connection cap) and :mod:`.output` (a client that never reads is closed).
"""

from __future__ import annotations

import asyncio
import logging

from wyoming.event import Event
from wyoming.tts import SynthesizeStopped

from wyoming_omnivoice.speech import AudioPiece, PlayClock, Speech, VoiceWish
from wyoming_omnivoice.voices import VoicePreset
from wyoming_omnivoice.wyoming_protocol.connection import Connection
from wyoming_omnivoice.wyoming_protocol.context import WyomingContext
from wyoming_omnivoice.wyoming_protocol.errors import (
    INTERNAL_ERROR,
    INVALID_EVENT,
    RequestError,
    error_event,
)
from wyoming_omnivoice.wyoming_protocol.gap_guard import GapGuard
from wyoming_omnivoice.wyoming_protocol.output import (
    OrderedOutput,
    OutputOverflow,
    empty_cycle,
    silent_cycle,
)
from wyoming_omnivoice.wyoming_protocol.request_input import (
    DescribeRequest,
    OneShot,
    StreamChunk,
    StreamStart,
    StreamStop,
    parse_event,
)
from wyoming_omnivoice.wyoming_protocol.requests import (
    Kind,
    OpenStream,
    PcmBuffer,
    Piece,
    Reply,
    Request,
)
from wyoming_omnivoice.wyoming_protocol.wire import WireError, check_fields

_LOGGER = logging.getLogger(__name__)

_SYNTHESIZE = "synthesize"
_SYNTHESIZE_CHUNK = "synthesize-chunk"
_SYNTHESIZE_START = "synthesize-start"


class OmniVoiceEventHandler(Connection):
    """Handles one Wyoming connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 context: WyomingContext) -> None:
        super().__init__(reader, writer, context.settings.limits, context.connections)
        self.ctx = context
        self.service = context.service
        self._output = OrderedOutput(self, context.sample_rate,
                                     finish=self._finish, abort=self._abort,
                                     guard=GapGuard(context.settings.max_gap),
                                     write_silence=self.write_silence,
                                     lead_in_s=context.settings.lead_in_ms / 1000)
        #: This connection's requests that are not finished.
        self._requests: set[Request] = set()
        self._stream: OpenStream | None = None
        #: The server closes this connection (shutdown), not the client.
        self._closed_by_server = False

    # ---- connection hooks ------------------------------------------------------------

    def busy(self) -> bool:
        """Work in progress: audio being made or sent, a request not finished.

        An open stream alone does not count: a client that opens one and then says nothing
        for the whole idle timeout is gone (its concurrency slot is freed)."""
        streamed = self._stream.request if self._stream is not None else None
        return (self._output.busy
                or any(request.speech is not None and request.speech.busy
                       for request in self._requests)
                or any(request is not streamed for request in self._requests))

    async def on_wire_error(self, err: WireError) -> None:
        if err.fatal:
            await super().on_wire_error(err)
            return
        _LOGGER.warning("Bad frame from a client (%s): %s", err.code, err)
        stream = self._stream
        if err.event_type == _SYNTHESIZE_CHUNK and stream is not None:
            stream.request.fail()  # its text has a hole: the rest is not spoken
        self._decline(err.event_type, RequestError(str(err), err.code))

    async def disconnect(self) -> None:
        """The client went away: drop its pending work, keep nothing running for it."""
        self.ctx.metrics.closed(self)
        self._drop_work()
        self._output.cancel()

    async def cut_off(self, err: RequestError, flush_timeout: float) -> int:
        """The server stops before this connection's requests are done: each gets ``err``
        (``shutting-down``) and its end event (``audio-stop`` / ``synthesize-stopped``),
        what is already queued is written (bounded), then the server closes the
        connection. Returns how many requests were cut."""
        self._closed_by_server = True
        self._output.cancel_reason = err
        stream, self._stream = self._stream, None
        cut = 0
        open_stream = stream.request if stream is not None and stream.request.active else None
        for request in list(self._requests):
            # A one-shot's error is written with its cancelled piece, then its audio-stop.
            if request.speech is not None and request.speech.cancel() \
                    and request is not open_stream:
                cut += 1
        if stream is not None and open_stream is not None:
            # Mid-stream (no stop yet): its audio cycle is closed, then the error, the end.
            stream.request.fail()
            self._output.put(Reply([error_event(err), SynthesizeStopped().event()],
                                   ends=stream.request))
            cut += 1
        await self._output.flushed(flush_timeout)
        self.closed = True
        return cut

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
                self._decline(event.type, RequestError(problem, INVALID_EVENT))
            else:
                await self._dispatch(event)
        except OutputOverflow as err:
            self._overflow(err)
        except ConnectionError as err:
            _LOGGER.debug("Connection lost while handling %s: %s", event.type, err)
            return False
        except Exception:  # a bug must cost one request, never the connection or server
            _LOGGER.exception("Unexpected error while handling %s", event.type)
            self._decline(event.type, RequestError(
                f"Internal error while handling {event.type}", INTERNAL_ERROR))
        return not self.closed

    async def _dispatch(self, event: Event) -> None:
        try:
            parsed = parse_event(event)
        except RequestError as err:
            await self._on_unparsable(event.type, err)
            return
        if isinstance(parsed, DescribeRequest):
            self._reply(self.ctx.describe())
        elif isinstance(parsed, OneShot):
            await self._on_synthesize(parsed)
        elif isinstance(parsed, StreamStart):
            await self._on_stream_start(parsed)
        elif isinstance(parsed, StreamChunk):
            await self._on_stream_chunk(parsed)
        elif isinstance(parsed, StreamStop):
            await self._on_stream_stop()
        else:
            _LOGGER.debug("Ignoring event %r", event.type)

    async def _on_unparsable(self, event_type: str, err: RequestError) -> None:
        """A malformed event: a one-shot outside a stream and a stream start get the error;
        inside a stream, a malformed copy or chunk is ignored."""
        if event_type == _SYNTHESIZE and self._stream is None:
            self._decline(event_type, err)
        elif event_type == _SYNTHESIZE_START:
            await self._close_open_stream()
            self._refused_stream(err)
        else:
            _LOGGER.debug("Ignoring a malformed %s: %s", event_type, err)

    async def _on_synthesize(self, request: OneShot) -> None:
        stream = self._stream
        if stream is None:
            await self._start_one_shot(request.text, request.voice, ssml=request.ssml)
            return
        if self.ctx.settings.streaming:
            _LOGGER.debug("Ignoring the compatibility synthesize inside a stream")
            return
        # Streaming disabled: the compatibility copy is the real request of the stream.
        if not stream.request.active or stream.compat_text is not None:
            return
        stream.compat_text = request.text
        await self._start_one_shot(stream.compat_text, request.voice, fallback=stream)

    async def _start_one_shot(self, text: str, wish: VoiceWish | None,
                              fallback: OpenStream | None = None, ssml: bool = False) -> None:
        """``fallback``: the stream whose text this is (its voice and language, when the
        request names no voice)."""
        if wish is None and fallback is not None:
            voice: VoiceWish | VoicePreset | None = fallback.request.voice
            language = fallback.language
        else:
            voice, language = wish, wish.language if wish is not None else None
        try:
            said = await self.service.one_shot(text, voice, ssml=ssml, clock=PlayClock(),
                                               language=language)
        except RequestError as err:
            self._decline(_SYNTHESIZE, err)
            return
        if self.closed:  # the client left while the text was prepared
            if said is not None:
                said.speech.cancel()
                said.speech.close()
            return
        if said is None:  # nothing to say
            self._reply(*silent_cycle(self.ctx.sample_rate))
            return
        request = self._track(Kind.ONE_SHOT, said.speech.voice, said.speech)
        for index, piece in enumerate(said.pieces):
            last = index == len(said.pieces) - 1
            self._queue(request, piece, opens=index == 0, closes=last, ends_request=last)

    async def _on_stream_start(self, start: StreamStart) -> None:
        await self._close_open_stream()
        service = self.service
        language = start.voice.language if start.voice is not None else None
        try:
            if self.ctx.settings.streaming:
                speech = service.open_stream(start.voice, ssml=start.ssml, clock=PlayClock())
                request = self._track(Kind.STREAM, speech.voice, speech)
            else:  # the text is collected and spoken as one at the stop
                service.check_open()
                request = Request(kind=Kind.STREAM, voice=service.route(start.voice),
                                  pcm=self._pcm())
        except RequestError as err:
            self._refused_stream(err)
            return
        self._stream = OpenStream(request=request, language=language)

    async def _on_stream_chunk(self, chunk: StreamChunk) -> None:
        stream = self._stream
        if stream is None:
            _LOGGER.debug("synthesize-chunk without synthesize-start: ignored")
            return
        request = stream.request
        if not request.active:
            return
        speech = request.speech
        try:
            if speech is None:  # streaming disabled: the text is spoken as one at the stop
                stream.length += len(chunk.text)
                self.service.check_length(stream.length, streamed=True)
                stream.collected.append(chunk.text)
                return
            pieces = await speech.add_text(chunk.text)
        except RequestError as err:
            self._fail_stream(request, err)
            return
        if self.closed or not request.active:
            return
        self._queue_sentences(request, pieces)

    async def _on_stream_stop(self) -> None:
        stream = self._stream
        self._stream = None
        if stream is None:
            # A stray stop: acknowledge it so a waiting client does not hang.
            self._reply(SynthesizeStopped().event())
            return
        request = stream.request
        speech = request.speech
        if request.active and speech is not None:
            try:
                self._queue_sentences(request, speech.finish_text())
            except RequestError as err:  # half a character left at the end
                self._fail_stream(request, err)
            if request.active and not speech.spoke:
                # Nothing to say (blank text): a silent audio cycle all the same, as for a
                # one-shot; Home Assistant builds its WAV from audio-start (else: no file).
                self._reply(*silent_cycle(self.ctx.sample_rate))
        elif request.active and stream.compat_text is None and stream.collected:
            # Streaming disabled and no compatibility copy came: speak the collected text.
            await self._start_one_shot("".join(stream.collected), None, fallback=stream)
        self._output.put(Reply([SynthesizeStopped().event()], ends=request))

    async def _close_open_stream(self) -> None:
        if self._stream is not None:
            _LOGGER.debug("synthesize-start inside an open stream: finishing the old one")
            await self._on_stream_stop()

    def _refused_stream(self, err: RequestError) -> None:
        """A stream that will not be served: the error now, ``synthesize-stopped`` at its
        stop (its chunks are ignored)."""
        request = Request(kind=Kind.STREAM, voice=self.service.default_voice(),
                          pcm=self._pcm())
        request.fail()
        self._stream = OpenStream(request=request)
        self._reply(error_event(err))

    # ---- requests --------------------------------------------------------------------

    def _pcm(self) -> PcmBuffer:
        return PcmBuffer(self.ctx.settings.samples_per_chunk)

    def _track(self, kind: Kind, voice: VoicePreset, speech: Speech) -> Request:
        request = Request(kind=kind, voice=voice, pcm=self._pcm(), speech=speech,
                          clock=speech.clock or PlayClock())
        self._requests.add(request)
        return request

    def _finish(self, request: Request) -> None:
        request.finish()
        self._requests.discard(request)

    def _queue(self, request: Request, piece: AudioPiece, *, opens: bool, closes: bool,
               ends_request: bool) -> None:
        self._output.put(Piece(request=request, text=piece.text, task=piece.task,
                               opens=opens, closes=closes, ends_request=ends_request,
                               source=piece))

    def _queue_sentences(self, request: Request, pieces: list[AudioPiece]) -> None:
        """A stream's pieces: each sentence its own audio cycle; the request ends at the stop."""
        for piece in pieces:
            self._queue(request, piece, opens=piece.starts_sentence,
                        closes=piece.ends_sentence, ends_request=False)

    def _fail_stream(self, request: Request, err: RequestError) -> None:
        """A stream's text refused: the error now, nothing more spoken, the end at its stop."""
        request.fail()
        self._reply(error_event(err))

    # ---- replies, refusals and the end of a connection -------------------------------

    def _reply(self, *events: Event) -> None:
        self._output.put(Reply(list(events)))

    def _decline(self, event_type: str | None, err: RequestError) -> None:
        """Answer a request that will not be served: an ``error``, and for a one-shot
        ``synthesize`` outside a stream its ending (an empty audio cycle) too."""
        events = [error_event(err)]
        if event_type == _SYNTHESIZE and self._stream is None:
            events += empty_cycle(self.ctx.sample_rate)
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
        cancelled = sum(request.speech.cancel() for request in self._requests
                        if request.speech is not None)
        if cancelled:
            who = "The server closed the connection (shutting down)" \
                if self._closed_by_server else "Client disconnected"
            _LOGGER.info("%s: cancelled %d pending piece(s)", who, cancelled)
        for request in list(self._requests):
            self._finish(request)
