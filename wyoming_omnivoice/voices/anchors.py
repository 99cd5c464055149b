"""Anchors: a cached sample per designed voice that pins its identity.

OmniVoice's designed voices are sampled anew on every call, so two sentences of the same
preset can sound like two different people. For long text upstream reuses chunk 0's
generated codes as the cloning reference for the later chunks; the server does the same
across requests: for each designed preset it generates one short anchor sentence once, with
a fixed seed, caches the codes and text under ``<data-dir>/anchors/``, and passes them as
``ref_codes``/``ref_text`` with every request of that voice.

The cache file name is a hash of the preset content (instruct, language, speed, anchor
text), the decode settings, the anchor seed and the model fingerprint, so it is rebuilt when
any of them changes, and a voice name can never reach the file system. Files are written
atomically; an unreadable or inconsistent file is regenerated.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine import NUM_CODEBOOKS
from wyoming_omnivoice.voices.anchor_texts import ANCHOR_TEXTS, FALLBACK_LANGUAGE, anchor_text
from wyoming_omnivoice.voices.catalog import VoicePreset

__all__ = ["ANCHOR_TEXTS", "FALLBACK_LANGUAGE", "Anchor", "AnchorCache", "anchor_text_for"]

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine

_LOGGER = logging.getLogger(__name__)

ANCHOR_SEED = 20260417
CACHE_VERSION = 1



@dataclass(frozen=True)
class Anchor:
    """Reference codes [8, T] int64 and the text they say."""

    codes: np.ndarray[Any, np.dtype[np.int64]]
    text: str


def anchor_text_for(preset: VoicePreset) -> str:
    """The preset's own anchor text, or the built-in sentence for its main language."""
    return preset.anchor_text or anchor_text(preset.language)


def _log_progress(done: int, total: int, elapsed: float) -> None:
    """One line per batch: how many anchors are built, time so far and time left."""
    left = elapsed / done * (total - done) if done else 0.0
    _LOGGER.info("Voice anchors: %d of %d built (%.0f s elapsed, about %.0f s left)",
                 done, total, elapsed, left)


