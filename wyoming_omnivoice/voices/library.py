"""The voices being served: one owner that every protocol asks.

:class:`VoiceLibrary` holds the catalogue, each voice's references (anchors of designed
voices, clone prompts of cloned ones: :class:`.assets.VoiceAssets`), the folder watcher and
the default voice's name. It answers the questions a request asks of its voice (which voice,
:meth:`VoiceLibrary.route`; what it brings to the engine request, :meth:`VoiceLibrary.voice_part`)
and takes every live change in one call (:meth:`VoiceLibrary.add`,
:meth:`VoiceLibrary.remove`, voice folders found while running), so the Wyoming ``describe``,
the HTTP voice list and the next request of any protocol see a change at once. Nobody else
keeps a copy of the catalogue or of a voice's references. It also owns the household's
voice per language (:mod:`.household`: :meth:`VoiceLibrary.choose_for`,
:meth:`VoiceLibrary.unchoose`), kept in a file across restarts.

Everything here is called on the event loop thread, except :meth:`VoiceLibrary.voice_part`
(the text thread: it builds a missing anchor itself only before the worker runs),
:meth:`VoiceLibrary.anchor_of` (any thread but the loop: it waits for the engine's thread),
and :meth:`VoiceLibrary.with_anchor` and :meth:`VoiceLibrary.anchor_codes` (the engine's
thread).

Once the worker runs, a request for a designed voice whose anchor is not built yet goes down
once: its engine request leaves the anchor out (:meth:`VoiceLibrary.voice_part`,
:meth:`VoiceLibrary.anchor_missing`), and its own job, on the worker's thread, builds the
anchor and puts it in before the request decodes (:meth:`VoiceLibrary.with_anchor`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyoming_omnivoice.voices.assets import (
    VoiceAssets,
    VoicePart,
    WorkerEncoder,
    folder_voice_watcher,
)
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.household import read_household, write_household
from wyoming_omnivoice.voices.language_list import VoiceLanguages, parse_languages

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest, VoicePrompt
    from wyoming_omnivoice.anchors.cache import Anchor
    from wyoming_omnivoice.voices.engine_thread import EngineThread
    from wyoming_omnivoice.voices.watch import FolderVoiceWatcher, NewVoice

_LOGGER = logging.getLogger(__name__)


def written_language(language: str) -> str:
    """A language as a voice's languages write it (``pt_br`` -> ``pt-BR``, ``German`` ->
    ``de``); ValueError naming the fix when it is no language."""
    return parse_languages([language]).written()[0]


class VoiceLibrary:
    """The catalogue and every voice's references (see the module docstring)."""

    def __init__(self, catalog: VoiceCatalog, default_voice: str,
                 assets: VoiceAssets | None = None, household: Path | None = None) -> None:
        #: The household's voices are read from ``household`` (its file) and kept there.
        self._household_path = household
        if household is not None:
            catalog = catalog.with_household(read_household(household))
        self._catalog = catalog
        #: The default voice's name (``--voice``): never removed.
        self.default_voice = default_voice
        self._assets = assets if assets is not None else VoiceAssets()
        self._watcher: FolderVoiceWatcher | None = None
        #: One choice of household voices at a time (its file written in turn), and every
        #: change of the catalogue made whole (a choice comes from the studio's thread).
        self._choosing = threading.Lock()
        self._swap = threading.Lock()

    # ---- the catalogue ---------------------------------------------------------------

    @property
    def catalog(self) -> VoiceCatalog:
        """The voices served now (a new value after every change: compare by identity)."""
        return self._catalog

    def get(self, name: str) -> VoicePreset | None:
        return self._catalog.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._catalog

    def default(self) -> VoicePreset:
        """The ``--voice`` voice (a request naming none may get the household's instead)."""
        return self._catalog.route(self.default_voice, name=self.default_voice).preset

    def route(self, name: str | None = None, language: str | None = None) -> VoicePreset:
        """The voice for a request (an unknown name: the best voice of its language)."""
        route = self._catalog.route(self.default_voice, name=name, language=language)
        if route.note:
            _LOGGER.warning("%s", route.note)
        return route.preset

    # ---- the household's voice per language -------------------------------------------

    def choose_for(self, language: str, name: str) -> str:
        """Make ``name`` the household's voice of ``language`` (an id or a regional tag),
        kept in the file; returns the language as written (``de``, ``pt-BR``). ValueError
        when the voice is unknown or does not speak it. Writes a small file: call it off
        the event loop."""
        preset = self.get(name)
        if preset is None:
            raise ValueError(f"There is no voice {name!r}")
        written = written_language(language)
        if not self._catalog.household_tags(written, preset):
            speaks = VoiceLanguages(preset.languages, preset.variant).written()
            raise ValueError(f"Voice {name!r} does not speak {written!r} (it speaks "
                             f"{', '.join(speaks)})")
        with self._choosing:
            household = self._catalog.household
            household[written] = name
            self._keep(household)
        _LOGGER.info("Voice %r is the household's voice for %s", name, written)
        return written

    def unchoose(self, language: str) -> bool:
        """No household voice for ``language`` any more (kept in the file); False when
        none was chosen. Writes a small file: call it off the event loop."""
        written = written_language(language)
        with self._choosing:
            household = self._catalog.household
            if household.pop(written, None) is None:
                return False
            self._keep(household)
        _LOGGER.info("No household voice for %s any more", written)
        return True

    def unchoose_voice(self, name: str) -> None:
        """The voice is no household's voice any more (before it is removed; writes a small
        file: call it off the event loop)."""
        with self._choosing:
            household = self._catalog.household
            if name in household.values():
                self._keep({k: v for k, v in household.items() if v != name})

    def _keep(self, household: dict[str, str]) -> None:
        if self._household_path is not None:
            write_household(self._household_path, household)
        with self._swap:
            self._catalog = self._catalog.with_household(household)

    # ---- what a voice brings to a request ---------------------------------------------

    def voice_part(self, preset: VoicePreset) -> VoicePart:
        """The voice's design and reference. A designed voice's anchor not built yet is
        built now before the worker runs; once it runs, it is left out for the request's
        job to build (:meth:`anchor_missing`, :meth:`with_anchor`). Never call on the event
        loop."""
        return self._assets.voice_part(preset)

    def anchor_missing(self, preset: VoicePreset) -> bool:
        """A designed voice whose anchor its next request's job builds (the worker runs)."""
        return self._assets.anchor_missing(preset)

    def with_anchor(self, preset: VoicePreset, engine: Engine, request: SynthesisRequest
                    ) -> SynthesisRequest:
        """On the engine's thread, in a request's own job: ``request`` with ``preset``'s
        anchor as its reference, the anchor built now when missing (``AfterBackground``
        while the background batch running now builds it; unchanged when none can be
        made: the voice is spoken without one)."""
        anchor = self._assets.anchor_on(engine, preset)
        if anchor is None:
            return request
        return dataclasses.replace(request, ref_codes=anchor.codes, ref_text=anchor.text,
                                   ref_rms=None)

    def anchor_of(self, preset: VoicePreset) -> Anchor | None:
        """The anchor a designed voice speaks with (built now when it was not preloaded:
        never call on the event loop); None for a voice without one."""
        return self._assets.anchor_for(preset)

    def anchor_codes(self, engine: Engine, request: SynthesisRequest, options: DecodeOptions
                     ) -> tuple[Any, str]:
        """A new anchor's codes and how they were made, decoded like the served voices'
        anchors (canonical where this server makes canonical ones); on the engine's thread."""
        builder = self._assets.builder
        if builder is None:
            (codes,) = engine.generate_codes_batch([request], options=options)
            return codes, f"{engine.precision}, {options.num_step} steps"
        mode, (codes,) = builder.maker.generate(engine, [request])
        builder.release_if_idle()
        return codes, mode.label

    # ---- live changes ----------------------------------------------------------------

    def add(self, presets: Iterable[VoicePreset], *,
            anchors: dict[str, Anchor] | None = None,
            prompts: dict[str, VoicePrompt] | None = None) -> None:
        """Serve these voices (new, or replacing the voice of their name) from the next
        request and ``describe`` on, with their references (loop thread)."""
        self._assets.anchors.update(anchors or {})
        self._assets.prompts.update(prompts or {})
        with self._swap:
            self._catalog = self._catalog.merged(presets)

    def remove(self, name: str) -> None:
        """A voice leaves the catalogue with its references (never the default voice)."""
        if name == self.default_voice:
            raise ValueError(f"{name!r} is the default voice (--voice); it cannot be removed")
        if name in self._catalog.household.values():
            self.unchoose_voice(name)  # (the studio does it first, off the event loop)
        with self._swap:
            self._catalog = VoiceCatalog((p for p in self._catalog if p.name != name),
                                         self._catalog.household)
        self._assets.anchors.pop(name, None)
        self._assets.prompts.pop(name, None)

    def _add_found(self, found: list[NewVoice]) -> None:
        self.add((voice.preset for voice in found),
                 prompts={voice.preset.name: voice.prompt for voice in found})

    # ---- the engine's thread, the folder watcher ---------------------------------------

    def attach(self, worker: EngineThread) -> None:
        """From now on, anchors are built on the worker's thread."""
        self._assets.attach(worker)

    def start_background(self) -> None:
        """The preloaded voices' anchors not built yet, built now in the background."""
        self._assets.start_background()

    def watch_folders(self, encoder: WorkerEncoder, data_dir: Path,
                      failed: set[str]) -> None:
        """Voice folders added under ``<data-dir>/voices`` while running join the catalogue
        (``failed``: folders already reported at start-up)."""
        self._watcher = folder_voice_watcher(encoder, data_dir, self._add_found)
        self._watcher.remember_failed(failed)

    def look_for_voices(self) -> None:
        """Give the folder watcher a chance to find new voices, and serving anchors a chance
        to be replaced by canonical files that appeared (never blocks; on ``describe``)."""
        if self._watcher is None:
            return
        try:
            self._watcher.poll(set(self._catalog.names))
            self._assets.adopt_canonical(list(self._catalog))
        except Exception:
            _LOGGER.exception("Looking for new voices failed")

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
