"""The speech service: the one path from any protocol to the synthesis worker.

The Wyoming handler and the web studio both hand it typed requests and get audio back; it
owns everything between: the inference worker (its queue and batching), text preparation
(cleanup, sentences, normalisation on the text thread), voice routing, the voices' anchors
and clone prompts (through the request builder), request admission (``--max-concurrent``)
and the draining flag of a shutdown.

A request's life:

1. :meth:`SpeechService.check_open` / :meth:`SpeechService.check_length` refuse it early
   (``shutting-down``, ``text-too-long``); :meth:`SpeechService.route` picks its voice.
2. :meth:`SpeechService.admit` gives it a slot (or ``busy``) as a :class:`.pieces.Speech`.
3. Each piece of text becomes an :class:`.pieces.AudioPiece` (:meth:`Speech.say`, or
   sentence by sentence from streamed text: :meth:`Speech.add_text`,
   :meth:`Speech.finish_text`), made by :meth:`SpeechService.produce`. The pieces of one
   request are decoded in order: piece N+1 is submitted once piece N was taken by the
   worker, so N+1 decodes while N is being sent.
   How much text each piece speaks is paced (:mod:`.pacing`): text is queued as clauses
   and sentences, and a piece about to go to the worker takes the queued text after it
   that this host decodes before the client runs out of audio (those pieces are
   *absorbed*: their audio is empty, ``AudioPiece.absorbed``; the piece's ``run`` says
   how many it speaks).
4. :meth:`Speech.close` frees the slot; :meth:`Speech.cancel` drops what is still pending
   (the client went away).

Everything here runs on the event loop thread, except the work handed to the text thread
and the worker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from wyoming_omnivoice.speech.admission import Demand, RequestSlots
from wyoming_omnivoice.speech.errors import BUSY, SHUTTING_DOWN, TEXT_TOO_LONG, RequestError
from wyoming_omnivoice.speech.pacing import PlayClock
from wyoming_omnivoice.speech.pcm import Audio
from wyoming_omnivoice.speech.pieces import AudioPiece, Speech
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.speech.requests import Override, SpeechSettings, VoiceWish
from wyoming_omnivoice.speech.text_thread import TextThread
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.text.prepare import prepare_one_shot
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice.engine import Engine
    from wyoming_omnivoice.voices.watch import NewVoice

_LOGGER = logging.getLogger(__name__)

T = TypeVar("T")

class SpeechService:
    """Text in, audio out, for every protocol (see the module docstring)."""

    def __init__(self, worker: InferenceWorker, catalog: VoiceCatalog,
                 make_request: RequestBuilder, settings: SpeechSettings, *,
                 demand: Demand | None = None,
                 look_for_voices: Callable[[set[str]], None] | None = None,
                 text: TextThread | None = None) -> None:
        self.settings = settings
        self.worker = worker
        self._catalog = catalog
        self._make_request = make_request
        self._look_for_voices = look_for_voices
        self.text = text or TextThread()
        self.slots = RequestSlots(settings.max_concurrent)
        #: Requests with a piece queued or decoding (the worker's batch window reads it).
        self.demand = demand if demand is not None else Demand()
        #: Set on SIGTERM/SIGINT: requests in progress finish, new ones are refused.
        self.draining = False

    # ---- state -----------------------------------------------------------------------

    @property
    def sample_rate(self) -> int:
        return self.settings.sample_rate

    @property
    def catalog(self) -> VoiceCatalog:
        """The voices served now (voice folders added while running included)."""
        return self._catalog

    @property
    def healthy(self) -> bool:
        """The synthesis worker runs (a dead worker fails health checks)."""
        return self.worker.alive

    @property
    def active(self) -> int:
        """Requests in service."""
        return self.slots.active

    def add_voices(self, found: Iterable[NewVoice], prompts: dict[str, Any]) -> None:
        """Voices found while running join the catalogue (their clone prompts in ``prompts``,
        the request builder's table)."""
        found = list(found)
        for voice in found:
            prompts[voice.preset.name] = voice.prompt
        self._catalog = self._catalog.merged(voice.preset for voice in found)

    def add_presets(self, presets: Iterable[VoicePreset]) -> None:
        """Voices saved while running (the voice studio) join the catalogue, or replace the
        voice of their name; their anchors and prompts are in the request builder's tables."""
        self._catalog = self._catalog.merged(presets)

    def remove_voice(self, name: str) -> None:
        """A voice leaves the catalogue (never the default voice)."""
        if name == self.settings.default_voice:
            raise ValueError(f"{name!r} is the default voice (--voice); it cannot be removed")
        self._catalog = VoiceCatalog(p for p in self._catalog if p.name != name)

    def look_for_voices(self) -> None:
        """Give the voice-folder watcher a chance to find new voices (never blocks)."""
        if self._look_for_voices is None:
            return
        try:
            self._look_for_voices(set(self._catalog.names))
        except Exception:
            _LOGGER.exception("Looking for new voices failed")

    # ---- refusing, routing, preparing ------------------------------------------------

    def check_open(self) -> None:
        if self.draining:
            raise RequestError("The server is shutting down; try again shortly", SHUTTING_DOWN)

    def check_length(self, length: int, *, streamed: bool = False) -> None:
        limit = self.settings.max_text_length
        if length <= limit:
            return
        if streamed:
            raise RequestError(f"Streamed text exceeds {limit} characters "
                               "(--max-text-length)", TEXT_TOO_LONG)
        raise RequestError(f"Text is {length} characters long; the limit is {limit} "
                           "(--max-text-length)", TEXT_TOO_LONG)

    def default_voice(self) -> VoicePreset:
        return self._catalog.route(self.settings.default_voice).preset

    def route(self, wish: VoiceWish | None) -> VoicePreset:
        """The voice for a request (an unknown name: the best voice of its language)."""
        route = self._catalog.route(
            self.settings.default_voice,
            name=wish.name if wish is not None else None,
            language=wish.language if wish is not None else None)
        if route.note:
            _LOGGER.warning("%s", route.note)
        return route.preset

    async def prepare_one_shot(self, text: str, *, ssml: bool = False) -> list[str]:
        """The pieces a one-shot text is spoken in; empty when there is nothing to say."""
        return await self.text.prepare(len(text), prepare_one_shot, text, ssml=ssml,
                                       first_clause=self.settings.first_clause, group=False)

    # ---- requests --------------------------------------------------------------------

    def admit(self, voice: VoicePreset, *, ssml: bool = False, streamed: bool = False,
              override: Override | None = None, clock: PlayClock | None = None,
              language: str | None = None) -> Speech:
        """A slot for one request, or ``busy``. ``clock``: when its client runs out of
        audio (kept by the protocol side as it sends audio); with it, later pieces are
        paced to decode before then, without it they are as long as allowed.
        ``language``: the language tag the request named (``pt-BR``: Brazilian readings
        with a Portuguese voice), if any."""
        speech = Speech(self, voice, ssml=ssml, streamed=streamed, override=override,
                        clock=clock, language=language)
        if not self.slots.try_acquire(speech):
            raise RequestError(f"Server busy: {self.slots.limit} requests in progress "
                               "(--max-concurrent); try again shortly", BUSY)
        return speech

    async def synthesize(self, text: str, voice: VoicePreset, *, ssml: bool = False,
                         override: Override | None = None) -> Audio:
        """The whole text as one float32 array (a preview, an HTTP request): the same
        admission, text preparation, worker and batching as a Wyoming one-shot request."""
        self.check_open()
        self.check_length(len(text))
        pieces = await self.prepare_one_shot(text, ssml=ssml)
        if not pieces:
            return np.zeros(0, dtype=np.float32)
        speech = self.admit(voice, ssml=ssml, override=override)
        try:
            said = [piece for text in pieces for piece in speech.say_sentence(text)]
            audio = [await piece.audio() for piece in said]
        except BaseException:
            speech.cancel()
            raise
        finally:
            speech.close()
        return np.concatenate(audio).astype(np.float32, copy=False)

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread, between batches."""
        return await asyncio.wrap_future(self.worker.call(run))

    async def produce(self, speech: Speech, piece: AudioPiece,
                       previous: asyncio.Future[None] | None,
                       started: asyncio.Future[None]) -> Audio:
        """Submit after the previous piece of the request started; return its audio."""
        job = None
        try:
            if previous is not None:
                await asyncio.wait([previous])
            if not speech.active:
                raise asyncio.CancelledError
            if piece.absorbed:  # an earlier piece speaks this text
                return np.zeros(0, dtype=np.float32)
            text, predicted = speech.plan(piece)
            # Normalisation is text work of unknown cost: off the event loop.
            request = await self.text.run(self._make_request, speech.voice, text,
                                          speech.language)
            if speech.override is not None:
                request = speech.override.apply(request)
            if not speech.active:
                raise asyncio.CancelledError
            job = self.worker.submit(request)
            await asyncio.wait([job.started])
            predicted.started = time.monotonic()
            speech.planned = predicted
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

    def close(self) -> None:
        self.text.close()


__all__ = ["Audio", "AudioPiece", "Override", "RequestBuilder", "Speech", "SpeechService",
           "SpeechSettings", "VoiceWish"]
