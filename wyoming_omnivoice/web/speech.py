"""The one path from the web server to synthesis: the same worker as Wyoming requests.

:class:`WorkerSpeech` has the method names of the speech service (``route``,
``synthesize``, ``on_engine``, ``catalog``, ``add_voices``, ``remove_voice``,
``sample_rate``), so the web server does not change when the service replaces it. It
prepares text as a Wyoming one-shot (:func:`..text.prepare.prepare_one_shot`), builds each
piece's engine request with the server's own builder (normalisation, language, the voice's
anchor or clone prompt, ``--deterministic`` seeds), and decodes the pieces one after the
other on the inference worker (so a Wyoming request waits behind at most one preview
decode, and joins the same batches).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from wyoming_omnivoice.server.context import LiveState, RequestBuilder
from wyoming_omnivoice.server.request_input import VoiceWish
from wyoming_omnivoice.text.prepare import prepare_one_shot
from wyoming_omnivoice.voices.anchors import Anchor
from wyoming_omnivoice.voices.assets import VoiceAssets
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, VoicePrompt
    from wyoming_omnivoice.speech.worker import InferenceWorker

T = TypeVar("T")
Audio = np.ndarray[Any, np.dtype[np.float32]]


class Reference(Protocol):
    """What overrides a voice's reference: codes, the text they say, and the loudness of a
    recording (None for an anchor)."""

    @property
    def codes(self) -> np.ndarray[Any, np.dtype[Any]]: ...

    @property
    def text(self) -> str: ...


class WorkerSpeech:
    """Synthesis and engine calls for the web server, through the inference worker."""

    def __init__(self, *, worker: InferenceWorker, state: LiveState, assets: VoiceAssets,
                 make_request: RequestBuilder, default_voice: str, sample_rate: int,
                 options: DecodeOptions, fingerprint: str, data_dir: Path,
                 first_clause: bool = True) -> None:
        self._worker = worker
        self._state = state
        self._assets = assets
        self._make_request = make_request
        self.default_voice = default_voice
        self.sample_rate = sample_rate
        self.options = options
        self.fingerprint = fingerprint
        self.data_dir = data_dir
        self._first_clause = first_clause

    @property
    def catalog(self) -> VoiceCatalog:
        return self._state.catalog

    def route(self, wish: VoiceWish) -> VoicePreset:
        return self.catalog.route(self.default_voice, name=wish.name,
                                  language=wish.language).preset

    async def anchor_of(self, preset: VoicePreset) -> Anchor | None:
        """The anchor a designed voice speaks with, built now (on the worker) when it was not
        preloaded; None for a voice without one."""
        anchor = self._assets.anchors.get(preset.name)
        if anchor is None and preset.uses_anchor:
            anchor = await asyncio.to_thread(self._assets.anchor_for, preset)
        return anchor

    async def synthesize(self, text: str, preset: VoicePreset, *,
                         reference: Reference | None = None, seed: int | None = None) -> Audio:
        """The audio of ``text`` in ``preset``, as a Wyoming one-shot request gets it."""
        pieces = await asyncio.to_thread(prepare_one_shot, text,
                                         first_clause=self._first_clause)
        audios: list[Audio] = []
        for piece in pieces:
            request = await asyncio.to_thread(self._make_request, preset, piece)
            if reference is not None:
                request = dataclasses.replace(request, ref_codes=reference.codes,
                                              ref_text=reference.text,
                                              ref_rms=getattr(reference, "rms", None))
            if seed is not None:
                request = dataclasses.replace(request, seed=seed)
            job = self._worker.submit(request)
            try:
                audios.append(await job.future)
            except asyncio.CancelledError:
                job.cancel()
                raise
        if not audios:
            return np.zeros(int(self.sample_rate * 0.02), dtype=np.float32)
        return np.concatenate(audios).astype(np.float32, copy=False)

    async def on_engine(self, run: Callable[[Engine], T]) -> T:
        """``run(engine)`` on the worker thread (between batches)."""
        return await asyncio.wrap_future(self._worker.call(run))

    def add_voices(self, presets: Iterable[VoicePreset], *,
                   anchors: dict[str, Anchor] | None = None,
                   prompts: dict[str, VoicePrompt] | None = None) -> None:
        """Serve these voices from the next request and ``describe`` on (loop thread)."""
        self._assets.anchors.update(anchors or {})
        self._assets.prompts.update(prompts or {})
        self._state.catalog = self._state.catalog.merged(presets)

    def remove_voice(self, name: str) -> None:
        self._state.catalog = VoiceCatalog(p for p in self._state.catalog if p.name != name)
        self._assets.anchors.pop(name, None)
        self._assets.prompts.pop(name, None)
