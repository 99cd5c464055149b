"""The web server's way to synthesis: the speech service and the voice library, the same
as Wyoming requests.

:class:`StudioSpeech` is the one file between the web server and the speech service.
Saved voices' requests and the OpenAI endpoint go through
:meth:`~wyoming_omnivoice.speech.SpeechService.one_shot`, the entry a Wyoming one-shot
takes (admission, text preparation, request builder, worker and batching), and wait for
every piece's audio. A take's preview is the same call with an ``Override``: the take's
anchor or encoded recording in place of the voice's reference (the seed,
``--deterministic``'s, still comes from the voice's name and the text). Voices saved,
edited or deleted change the one :class:`~wyoming_omnivoice.voices.library.VoiceLibrary`
(``voices``), which every protocol reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from wyoming_omnivoice.speech import Audio, Override, SpeechService, VoiceWish
from wyoming_omnivoice.voices import VoiceCatalog, VoiceLibrary, VoicePreset

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
                 data_dir: Path) -> None:
        self.service = service
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

    def route(self, wish: VoiceWish) -> VoicePreset:
        return self.service.route(wish)

    async def anchor_of(self, preset: VoicePreset) -> Anchor | None:
        """The anchor a designed voice speaks with, built now (on the worker) when it was not
        preloaded; None for a voice without one."""
        return await asyncio.to_thread(self.voices.anchor_of, preset)

    async def synthesize(self, text: str, preset: VoicePreset, *,
                         reference: Reference | None = None) -> Audio:
        """The audio of ``text`` in ``preset``, as a Wyoming one-shot request gets it (with
        ``reference`` in place of the voice's own). Raises the service's RequestError."""
        override = None
        if reference is not None:
            override = Override(ref_codes=reference.codes, ref_text=reference.text,
                                ref_rms=getattr(reference, "rms", None))
        said = await self.service.one_shot(text, preset, override=override)
        if said is None:  # nothing to say
            return np.zeros(0, dtype=np.float32)
        try:
            audio = [await piece.audio() for piece in said.pieces]
        except BaseException:
            said.speech.cancel()
            raise
        finally:
            said.speech.close()
        return np.concatenate(audio).astype(np.float32, copy=False)

    def take_codes(self, engine: Engine, request: SynthesisRequest
                   ) -> tuple[np.ndarray[Any, np.dtype[Any]], str]:
        """A design take's codes and how they were made (on the engine's thread), decoded
        like the server's anchors (canonical where it makes canonical ones), so a first take
        is the very anchor the voice would get, on any replica."""
        codes, made_with = self.voices.anchor_codes(engine, request, self.options)
        return np.asarray(codes), made_with

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread (between batches)."""
        return await self.service.on_engine(run)
