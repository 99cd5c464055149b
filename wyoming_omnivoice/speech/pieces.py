"""One admitted request of the speech service: a :class:`Speech` and its pieces.

A :class:`Speech` (made by :meth:`.service.SpeechService.one_shot` or
:meth:`.service.SpeechService.open_stream`) holds a request's voice, its slot and its
pieces, and makes them itself: each piece of text is an :class:`AudioPiece`
(:meth:`Speech.say`, :meth:`Speech.say_sentence`, or sentence by sentence from streamed
text: :meth:`Speech.add_text`, :meth:`Speech.finish_text`) whose task
(:meth:`Speech._produce`) plans it, builds its engine request on the text thread and
submits it to the worker (a voice's anchor still to build is built in that job, on the
worker's thread): the pieces of one request are decoded in order, piece N+1
submitted once piece N was taken by the worker. How much text each piece speaks is paced
(:meth:`Speech.plan`, :mod:`.pacing`); a piece whose text an earlier one speaks is
*absorbed* (its audio is empty). :meth:`Speech.close` frees the slot; :meth:`Speech.cancel`
drops what is still pending. What every Speech of a service makes its pieces with (the
worker, the text thread, the request builder, the slots and the demand) is one
:class:`PieceTools`.

Everything here runs on the event loop thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from wyoming_omnivoice.speech.admission import Demand, RequestSlots, WaitingLine
from wyoming_omnivoice.speech.errors import check_text_length, text_invalid
from wyoming_omnivoice.speech.jobs import Job
from wyoming_omnivoice.speech.pacing import (
    PlannedPiece,
    PlayClock,
    Unit,
    audio_seconds,
    joined_frames,
    piece_frames,
    plan_piece,
    units_of,
)
from wyoming_omnivoice.speech.pcm import Audio
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.speech.requests import Override, SpeechSettings
from wyoming_omnivoice.speech.text_thread import TextThread
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.text.characters import StreamCharacters, TextRefused
from wyoming_omnivoice.text.prepare import feed, prepare_streamed_sentence
from wyoming_omnivoice.text.sentences import SentenceSplitter
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.library import VoiceLibrary

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class PieceTools:
    """What every :class:`Speech` of a service makes its pieces with (one per service)."""

    settings: SpeechSettings
    worker: InferenceWorker
    text: TextThread
    make_request: RequestBuilder
    slots: RequestSlots
    demand: Demand
    #: The voices served: a voice's anchor still to build is built in the request's job.
    voices: VoiceLibrary


class AudioPiece:
    """One piece of text of a request (a clause or a sentence) and the task that makes its
    audio."""

    def __init__(self, unit: Unit, *, starts_sentence: bool = True) -> None:
        self.unit = unit
        self.text = unit.text
        #: The first / last piece of its sentence (a stream's audio cycle).
        self.starts_sentence = starts_sentence
        self.ends_sentence = unit.ends_sentence
        self.task: asyncio.Task[Audio]  # set by Speech._say, which makes it
        #: An earlier piece speaks this one's text (its audio is empty).
        self.absorbed = False
        #: How many pieces this one speaks (itself and the absorbed ones after it).
        self.run = 1

    async def audio(self) -> Audio:
        return await self.task


class Speech:
    """One admitted request (a one-shot text or a stream): its pieces, in order."""

    def __init__(self, tools: PieceTools, voice: VoicePreset, *, ssml: bool,
                 streamed: bool, override: Override | None = None,
                 clock: PlayClock | None = None, language: str | None = None,
                 line: WaitingLine | None = None) -> None:
        self._tools = tools
        #: The line whose turn this request holds until it closes (the HTTP side's).
        self._line = line
        #: When the client runs out of audio (None: not paced, e.g. a whole-text request).
        self.clock = clock
        #: What the pacing predicted for the piece the worker took last.
        self.planned: PlannedPiece | None = None
        #: Pieces handed over but not yet planned, in order.
        self._waiting: list[AudioPiece] = []
        self.voice = voice
        #: The language tag the request named, if any (the request builder reads with it).
        self.language = language
        self.override = override
        self.ssml = ssml
        self.streamed = streamed
        #: Characters received so far (streams are bounded by --max-text-length too).
        self.text_length = 0
        self.active = True
        self._closed = False
        self._last_started: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[Audio]] = set()
        self._splitter = SentenceSplitter(first_clause=tools.settings.first_clause)
        #: The entry check of streamed text (characters, over the whole stream).
        self._characters = StreamCharacters()

    @property
    def spoke(self) -> bool:
        """At least one piece was handed over."""
        return self._last_started is not None

    @property
    def busy(self) -> bool:
        """A piece is still being made."""
        return any(not task.done() for task in self._tasks)

    def say(self, text: str) -> AudioPiece:
        """Speak ``text`` (prepared already) after the pieces before it, as one piece that
        ends a sentence (the pacing may still let it speak what follows)."""
        return self._say(Unit(text, True, piece_frames(text)))

    def say_sentence(self, text: str) -> list[AudioPiece]:
        """Speak one sentence (prepared already) as its clauses: pieces the pacing joins
        again into whole sentences whenever this host is fast enough."""
        units = units_of(text)
        return [self._say(unit, starts_sentence=index == 0) for index, unit in
                enumerate(units)]

    def _say(self, unit: Unit, *, starts_sentence: bool = True) -> AudioPiece:
        loop = asyncio.get_running_loop()
        previous = self._last_started
        started: asyncio.Future[None] = loop.create_future()
        self._last_started = started
        piece = AudioPiece(unit, starts_sentence=starts_sentence)
        self._waiting.append(piece)
        self._tools.demand.enter(self)
        piece.task = loop.create_task(self._produce(piece, previous, started))
        self._tasks.add(piece.task)
        piece.task.add_done_callback(self._piece_done)
        return piece

    async def _produce(self, piece: AudioPiece, previous: asyncio.Future[None] | None,
                       started: asyncio.Future[None]) -> Audio:
        """Submit ``piece`` after the previous piece of the request started (was taken by
        the worker); return its audio."""
        tools = self._tools
        job = None
        try:
            if previous is not None:
                await asyncio.wait([previous])
            if not self.active:
                raise asyncio.CancelledError
            if piece.absorbed:  # an earlier piece speaks this text
                return np.zeros(0, dtype=np.float32)
            text, predicted = self.plan(piece)
            # Normalisation is text work of unknown cost: off the event loop.
            request = await tools.text.run(tools.make_request, self.voice, text,
                                           self.language)
            if self.override is not None:
                request = self.override.apply(request)
            if not self.active:
                raise asyncio.CancelledError
            job = self._submit(request)
            await asyncio.wait([job.started])
            predicted.started = time.monotonic()
            self.planned = predicted
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

    def _submit(self, request: SynthesisRequest) -> Job:
        """``request`` to the worker: once, with the building of its voice's anchor in its
        own job when the anchor is still to build (and the request has no other reference)."""
        worker, voices = self._tools.worker, self._tools.voices
        if voices.anchor_missing(self.voice) and request.ref_codes is None:
            return worker.submit(request, prepare=partial(voices.with_anchor, self.voice))
        return worker.submit(request)

    def plan(self, piece: AudioPiece) -> tuple[str, PlannedPiece]:
        """The text ``piece`` speaks: its own and the waiting pieces after it that this host
        decodes before the client runs out of audio (:func:`.pacing.plan_piece`)."""
        queued = self._waiting
        waiting = queued[queued.index(piece):] if piece in queued else [piece]
        now = time.monotonic()
        if self.clock is None:
            budget = None if self.planned is None else float("inf")
        else:
            budget = None if self.planned is None else \
                self.planned.budget(now, self.clock.runs_out)
        speed = self._tools.worker.speed
        count = plan_piece([p.unit for p in waiting], budget, speed)
        taken = waiting[:count]
        for other in taken[1:]:
            other.absorbed = True
        piece.run = count
        self._waiting = [p for p in queued if p not in taken]
        text = " ".join(p.text for p in taken)
        frames = joined_frames([p.unit for p in taken])
        predicted = PlannedPiece(started=now, decode_s=speed.predict(frames),
                                 audio_s=audio_seconds(text))
        _LOGGER.debug("Pacing: a piece of %d unit(s), %d frames, predicted decode %.2f s, "
                      "budget %s", count, frames, predicted.decode_s,
                      "(first piece)" if budget is None else f"{budget:.2f} s")
        return text, predicted

    async def add_text(self, chunk: str) -> list[AudioPiece]:
        """Streamed text: the pieces of the sentences it completes (``text-too-long`` past
        the limit, counted over the whole stream; ``text-invalid`` for a character that
        cannot be spoken, :mod:`.text.characters`)."""
        self.text_length += len(chunk)
        check_text_length(self.text_length, self._tools.settings.max_text_length,
                          streamed=True)
        try:
            chunk = self._characters.add(chunk)
        except TextRefused as err:
            raise text_invalid(err) from None
        sentences = await self._tools.text.prepare(len(chunk), feed, self._splitter, chunk)
        if not self.active:
            return []
        return self._say_sentences(sentences)

    def finish_text(self) -> list[AudioPiece]:
        """The end of streamed text: the pieces of what is left (``text-invalid`` when its
        last chunk ended with half a character that never got its other half)."""
        try:
            self._characters.finish()
        except TextRefused as err:
            raise text_invalid(err) from None
        return self._say_sentences(self._splitter.finish())

    def _say_sentences(self, sentences: list[str]) -> list[AudioPiece]:
        pieces = []
        for sentence in sentences:
            text = prepare_streamed_sentence(sentence, ssml=self.ssml)
            if text is not None:
                pieces += self.say_sentence(text)
        return pieces

    def _piece_done(self, task: asyncio.Task[Audio]) -> None:
        self._tasks.discard(task)
        self._tools.demand.leave(self)
        if not task.cancelled():
            task.exception()  # retrieved here; whoever awaits the piece reports it

    def stop(self) -> None:
        """No further pieces are submitted (the request failed); running ones finish."""
        self.active = False

    def cancel(self) -> int:
        """Stop and cancel every piece still pending; how many were cancelled."""
        self.active = False
        pending = [task for task in self._tasks if not task.done() and not task.cancelling()]
        for task in pending:
            task.cancel()
        return len(pending)

    def close(self) -> None:
        """The request is over: its slot is free (idempotent)."""
        if not self._closed:
            self._closed = True
            self._tools.slots.release(self)
            if self._line is not None:
                self._line.leave()
