"""Anchors: a cached sample per designed voice that pins its identity.

OmniVoice's designed voices are sampled anew on every call, so two sentences of the same
preset can sound like two different people. For long text upstream reuses chunk 0's
generated codes as the cloning reference for the later chunks; the server does the same
across requests: for each designed preset it generates one short anchor sentence once, with
a fixed seed, caches the codes and text under ``<data-dir>/anchors/``, and passes them as
``ref_codes``/``ref_text`` with every request of that voice.

Which person an anchor is depends on how it was decoded: a q8 backbone flips most of a
designed voice's tokens (landscape.md section 6), so anchors made at each server's own
precision and steps would make an int8 CPU replica and an fp32 GPU replica speak two
people under one name. So an anchor is made in one **canonical** mode, whatever serves it
(:data:`CANONICAL`: the fp32 backbone, upstream's 32 steps, guidance 2.0, the fixed
:data:`ANCHOR_SEED`), and its cache key names only the voice, the anchor text, the seed and
the files that decide the codes (``Engine.decode_fingerprint``): never a serving precision
or step count. Every replica that shares the data dir (or copies its ``anchors/`` folder)
loads the same file, so the same codes, so the same clone prompt.

A server that cannot make canonical anchors (not enough memory for the fp32 backbone, or
``--canonical-anchors never``) makes **serving** anchors: decoded at its own precision and
steps, marked ``kind: serving`` in the file and keyed with that precision and those steps,
so one is never mistaken for a canonical anchor; a canonical file of the same voice, when
one appears, is always preferred (:meth:`AnchorCache.load_canonical`).

Files of the version-1 cache (keyed with the serving steps and the full model fingerprint)
are moved to the new keys once, with one log line: as canonical anchors when they were made
in the canonical mode (an fp32 server at 32 steps), else as serving anchors, so a household
keeps hearing the person it heard before. Files are written atomically; an unreadable or
inconsistent file is regenerated.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from wyoming_omnivoice.anchors.texts import ANCHOR_TEXTS, FALLBACK_LANGUAGE, anchor_text
from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine import NUM_CODEBOOKS
from wyoming_omnivoice.progress import ANCHORS, Progress
from wyoming_omnivoice.voices.catalog import VoicePreset

__all__ = ["ANCHOR_TEXTS", "CANONICAL", "FALLBACK_LANGUAGE", "Anchor", "AnchorCache",
           "AnchorMode", "LegacyKey", "anchor_text_for"]

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest

_LOGGER = logging.getLogger(__name__)

#: The seed of every anchor (the voice's content decides the person; the seed is fixed so
#: the studio's first take and the anchors of version 1 are the same draw).
ANCHOR_SEED = 20260417
CACHE_VERSION = 2
LEGACY_VERSION = 1
#: The anchor kinds: canonical (shared), serving (this server's precision), take (picked
#: in the studio or imported: a file of its own, see :mod:`.pinned`).
CANONICAL_KIND, SERVING_KIND, TAKE_KIND = "canonical", "serving", "take"


@dataclass(frozen=True)
class AnchorMode:
    """How an anchor is decoded: its kind, the backbone precision, steps and guidance."""

    kind: str
    precision: str
    num_step: int
    guidance_scale: float

    @property
    def label(self) -> str:
        return f"{self.precision}, {self.num_step} steps"

    @classmethod
    def serving(cls, precision: str, num_step: int, guidance_scale: float) -> AnchorMode:
        return cls(SERVING_KIND, precision, num_step, float(guidance_scale))


#: The one mode canonical anchors are made in: exact (fp32), upstream's defaults.
CANONICAL = AnchorMode(CANONICAL_KIND, "fp32", 32, 2.0)


@dataclass(frozen=True)
class Anchor:
    """Reference codes [8, T] int64, the text they say, and how they were made (``kind``:
    canonical, serving or take; ``made_with``: e.g. ``fp32, 32 steps``, shown only)."""

    codes: np.ndarray[Any, np.dtype[np.int64]]
    text: str
    kind: str = TAKE_KIND
    made_with: str = ""


@dataclass(frozen=True)
class LegacyKey:
    """What the version-1 cache keyed its files with: the full model fingerprint and the
    serving steps and guidance (it named no precision)."""

    fingerprint: str
    num_step: int
    guidance_scale: float


#: Makes the codes of anchor requests: ``(requests) -> (mode used, codes per request)``.
MakeCodes = Callable[[list["SynthesisRequest"]], tuple[AnchorMode, list[Any]]]


def anchor_text_for(preset: VoicePreset) -> str:
    """The preset's own anchor text, or the built-in sentence for its main language."""
    return preset.anchor_text or anchor_text(preset.language)


def anchor_request(preset: VoicePreset) -> SynthesisRequest:
    """The decode request of a preset's anchor (the same in every mode)."""
    from wyoming_omnivoice import SynthesisRequest

    return SynthesisRequest(text=anchor_text_for(preset), language=preset.language,
                            instruct=preset.instruct, speed=preset.speed, seed=ANCHOR_SEED)


