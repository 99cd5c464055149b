"""Anchors: the default voice's before the server is ready, the preloaded languages' in the
background once it is, and the rest on first use.

With a voice per preset and language (hundreds of designed voices), building every anchor
at start-up would take hours on a CPU (20-55 s each at 16 steps, real model size). Only the
default voice's anchor is built before the server is ready (its requests need it at once);
the other voices of ``--preload-languages`` (default ``en``) are built right after, in the
background, in batches (of one anchor on a CPU, where a request would otherwise wait for a
whole batch) on the inference worker's thread (the engine's only user while the server
runs; as background calls, whose decodes yield to every request at each diffusion step and
resume afterwards: the worker's step scheduling), with the usual progress line. The anchor
of any other voice is loaded from the cache at start-up when it is there, else built the
first time a request uses the voice. A request for a voice whose anchor is not built yet
builds that one anchor in its own job on the worker's thread (:meth:`AnchorBuilder.anchor_on`;
or, when the background batch running now holds that voice, right after that batch), never
all of them. Every anchor is cached on disk like the others.

Anchors are made by an :class:`.maker.AnchorMaker` (canonical where it can); its fp32
engine, when it needed one, is let go once the background is done and after a voice's
first-use anchor. A serving-precision anchor gives way to a canonical file of the same voice
that appears in the cache folder (another replica made it, or it was copied there):
:meth:`AnchorBuilder.adopt_canonical`, at most every few seconds, from ``describe``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from wyoming_omnivoice.anchors.cache import (
    ANCHOR_LINES_S,
    PROGRESS_LABEL,
    SERVING_KIND,
    Anchor,
    AnchorCache,
)
from wyoming_omnivoice.anchors.maker import AnchorMaker
from wyoming_omnivoice.engine import return_freed_memory, strict_language
from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.progress import ANCHORS, Progress
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.engine_thread import (
    AfterBackground,
    EngineThread,
    EngineThreadStopped,
)
from wyoming_omnivoice.voices.templates import ALL, expand_all

if TYPE_CHECKING:
    from wyoming_omnivoice import Engine

_LOGGER = logging.getLogger(__name__)

DEFAULT_PRELOAD = ("en",)
#: How often serving anchors look for a canonical file of their voice (at most).
ADOPT_INTERVAL_S = 10.0


def preload_languages(value: str) -> tuple[str, ...]:
    """``--preload-languages``: comma-separated language ids or names, ``all`` or ``none``;
    ValueError naming a language that is not one."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    if [item.casefold() for item in items] == ["none"]:
        return ()
    if any(item.casefold() == ALL for item in items) and len(items) == 1:
        return (ALL,)
    languages: list[str] = []
    for item in expand_all(items):
        language = strict_language(item)
        if language is not None and language not in languages:
            languages.append(language)
    return tuple(languages)


def preloaded(preset: VoicePreset, languages: Iterable[str], default: str) -> bool:
    """Whether the anchor of ``preset`` is built before the server is ready."""
    wanted = tuple(languages)
    return preset.name == default or ALL in wanted or preset.language in wanted


