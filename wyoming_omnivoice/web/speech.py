"""The web server's way to synthesis: the speech service, the same as Wyoming requests.

:class:`StudioSpeech` is the one file between the web server and
:class:`~wyoming_omnivoice.speech.service.SpeechService`. Saved voices' requests and the
OpenAI endpoint go through :meth:`SpeechService.synthesize` unchanged (admission, text
preparation, request builder, worker and batching of a Wyoming one-shot). A take's preview
is the same call with an ``Override``: the take's anchor or encoded recording in place of
the voice's reference (the seed, ``--deterministic``'s, still comes from the voice's name
and the text).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.speech.pcm import Audio
from wyoming_omnivoice.speech.request_builder import RequestBuilder
from wyoming_omnivoice.speech.service import Override, SpeechService, VoiceWish
from wyoming_omnivoice.voices.assets import VoiceAssets
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest, VoicePrompt

T = TypeVar("T")


class Reference(Protocol):
    """What replaces a voice's reference: codes and the text they say (a recording's
    ``rms`` too, when it has one)."""

    @property
    def codes(self) -> np.ndarray[Any, np.dtype[Any]]: ...

    @property
    def text(self) -> str: ...


class StudioSpeech:
    """Synthesis, engine calls and live catalogue changes for the web server."""

    def __init__(self, service: SpeechService, *, assets: VoiceAssets,
                 make_request: RequestBuilder, options: DecodeOptions, fingerprint: str,
                 data_dir: Path) -> None:
        self.service = service
        self._assets = assets
        self._make_request = make_request
        self.options = options
        self.fingerprint = fingerprint
        self.data_dir = data_dir

    @property
    def catalog(self) -> VoiceCatalog:
        return self.service.catalog

    @property
    def sample_rate(self) -> int:
        return self.service.sample_rate

    @property
    def default_voice(self) -> str:
        return self.service.settings.default_voice

    def route(self, wish: VoiceWish) -> VoicePreset:
        return self.service.route(wish)

    async def anchor_of(self, preset: VoicePreset) -> Anchor | None:
        """The anchor a designed voice speaks with, built now (on the worker) when it was not
        preloaded; None for a voice without one."""
        anchor = self._assets.anchors.get(preset.name)
        if anchor is None and preset.uses_anchor:
            anchor = await asyncio.to_thread(self._assets.anchor_for, preset)
        return anchor

    async def synthesize(self, text: str, preset: VoicePreset, *,
                         reference: Reference | None = None) -> Audio:
        """The audio of ``text`` in ``preset``, as a Wyoming one-shot request gets it (with
        ``reference`` in place of the voice's own). Raises the service's RequestError."""
        override = None
        if reference is not None:
            override = Override(ref_codes=reference.codes, ref_text=reference.text,
                                ref_rms=getattr(reference, "rms", None))
        return await self.service.synthesize(text, preset, override=override)

    def take_codes(self, engine: Engine, request: SynthesisRequest
                   ) -> tuple[np.ndarray[Any, np.dtype[Any]], str]:
        """A design take's codes and how they were made (on the engine's thread), decoded
        like the server's anchors (canonical where it makes canonical ones), so a first take
        is the very anchor the voice would get, on any replica."""
        builder = self._assets.builder
        if builder is None:
            (codes,) = engine.generate_codes_batch([request], options=self.options)
            return codes, f"{engine.precision}, {self.options.num_step} steps"
        mode, (codes,) = builder.maker.generate(engine, [request])
        builder.release_if_idle()
        return codes, mode.label

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread (between batches)."""
        return await self.service.on_engine(run)

    def add_voices(self, presets: Iterable[VoicePreset], *,
                   anchors: dict[str, Anchor] | None = None,
                   prompts: dict[str, VoicePrompt] | None = None) -> None:
        """Serve these voices from the next request and ``describe`` on (loop thread)."""
        self._assets.anchors.update(anchors or {})
        self._assets.prompts.update(prompts or {})
        self.service.add_presets(presets)

    def remove_voice(self, name: str) -> None:
        self.service.remove_voice(name)
        self._assets.anchors.pop(name, None)
        self._assets.prompts.pop(name, None)