#: The label of the anchors' progress lines (here and in the background builder):
#: ``Voice anchors: 3 of 14 built (21 %), 20.1 s per anchor, about 4 min left``.
PROGRESS_LABEL = "Voice anchors"
#: A progress line after every anchor made ("Voice anchors: 3 of 14 built"): each one takes
#: seconds, tens of seconds on a CPU at the real size, so the lines come no faster than that.
ANCHOR_LINES_S = 0.0


def _digest(material: dict[str, Any]) -> str:
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class AnchorCache:
    """Anchors on disk under ``directory``: canonical ones keyed by the voice and the files
    that decide the codes (``fingerprint``: ``Engine.decode_fingerprint``), serving ones
    also by ``serving`` (this server's precision and steps)."""

    def __init__(self, directory: Path, fingerprint: str, serving: AnchorMode,
                 legacy: LegacyKey | None = None) -> None:
        self.directory = Path(directory)
        self.fingerprint = fingerprint
        self.serving = serving
        self.legacy = legacy
        #: Anchors that could not be written (the folder is read-only or full).
        self.unsaved = 0
        #: Version-1 files moved to the new keys this start.
        self.migrated = 0

    # ---- keys ----------------------------------------------------------------------

    def key(self, preset: VoicePreset, kind: str = CANONICAL_KIND) -> str:
        material: dict[str, Any] = {
            "version": CACHE_VERSION,
            "kind": kind,
            "voice": preset.content_key(),
            "text": anchor_text_for(preset),
            "seed": ANCHOR_SEED,
            "model": self.fingerprint,
        }
        if kind == SERVING_KIND:  # only a serving anchor names how it was decoded
            material["decoded"] = {"precision": self.serving.precision,
                                   "num_step": self.serving.num_step,
                                   "guidance_scale": self.serving.guidance_scale}
        return _digest(material)

    def path_for(self, preset: VoicePreset, kind: str = CANONICAL_KIND) -> Path:
        return self.directory / f"{self.key(preset, kind)[:40]}.npz"

    def _legacy_key(self, preset: VoicePreset) -> str | None:
        if self.legacy is None:
            return None
        return _digest({
            "version": LEGACY_VERSION, "voice": preset.content_key(),
            "text": anchor_text_for(preset), "seed": ANCHOR_SEED,
            "model": self.legacy.fingerprint,
            "settings": {"num_step": self.legacy.num_step,
                         "guidance_scale": self.legacy.guidance_scale},
        })

    # ---- reading -------------------------------------------------------------------

    def load(self, preset: VoicePreset) -> Anchor | None:
        """The voice's anchor: canonical first, else this server's serving anchor, else a
        version-1 file (moved to the new keys); None when there is none (it is built)."""
        return (self.load_canonical(preset) or self._read(preset, SERVING_KIND)
                or self._migrate(preset))

    def load_canonical(self, preset: VoicePreset) -> Anchor | None:
        return self._read(preset, CANONICAL_KIND)

    def _read(self, preset: VoicePreset, kind: str) -> Anchor | None:
        path = self.path_for(preset, kind)
        if not path.is_file():
            return None
        stored = self._read_file(path, preset)
        if stored is None:
            return None
        key, anchor = stored
        if key != self.key(preset, kind):
            _LOGGER.warning("Anchor cache file %s does not match voice %r; rebuilding it",
                            path, preset.name)
            return None
        made_with = self.serving.label if kind == SERVING_KIND else CANONICAL.label
        return Anchor(codes=anchor.codes, text=anchor.text, kind=kind,
                      made_with=anchor.made_with or made_with)

    @staticmethod
    def _read_file(path: Path, preset: VoicePreset) -> tuple[str, Anchor] | None:
        try:
            with np.load(path, allow_pickle=False) as data:
                codes = np.asarray(data["codes"])
                text = str(data["text"])
                key = str(data["key"])
                made_with = str(data["made_with"]) if "made_with" in data.files else ""
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
            _LOGGER.warning("Anchor cache file %s is unreadable (%s); rebuilding it", path, err)
            return None
        if (
            text != anchor_text_for(preset)
            or codes.ndim != 2
            or codes.shape[0] != NUM_CODEBOOKS
            or codes.shape[1] < 1
            or not np.issubdtype(codes.dtype, np.integer)
        ):
            _LOGGER.warning("Anchor cache file %s does not match voice %r; rebuilding it",
                            path, preset.name)
            return None
        return key, Anchor(codes=codes.astype(np.int64), text=text, made_with=made_with)

    def _migrate(self, preset: VoicePreset) -> Anchor | None:
        """A version-1 file of this voice, moved to its new key: canonical when this server
        serves in the canonical mode (the old file was made in it), else serving."""
        legacy = self._legacy_key(preset)
        if legacy is None:
            return None
        path = self.directory / f"{legacy[:40]}.npz"
        if not path.is_file():
            return None
        stored = self._read_file(path, preset)
        if stored is None or stored[0] != legacy:
            return None
        exact = self.serving.precision == CANONICAL.precision and \
            self.serving.num_step == CANONICAL.num_step and \
            self.serving.guidance_scale == CANONICAL.guidance_scale
        mode = CANONICAL if exact else self.serving
        anchor = Anchor(codes=stored[1].codes, text=stored[1].text, kind=mode.kind,
                        made_with=f"{mode.label} (moved from a version-1 cache)")
        try:
            self.save(preset, anchor)
            path.unlink()
        except OSError:
            pass  # read-only: used as it is, moved at a start that can write
        self.migrated += 1
        if self.migrated == 1:
            _LOGGER.info("Voice anchors: moving the anchor cache of an older version to the "
                         "new keys (voice %r first), as %s anchors (%s); %s", preset.name,
                         mode.kind, mode.label,
                         "they are canonical: this server decodes in the canonical mode"
                         if exact else "the same person as before; a canonical anchor put "
                         f"in {self.directory} takes its place")
        return anchor

    # ---- writing -------------------------------------------------------------------

    def save(self, preset: VoicePreset, anchor: Anchor) -> Path:
        """Write atomically (a temp file in the same folder, then ``os.replace``) under the
        key of the anchor's kind (canonical or serving)."""
        if anchor.kind not in (CANONICAL_KIND, SERVING_KIND):
            raise ValueError(f"an anchor cache holds canonical or serving anchors, not "
                             f"{anchor.kind!r}")
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path_for(preset, anchor.kind)
        with atomic_write(path) as handle:
            np.savez(handle, codes=anchor.codes.astype(np.int64),
                     text=np.array(anchor.text), key=np.array(self.key(preset, anchor.kind)),
                     kind=np.array(anchor.kind), made_with=np.array(anchor.made_with))
        return path

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

    # ---- building ------------------------------------------------------------------

    def ensure_all(self, presets: list[VoicePreset], make: MakeCodes, batch_size: int = 8,
                   log_progress: bool = True) -> dict[str, Anchor]:
        """Anchors for ``presets`` (by name): cached ones loaded, missing ones made.

        Missing anchors are decoded in batches by ``make`` (an
        :class:`.maker.AnchorMaker`'s ``codes_on``); every item carries its own seed, so
        the codes equal a lone decode. ``log_progress`` False leaves the progress lines to
        the caller (the background builder counts over all its batches). Voices of the
        same content
        (``pt-female`` and ``pt-BR-female``) share one anchor, made once.
        """
        anchors: dict[str, Anchor] = {}
        missing: list[VoicePreset] = []
        sharing: dict[str, list[VoicePreset]] = {}  # cache key -> the other voices of it
        for preset in presets:
            cached = self.load(preset)
            if cached is not None:
                anchors[preset.name] = cached
                continue
            key = self.key(preset)
            if key in sharing:
                sharing[key].append(preset)
            else:
                sharing[key] = []
                missing.append(preset)
        size = max(1, batch_size)
        if missing and log_progress:
            _LOGGER.info("Voice anchors: building %d (%d cached), %d at a time; only the first "
                         "start does this, later starts load them from %s", len(missing),
                         len(anchors), size, self.directory)
        # The background builder counts over all its batches: its own progress, not this.
        work = Progress(ANCHORS, PROGRESS_LABEL, len(missing), unit="built", item="anchor",
                        interval_s=ANCHOR_LINES_S, logger=_LOGGER
                        ) if missing and log_progress else None
        with work or contextlib.nullcontext():
            for start in range(0, len(missing), size):
                group = missing[start:start + size]
                _LOGGER.info("Generating the anchor for voice %s",
                             ", ".join(repr(preset.name) for preset in group))
                mode, codes_list = make([anchor_request(p) for p in group])
                for preset, codes in zip(group, codes_list, strict=True):
                    anchor = Anchor(codes=np.asarray(codes, dtype=np.int64),
                                    text=anchor_text_for(preset), kind=mode.kind,
                                    made_with=mode.label)
                    self._store(preset, anchor)
                    anchors[preset.name] = anchor
                    for other in sharing[self.key(preset)]:
                        anchors[other.name] = anchor
                if work is not None:
                    work.set(start + len(group))
            if work is not None:
                work.log()
        return anchors

    def get_or_create(self, preset: VoicePreset, make: MakeCodes) -> Anchor:
        """Load the anchor of ``preset`` or make it (``make``) and cache it."""
        anchor = self.load(preset)
        if anchor is not None:
            _LOGGER.debug("Anchor for voice %r loaded from cache", preset.name)
            return anchor
        _LOGGER.info("Generating the anchor for voice %r", preset.name)
        with Progress(ANCHORS, f"The anchor of voice {preset.name!r}", unit="built",
                      item="anchor", logger=_LOGGER):
            mode, (codes,) = make([anchor_request(preset)])
        anchor = Anchor(codes=np.asarray(codes, dtype=np.int64), text=anchor_text_for(preset),
                        kind=mode.kind, made_with=mode.label)
        self._store(preset, anchor)
        return anchor