class AnchorBuilder:
    """Anchors of voices not built before ready: in the background (preloaded languages) or
    on first use (the rest), each built once, then shared.

    Before the worker runs (start-up, the synthesize CLI) an anchor is built on the caller's
    thread; once it runs, every anchor is built on the worker's thread (the engine's one
    user), so no two builds of one voice can overlap."""

    def __init__(self, cache: AnchorCache, engine: Engine, maker: AnchorMaker,
                 anchors: dict[str, Anchor], background: Iterable[VoicePreset] = (),
                 batch_size: int = 8) -> None:
        self._cache = cache
        self._engine = engine
        self.maker = maker
        self._last_adopt = float("-inf")
        self._anchors = anchors
        self._failed: set[str] = set()
        #: The voices of the background batch being built now (worker thread only).
        self._building: set[str] = set()
        #: Set while no background batch is being built.
        self._batch_ended = threading.Event()
        self._batch_ended.set()
        self._background = list(background)
        self._batch_size = max(1, min(batch_size, maker.max_batch or batch_size))
        self._thread: threading.Thread | None = None
        #: Set once the worker runs; before that (warm-up) the engine is used directly.
        self.worker: EngineThread | None = None

    @property
    def background_left(self) -> int:
        """Anchors the background has still to build."""
        return sum(preset.name not in self._anchors and preset.name not in self._failed
                   for preset in self._background)

    def missing(self, preset: VoicePreset) -> bool:
        """A designed voice whose anchor is not built yet (and has not failed)."""
        return preset.uses_anchor and preset.name not in self._anchors \
            and preset.name not in self._failed

    def get(self, preset: VoicePreset) -> Anchor | None:
        """The anchor of ``preset``, built now if needed (blocks the caller, never the loop;
        once the worker runs, built on its thread).

        A voice whose anchor cannot be made is spoken without one (a warning, once).
        """
        if self.worker is None:
            return self.anchor_on(self._engine, preset)
        while True:
            try:
                return self.worker.call(partial(self._anchor_on, preset)).result()
            except AfterBackground:
                self._batch_ended.wait()  # the background batch holding it, then again
            except EngineThreadStopped as err:
                self._failed.add(preset.name)
                _LOGGER.warning("Voice %r: no anchor (%s); it is spoken without one",
                                preset.name, one_line(str(err)))
                return None

    def _anchor_on(self, preset: VoicePreset, engine: Engine) -> Anchor | None:
        return self.anchor_on(engine, preset)

    def anchor_on(self, engine: Engine, preset: VoicePreset) -> Anchor | None:
        """The anchor of ``preset``, built now with ``engine`` on this thread (the engine's)
        if needed: a request's own job calls this before the request decodes. Raises
        :class:`AfterBackground` when the background batch running now holds the voice.

        A voice whose anchor cannot be made is spoken without one (a warning, once).
        """
        anchor = self._anchors.get(preset.name)
        if anchor is not None or preset.name in self._failed:
            return anchor
        if preset.name in self._building:
            raise AfterBackground(f"the anchor of voice {preset.name!r} is being built")
        _LOGGER.info("Building the anchor of voice %r on its first use", preset.name)
        began = time.monotonic()
        try:
            anchor = self._cache.get_or_create(preset, self.maker.codes_on(engine))
        except (ValueError, EngineThreadStopped) as err:
            self._failed.add(preset.name)
            _LOGGER.warning("Voice %r: no anchor (%s); it is spoken without one",
                            preset.name, one_line(str(err)))
            return None
        # What the request that asked for it waited (a cached file: a short read); a
        # household that sees this often can preload the language.
        _LOGGER.info("Voice %r: anchor ready in %.1f s on its first use (preload its "
                     "language with --preload-languages to have it at start-up)",
                     preset.name, time.monotonic() - began)
        self._anchors[preset.name] = anchor
        self.release_if_idle()
        return anchor

    def release_if_idle(self) -> None:
        """Let the anchor maker's fp32 engine go unless the background still needs it."""
        if self._thread is None or not self._thread.is_alive():
            self.maker.release()

    def adopt_canonical(self, presets: Iterable[VoicePreset], *, force: bool = False) -> int:
        """Serving anchors of ``presets`` replaced by their voice's canonical file where
        one has appeared (at most every :data:`ADOPT_INTERVAL_S`); returns how many."""
        now = time.monotonic()
        if not force and now - self._last_adopt < ADOPT_INTERVAL_S:
            return 0
        self._last_adopt = now
        adopted = 0
        for preset in presets:
            current = self._anchors.get(preset.name)
            if current is None or current.kind != SERVING_KIND:
                continue
            canonical = self._cache.load_canonical(preset)
            if canonical is not None:
                self._anchors[preset.name] = canonical
                adopted += 1
                _LOGGER.info("Voice %r: a canonical anchor appeared in %s; it replaces the "
                             "serving-precision one (%s)", preset.name, self._cache.directory,
                             current.made_with)
        return adopted

    def start_background(self) -> None:
        """Build the background anchors on the worker, batch by batch (needs ``worker``)."""
        if self.worker is None or not self.background_left or self._thread is not None:
            if self._thread is None:
                self.maker.release()
            return
        _LOGGER.info("Voice anchors: building %d in the background, %d at a time (a request "
                     "for one of these voices builds its own first); only the first start "
                     "does this", self.background_left, self._batch_size)
        self._thread = threading.Thread(target=self._run_background, name="anchors",
                                        daemon=True)
        self._thread.start()

    def _run_background(self) -> None:
        total = self.background_left
        with Progress(ANCHORS, PROGRESS_LABEL, total, unit="built", item="anchor",
                      interval_s=ANCHOR_LINES_S, logger=_LOGGER) as work:
            while True:
                group = [preset for preset in self._background
                         if preset.name not in self._anchors and preset.name not in self._failed
                         ][:self._batch_size]
                if not group:
                    self.maker.release()
                    break
                try:
                    self._build_group(group)
                except EngineThreadStopped:
                    return  # shutting down
                work.set(total - self.background_left)
            work.log()

    def _build_group(self, group: list[VoicePreset]) -> None:
        assert self.worker is not None
        self.worker.call(partial(self._group_on, group), background=True).result()
        return_freed_memory()  # a batch's working memory, back to the system

    def _group_on(self, group: list[VoicePreset], engine: Engine) -> None:
        """The anchors of ``group`` in one batch (on the worker's thread, yielding to the
        requests at every step); one by one when the engine refuses one of them."""
        group = [preset for preset in group if self.missing(preset)]  # a request's meanwhile
        if not group:
            return
        self._building = {preset.name for preset in group}
        self._batch_ended.clear()
        try:
            try:
                built = self._cache.ensure_all(group, self.maker.codes_on(engine),
                                               batch_size=len(group), log_progress=False)
            except ValueError:
                built = {}  # one voice the engine refuses fails the batch: one by one
                for preset in group:
                    try:
                        built[preset.name] = self._cache.get_or_create(
                            preset, self.maker.codes_on(engine))
                    except ValueError as err:
                        self._failed.add(preset.name)
                        _LOGGER.warning("Voice %r: no anchor (%s); it is spoken without one",
                                        preset.name, one_line(str(err)))
            self._anchors.update(built)
        finally:
            self._building = set()
            self._batch_ended.set()
