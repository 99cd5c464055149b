"""The web server's way to synthesis: the speech service and the voice library, the same
as Wyoming requests.

:class:`StudioSpeech` is the one file between the web server and the speech service, and
a request goes through it once, downwards: the OpenAI endpoint and a saved voice's preview
hand :meth:`StudioSpeech.speak` the text and the voice asked for; it routes the voice
(``speed`` scales the voice's), and the request takes
:meth:`~wyoming_omnivoice.speech.SpeechService.one_shot`, the entry a Wyoming one-shot takes
(admission, text preparation, request builder, worker and batching), then waits for every
piece's audio. The HTTP side's admission is the service's, with a line of its own
(:attr:`StudioSpeech.line`: ``max_synthesis`` at once, ``max_waiting`` waiting, more:
``busy``), which the studio's other engine work (takes, recordings encoded) waits in too
(:meth:`StudioSpeech.on_engine`). A take's preview is the same call with a reference: the
take's anchor or encoded recording in place of the voice's (an ``Override``; the seed,
``--deterministic``'s, still comes from the voice's name and the text). Voices saved,
edited or deleted change the one :class:`~wyoming_omnivoice.voices.library.VoiceLibrary`
(``voices``), which every protocol reads.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from wyoming_omnivoice.speech import Audio, Override, SpeechService, VoiceWish, WaitingLine
from wyoming_omnivoice.voices import VoiceCatalog, VoiceLibrary, VoicePreset
from wyoming_omnivoice.web.options import WebLimits

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
    from wyoming_omnivoice.voices import Anchor

T = TypeVar("T")


class Reference(Protocol):
    """What replaces a voice's reference: codes and the text they say (a recording's
    ``rms`` too, when it has one)."""

    @property
    def codes(self) -> np.ndarray[Any, np.dtype[Any]]: ...

    @property
    def text(self) -> str: ...


class StudioSpeech:
    """Synthesis, engine calls and the voice library, for the web server."""

    def __init__(self, service: SpeechService, *, options: DecodeOptions, fingerprint: str,
                 data_dir: Path, limits: WebLimits | None = None) -> None:
        limits = limits or WebLimits()
        self.service = service
        #: The HTTP side's turn: its syntheses and other engine work, a few at a time.
        self.line = WaitingLine(limits.max_synthesis, limits.max_waiting,
                                what="HTTP syntheses",
                                limit_name="web synthesis queue limit")
        #: The voices being served (the service's library: one for every protocol).
        self.voices: VoiceLibrary = service.voices
        self.options = options
        self.fingerprint = fingerprint
        self.data_dir = data_dir

    @property
    def catalog(self) -> VoiceCatalog:
        return self.voices.catalog

    @property
    def sample_rate(self) -> int:
        return self.service.sample_rate

    @property
    def default_voice(self) -> str:
        return self.voices.default_voice

    @property
    def model_notes(self) -> tuple[str, ...]:
        return self.service.settings.model_notes

    async def anchor_of(self, preset: VoicePreset) -> Anchor | None:
        """The anchor a designed voice speaks with, built now (on the worker) when it was not
        preloaded; None for a voice without one."""
        return await asyncio.to_thread(self.voices.anchor_of, preset)

    async def speak(self, text: str, voice: VoiceWish | VoicePreset, *, speed: float = 1.0,
                    reference: Reference | None = None) -> tuple[Audio, VoicePreset]:
        """The audio of ``text`` in ``voice`` (a wish is routed; ``speed`` scales the voice's
        own), as a Wyoming one-shot request gets it (with ``reference`` in place of the
        voice's own), and the voice that spoke. Raises the service's RequestError."""
        preset = voice if isinstance(voice, VoicePreset) else self.service.route(voice)
        if speed != 1.0:
            preset = dataclasses.replace(preset, speed=(preset.speed or 1.0) * speed)
        override = None
        if reference is not None:
            override = Override(ref_codes=reference.codes, ref_text=reference.text,
                                ref_rms=getattr(reference, "rms", None))
        said = await self.service.one_shot(text, preset, override=override, line=self.line)
        if said is None:  # nothing to say
            return np.zeros(0, dtype=np.float32), preset
        try:
            audio = [await piece.audio() for piece in said.pieces]
        except BaseException:
            said.speech.cancel()
            raise
        finally:
            said.speech.close()
        return np.concatenate(audio).astype(np.float32, copy=False), preset

    def take_codes(self, engine: Engine, request: SynthesisRequest
                   ) -> tuple[np.ndarray[Any, np.dtype[Any]], str]:
        """A design take's codes and how they were made (on the engine's thread), decoded
        like the server's anchors (canonical where it makes canonical ones), so a first take
        is the very anchor the voice would get, on any replica."""
        codes, made_with = self.voices.anchor_codes(engine, request, self.options)
        return np.asarray(codes), made_with

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread (between batches), in the HTTP side's turn."""
        async with self.line.turn():
            return await self.service.on_engine(run)