class AnchorCache:
    """Anchors on disk under ``directory``, keyed by preset content and model fingerprint."""

    def __init__(self, directory: Path, fingerprint: str,
                 settings: dict[str, Any] | None = None) -> None:
        self.directory = Path(directory)
        self.fingerprint = fingerprint
        self.settings = dict(settings or {})
        #: Anchors that could not be written (the folder is read-only or full).
        self.unsaved = 0

    def key(self, preset: VoicePreset) -> str:
        material = {
            "version": CACHE_VERSION,
            "voice": preset.content_key(),
            "text": anchor_text_for(preset),
            "seed": ANCHOR_SEED,
            "model": self.fingerprint,
            "settings": self.settings,
        }
        blob = json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()

    def path_for(self, preset: VoicePreset) -> Path:
        return self.directory / f"{self.key(preset)[:40]}.npz"

    def load(self, preset: VoicePreset) -> Anchor | None:
        """The cached anchor, or None when absent or unusable (it is then rebuilt)."""
        path = self.path_for(preset)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                codes = np.asarray(data["codes"])
                text = str(data["text"])
                key = str(data["key"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            _LOGGER.warning("Anchor cache file %s is unreadable (%s); rebuilding it", path, err)
            return None
        if (
            key != self.key(preset)
            or text != anchor_text_for(preset)
            or codes.ndim != 2
            or codes.shape[0] != NUM_CODEBOOKS
            or codes.shape[1] < 1
            or not np.issubdtype(codes.dtype, np.integer)
        ):
            _LOGGER.warning("Anchor cache file %s does not match voice %r; rebuilding it",
                            path, preset.name)
            return None
        return Anchor(codes=codes.astype(np.int64), text=text)

    def save(self, preset: VoicePreset, anchor: Anchor) -> Path:
        """Write atomically: a temp file in the same folder, then ``os.replace``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(preset)
        with atomic_write(path) as handle:
            np.savez(handle, codes=anchor.codes.astype(np.int64),
                     text=np.array(anchor.text), key=np.array(self.key(preset)))
        return path

    def ensure_all(self, presets: list[VoicePreset], engine: Engine,
                   options: DecodeOptions | None = None, batch_size: int = 8,
                   log_progress: bool = True) -> dict[str, Anchor]:
        """Anchors for ``presets`` (by name): cached ones loaded, missing ones generated.

        Missing anchors are decoded in batches with ``engine.generate_codes_batch``; every
        item carries its own seed, so the codes equal a lone ``generate_codes`` call.
        ``log_progress`` False leaves the progress lines to the caller (the background
        builder counts over all its batches). Voices of the same content (``pt-female``
        and ``pt-BR-female``) share one anchor, built once.
        """
        anchors: dict[str, Anchor] = {}
        missing: list[VoicePreset] = []
        sharing: dict[str, list[VoicePreset]] = {}  # cache key -> the other voices of it
        built_for: dict[str, VoicePreset] = {}  # cache key -> the voice that builds it
        for preset in presets:
            cached = self.load(preset)
            if cached is not None:
                anchors[preset.name] = cached
                continue
            key = self.key(preset)
            if key in built_for:
                sharing.setdefault(key, []).append(preset)
            else:
                built_for[key] = preset
                missing.append(preset)
        began = time.monotonic()
        if missing and log_progress:
            _LOGGER.info("Voice anchors: building %d (%d cached), %d at a time; only the first "
                         "start does this, later starts load them from %s", len(missing),
                         len(anchors), max(1, batch_size), self.directory)
        for start in range(0, len(missing), max(1, batch_size)):
            group = missing[start:start + max(1, batch_size)]
            _LOGGER.info("Generating the anchor for voice %s",
                         ", ".join(repr(preset.name) for preset in group))
            if start and log_progress:
                _log_progress(start, len(missing), time.monotonic() - began)
            from wyoming_omnivoice import SynthesisRequest

            items = [
                SynthesisRequest(text=anchor_text_for(p), language=p.language,
                                 instruct=p.instruct, speed=p.speed, seed=ANCHOR_SEED)
                for p in group
            ]
            codes_list = engine.generate_codes_batch(items, options=options)
            for preset, codes in zip(group, codes_list, strict=True):
                anchor = Anchor(codes=np.asarray(codes, dtype=np.int64),
                                text=anchor_text_for(preset))
                self._store(preset, anchor)
                anchors[preset.name] = anchor
                for other in sharing.get(self.key(preset), ()):
                    anchors[other.name] = anchor
        if missing and log_progress:
            _log_progress(len(missing), len(missing), time.monotonic() - began)
        return anchors

    def _store(self, preset: VoicePreset, anchor: Anchor) -> None:
        """Cache an anchor; a folder that cannot be written gives one warning (per start),
        not one per anchor."""
        try:
            self.save(preset, anchor)
        except OSError as err:
            self.unsaved += 1
            if self.unsaved == 1:
                _LOGGER.warning("Cannot write the anchor cache in %s (%s); the server goes "
                                "on, and the anchors it could not store (voice %r first) "
                                "are generated again at the next start", self.directory,
                                err.strerror or err, preset.name)

    def get_or_create(self, preset: VoicePreset, engine: Engine,
                      options: DecodeOptions | None = None) -> Anchor:
        """Load the anchor of ``preset`` or generate it with the engine and cache it."""
        anchor = self.load(preset)
        if anchor is not None:
            _LOGGER.debug("Anchor for voice %r loaded from cache", preset.name)
            return anchor
        text = anchor_text_for(preset)
        _LOGGER.info("Generating the anchor for voice %r", preset.name)
        codes = engine.generate_codes(
            text, language=preset.language, instruct=preset.instruct, speed=preset.speed,
            options=options, seed=ANCHOR_SEED,
        )
        anchor = Anchor(codes=np.asarray(codes, dtype=np.int64), text=text)
        self._store(preset, anchor)
        return anchor
