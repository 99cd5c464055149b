"""The speech service: the one path from any protocol to the synthesis worker.

The Wyoming handler and the HTTP side both hand it typed requests and get audio pieces back;
it owns everything between: the inference worker (its queue and batching), text preparation
(cleanup, sentences, normalisation on the text thread), request admission
(``--max-concurrent``) and the draining flag of a shutdown. The voices come from the one
:class:`~wyoming_omnivoice.voices.library.VoiceLibrary` (routing, each voice's reference,
live changes), which it asks and never copies.

Two entries, one per kind of request:

- :meth:`SpeechService.one_shot`: a whole text. Refused early (``shutting-down``,
  ``text-too-long``, ``text-invalid``: :mod:`.text.characters`), its voice routed, its turn
  waited for in a line when it comes with one (the HTTP side's:
  :class:`.admission.WaitingLine`), its text prepared into pieces (on the text thread when
  long), a slot given (or ``busy``): a :class:`.pieces.Speech` with every piece handed over
  (``OneShotSpeech``), or None when there is nothing to say.
- :meth:`SpeechService.open_stream`: streamed text. Refused early, routed, admitted: a
  :class:`.pieces.Speech` that makes pieces sentence by sentence
  (:meth:`Speech.add_text`, :meth:`Speech.finish_text`), each chunk checked as it comes
  (the same characters check, over the whole stream).

The Speech makes its own pieces (planning, the engine request, the worker: :mod:`.pieces`);
:meth:`Speech.close` frees the slot; :meth:`Speech.cancel` drops what is still pending (the
client went away).

Everything here runs on the event loop thread, except the work handed to the text thread
and the worker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from wyoming_omnivoice.speech.admission import Demand, RequestSlots, WaitingLine
from wyoming_omnivoice.speech.errors import (
    BUSY,
    SHUTTING_DOWN,
    RequestError,
    check_text_length,
    checked_text,
)
from wyoming_omnivoice.speech.pacing import PlayClock
from wyoming_omnivoice.speech.pieces import AudioPiece, PieceTools, Speech
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.speech.requests import Override, SpeechSettings, VoiceWish
from wyoming_omnivoice.speech.text_thread import TextThread
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.text.prepare import prepare_one_shot
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.library import VoiceLibrary

if TYPE_CHECKING:
    from wyoming_omnivoice.engine import Engine

_LOGGER = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class OneShotSpeech:
    """An admitted one-shot request: its Speech and every piece it speaks, in order."""

    speech: Speech
    pieces: list[AudioPiece]


class SpeechService:
    """Text in, audio out, for every protocol (see the module docstring)."""

    def __init__(self, worker: InferenceWorker, voices: VoiceLibrary,
                 make_request: RequestBuilder, settings: SpeechSettings, *,
                 demand: Demand | None = None, text: TextThread | None = None) -> None:
        self.settings = settings
        self.worker = worker
        #: The voices being served (the one owner: routing, references, live changes).
        self.voices = voices
        self.text = text or TextThread()
        self.slots = RequestSlots(settings.max_concurrent)
        #: Requests with a piece queued or decoding (the worker's batch window reads it).
        self.demand = demand if demand is not None else Demand()
        self._tools = PieceTools(settings, worker, self.text, make_request, self.slots,
                                 self.demand, voices)
        #: Set on SIGTERM/SIGINT: requests in progress finish, new ones are refused.
        self.draining = False

    # ---- state -----------------------------------------------------------------------

    @property
    def sample_rate(self) -> int:
        return self.settings.sample_rate

    @property
    def catalog(self) -> VoiceCatalog:
        """The voices served now (the library's; voices added while running included)."""
        return self.voices.catalog

    @property
    def healthy(self) -> bool:
        """The synthesis worker runs (a dead worker fails health checks)."""
        return self.worker.alive

    @property
    def active(self) -> int:
        """Requests in service."""
        return self.slots.active

    def look_for_voices(self) -> None:
        """Give the voice-folder watcher a chance to find new voices (never blocks)."""
        self.voices.look_for_voices()

    # ---- refusing, routing -----------------------------------------------------------

    def check_open(self) -> None:
        if self.draining:
            raise RequestError("The server is shutting down; try again shortly", SHUTTING_DOWN)

    def check_length(self, length: int, *, streamed: bool = False) -> None:
        check_text_length(length, self.settings.max_text_length, streamed=streamed)

    def default_voice(self) -> VoicePreset:
        return self.voices.default()

    def route(self, wish: VoiceWish | None) -> VoicePreset:
        """The voice for a request (an unknown name: the best voice of its language)."""
        if wish is None:
            return self.voices.route()
        return self.voices.route(wish.name, wish.language)

    # ---- the two entries -------------------------------------------------------------

    async def one_shot(self, text: str, voice: VoiceWish | VoicePreset | None, *,
                       ssml: bool = False, language: str | None = None,
                       override: Override | None = None, clock: PlayClock | None = None,
                       line: WaitingLine | None = None) -> OneShotSpeech | None:
        """A whole text, admitted with every piece handed over; None when there is nothing
        to say. ``voice``: a wish to route, or the voice itself (a stream's). ``clock``:
        when its client runs out of audio (kept by the protocol as it sends audio); with
        it, later pieces are paced to decode before then, without it they are as long as
        allowed. ``language``: the tag the request named (``pt-BR``), if any. ``line``: the
        request waits its turn in it before it takes a slot (the HTTP side's). Raises
        RequestError (``shutting-down``, ``text-too-long``, ``text-invalid``, ``busy``)
        before any work is queued."""
        self.check_open()
        self.check_length(len(text))
        text = checked_text(text)
        preset = voice if isinstance(voice, VoicePreset) else self.route(voice)
        if line is not None:
            await line.enter()
        try:
            texts = await self.text.prepare(len(text), prepare_one_shot, text, ssml=ssml,
                                            first_clause=self.settings.first_clause,
                                            group=False)
            if not texts:
                _LOGGER.debug("Nothing to say in %r", text)
                if line is not None:
                    line.leave()
                return None
            speech = self._admit(preset, ssml=ssml, streamed=False, override=override,
                                 clock=clock, language=language, line=line)
        except BaseException:
            if line is not None:
                line.leave()
            raise
        _LOGGER.debug("One-shot with voice %s in %d piece(s)", preset.name, len(texts))
        pieces = [piece for piece_text in texts for piece in speech.say_sentence(piece_text)]
        return OneShotSpeech(speech, pieces)

    def open_stream(self, wish: VoiceWish | None, *, ssml: bool = False,
                    clock: PlayClock | None = None) -> Speech:
        """Streamed text, admitted: its pieces come sentence by sentence
        (:meth:`Speech.add_text`, :meth:`Speech.finish_text`). Raises RequestError
        (``shutting-down``, ``busy``)."""
        self.check_open()
        preset = self.route(wish)
        language = wish.language if wish is not None else None
        speech = self._admit(preset, ssml=ssml, streamed=True, clock=clock, language=language)
        _LOGGER.debug("Stream with voice %s", preset.name)
        return speech

    def _admit(self, voice: VoicePreset, *, ssml: bool, streamed: bool,
               override: Override | None = None, clock: PlayClock | None = None,
               language: str | None = None, line: WaitingLine | None = None) -> Speech:
        """A slot for one request, or ``busy`` (``line``: its turn, left when it closes)."""
        speech = Speech(self._tools, voice, ssml=ssml, streamed=streamed, override=override,
                        clock=clock, language=language, line=line)
        if not self.slots.try_acquire(speech):
            raise RequestError(f"Server busy: {self.slots.limit} requests in progress "
                               "(--max-concurrent); try again shortly", BUSY)
        return speech

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread, between batches."""
        return await asyncio.wrap_future(self.worker.call(run))

    def close(self) -> None:
        self.text.close()
