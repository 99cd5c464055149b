"""Anchors built at start-up for some languages, and on first use for the rest.

With a voice per preset and language (hundreds of designed voices), building every anchor
at start-up would take hours on a CPU (20-55 s each at 16 steps, real model size). So only
the voices of ``--preload-languages`` (default ``en``) and the default voice are anchored
before the server is ready; the anchor of any other voice is loaded from the cache at
start-up when it is there, else built the first time a request uses the voice, on the
inference worker's thread (the engine's only user while the server runs), then cached on
disk like the others.
"""

from __future__ import annotations

import argparse
import logging
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from wyoming_omnivoice.engine import strict_language
from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.voices.anchors import Anchor, AnchorCache
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.engine_thread import EngineThread, EngineThreadStopped
from wyoming_omnivoice.voices.templates import ALL, expand_all

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine

_LOGGER = logging.getLogger(__name__)

DEFAULT_PRELOAD = ("en",)


def preload_languages(value: str) -> tuple[str, ...]:
    """``--preload-languages``: comma-separated language ids or names, ``all`` or ``none``."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    if [item.casefold() for item in items] == ["none"]:
        return ()
    if any(item.casefold() == ALL for item in items) and len(items) == 1:
        return (ALL,)
    languages: list[str] = []
    for item in expand_all(items):
        try:
            language = strict_language(item)
        except ValueError as err:
            raise argparse.ArgumentTypeError(one_line(str(err))) from None
        if language is not None and language not in languages:
            languages.append(language)
    return tuple(languages)


def preloaded(preset: VoicePreset, languages: Iterable[str], default: str) -> bool:
    """Whether the anchor of ``preset`` is built before the server is ready."""
    wanted = tuple(languages)
    return preset.name == default or ALL in wanted or preset.language in wanted


class AnchorBuilder:
    """Anchors of voices not preloaded: built once, on first use, then shared."""

    def __init__(self, cache: AnchorCache, engine: Engine, options: DecodeOptions,
                 anchors: dict[str, Anchor]) -> None:
        self._cache = cache
        self._engine = engine
        self._options = options
        self._anchors = anchors
        self._failed: set[str] = set()
        self._lock = threading.Lock()
        #: Set once the worker runs; before that (warm-up) the engine is used directly.
        self.worker: EngineThread | None = None

    def get(self, preset: VoicePreset) -> Anchor | None:
        """The anchor of ``preset``, built now if needed (blocks the caller, never the loop).

        A voice whose anchor cannot be made is spoken without one (a warning, once).
        """
        with self._lock:
            anchor = self._anchors.get(preset.name)
            if anchor is not None or preset.name in self._failed:
                return anchor
            _LOGGER.info("Building the anchor of voice %r on its first use", preset.name)
            began = time.monotonic()
            try:
                anchor = self._build(preset)
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
            return anchor

    def _build(self, preset: VoicePreset) -> Anchor:
        if self.worker is None:
            return self._cache.get_or_create(preset, self._engine, self._options)
        return self.worker.call(
            lambda engine: self._cache.get_or_create(preset, engine, self._options)).result()
