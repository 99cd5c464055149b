"""What each voice brings to its requests: anchors (designed voices) and clone prompts.

At start-up :func:`prepare_voices` builds or loads both. A voice whose reference or anchor
cannot be made (unreadable, silent or too short recording, an instruct the engine refuses)
costs only itself: one error line names the file and the fix, and the voice is left out of
the catalog. Only a problem with the default voice (``--voice``) stops the start.

While the server runs, voice folders added under ``<data-dir>/voices/`` are picked up by
:func:`folder_voice_watcher`; their references are encoded on the inference worker's
thread (the engine's only user once the server runs).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from wyoming_omnivoice.anchors.cache import Anchor, AnchorCache, LegacyKey
from wyoming_omnivoice.anchors.lazy import DEFAULT_PRELOAD, AnchorBuilder, preloaded
from wyoming_omnivoice.anchors.maker import AnchorMaker
from wyoming_omnivoice.anchors.pinned import load_pinned_anchor
from wyoming_omnivoice.atomic import remove_stale_temp_files
from wyoming_omnivoice.engine import strict_language
from wyoming_omnivoice.errors import StartupError, one_line
from wyoming_omnivoice.model.file_hash import sha256_file
from wyoming_omnivoice.voices import cloned as cloned_voices
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.engine_thread import EngineThread
from wyoming_omnivoice.voices.watch import FolderVoiceWatcher, NewVoice

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, VoicePrompt

_LOGGER = logging.getLogger(__name__)

CLONE_PROMPT_CACHE = Path("cache") / "clone_prompts"


@dataclass(frozen=True)
class VoicePart:
    """What a voice brings to an engine request: its design and its reference (a cloned
    voice's clone prompt with its loudness, else a designed voice's anchor, else none)."""

    instruct: str | None = None
    speed: float | None = None
    ref_codes: Any = None
    ref_text: str | None = None
    ref_rms: float | None = None


@dataclass
class VoiceAssets:
    """Per-voice references the requests use: anchors and clone prompts."""

    anchors: dict[str, Anchor] = field(default_factory=dict)
    prompts: dict[str, VoicePrompt] = field(default_factory=dict)
    #: Builds the anchors of voices that were not preloaded, on their first use.
    builder: AnchorBuilder | None = None

    def anchor_for(self, preset: VoicePreset) -> Anchor | None:
        """The voice's anchor, built now when it was not preloaded (blocks the caller)."""
        anchor = self.anchors.get(preset.name)
        if anchor is None and preset.uses_anchor and self.builder is not None:
            anchor = self.builder.get(preset)
        return anchor

    def anchor_missing(self, preset: VoicePreset) -> bool:
        """A designed voice whose anchor is still to be built (on first use)."""
        return self.builder is not None and self.builder.worker is not None \
            and preset.name not in self.anchors and self.builder.missing(preset)

    def anchor_on(self, engine: Engine, preset: VoicePreset) -> Anchor | None:
        """On the engine's thread: the voice's anchor, built now with ``engine`` when it is
        missing (``AfterBackground`` while the background batch running now makes it)."""
        anchor = self.anchors.get(preset.name)
        if anchor is None and preset.uses_anchor and self.builder is not None:
            anchor = self.builder.anchor_on(engine, preset)
        return anchor

    def voice_part(self, preset: VoicePreset) -> VoicePart:
        """The voice's design and reference. An anchor not preloaded is built now before the
        worker runs (never on the event loop); once it runs, it is left out, for the
        request's own job to build (:meth:`anchor_missing`, :meth:`anchor_on`)."""
        prompt = self.prompts.get(preset.name)
        if prompt is not None:
            return VoicePart(preset.instruct, preset.speed, prompt.codes, prompt.text,
                             prompt.rms)
        anchor = None if self.anchor_missing(preset) else self.anchor_for(preset)
        if anchor is not None:
            return VoicePart(preset.instruct, preset.speed, anchor.codes, anchor.text)
        return VoicePart(preset.instruct, preset.speed)

    def attach(self, worker: EngineThread) -> None:
        """From now on, anchors are built on the worker's thread."""
        if self.builder is not None:
            self.builder.worker = worker

    def adopt_canonical(self, presets: list[VoicePreset]) -> None:
        """Serving-precision anchors replaced by canonical files that appeared since."""
        if self.builder is not None:
            self.builder.adopt_canonical(presets)

    def start_background(self) -> None:
        """The preloaded voices' anchors not built yet, built now in the background (once
        the worker runs: the server is ready meanwhile)."""
        if self.builder is not None:
            self.builder.start_background()


def preset_from_spec(spec: cloned_voices.ClonedVoiceSpec) -> VoicePreset:
    """The preset of a voice folder; ValueError naming the folder for a bad language."""
    try:
        language = strict_language(str(spec.language or "en")) or "en"
    except ValueError as err:
        raise ValueError(f"Cloned voice {spec.name!r}: {err}") from None
    return VoicePreset(
        name=spec.name,
        description=spec.description or f"{spec.name} (cloned voice)",
        languages=spec.languages or (language,),
        anchor=False,
        normalize_text=spec.normalize_text,
        clone=spec.reference,
        source=f"voice folder {spec.audio_path.parent}",
        variant=spec.variant,
    )


def clone_prompt_for(encoder: cloned_voices.Encoder, preset: VoicePreset,
                     data_dir: Path) -> VoicePrompt:
    """The clone prompt of a cloned preset (cached under the data dir)."""
    if preset.clone is None:
        raise ValueError(f"Voice {preset.name!r} has no reference audio")
    spec = cloned_voices.ClonedVoiceSpec(name=preset.name, reference=preset.clone,
                                         language=preset.language,
                                         description=preset.description)
    return cloned_voices.load_clone_prompt(encoder, spec, data_dir / CLONE_PROMPT_CACHE)


def cache_clone_prompt(data_dir: Path, fingerprint: str, preset: VoicePreset,
                       transcript: str, prompt: VoicePrompt) -> None:
    """A clone prompt encoded while running (the studio) cached as a start would cache it,
    so a restart does not encode it again (an unwritable cache is only a lost cache)."""
    if preset.clone is None:
        raise ValueError(f"Voice {preset.name!r} has no reference audio")
    audio = preset.clone.audio_path
    key = cloned_voices.prompt_cache_key(sha256_file(audio), transcript, fingerprint)
    path = cloned_voices.cache_path(data_dir / CLONE_PROMPT_CACHE, preset.name)
    with contextlib.suppress(OSError):
        prompt.save(path, key=key, name=preset.name, audio=str(audio))


def anchor_cache(engine: Engine, data_dir: Path, maker: AnchorMaker,
                 options: DecodeOptions) -> AnchorCache:
    """The anchor cache under the data dir: canonical anchors keyed by the files that
    decide the codes; the version-1 files of this server's steps found for migration."""
    return AnchorCache(data_dir / "anchors", engine.decode_fingerprint, maker.serving,
                       legacy=LegacyKey(engine.fingerprint, options.num_step,
                                        options.guidance_scale))


def prepare_voices(engine: Engine, catalog: VoiceCatalog, default: str, data_dir: Path,
                   options: DecodeOptions, batch_size: int,
                   preload: tuple[str, ...] = DEFAULT_PRELOAD,
                   maker: AnchorMaker | None = None
                   ) -> tuple[VoiceCatalog, VoiceAssets]:
    """Clone prompts for every voice, anchors for the voices of the ``preload`` languages
    (others: from the cache, else on first use); the catalog without the voices that
    failed (each logged once). StartupError when the default voice fails. ``maker`` makes
    new anchors (default: :func:`.anchors.maker.serving_maker`, canonical only when the
    engine itself runs fp32)."""
    if maker is None:
        from wyoming_omnivoice.anchors.maker import serving_maker

        maker = serving_maker(engine, options)
    assets = VoiceAssets()
    failed: dict[str, str] = {}
    for folder in (data_dir / "anchors", data_dir / CLONE_PROMPT_CACHE):
        remove_stale_temp_files(folder, ".*.tmp")  # left by a crash during a write
    cache = anchor_cache(engine, data_dir, maker, options)
    for preset in catalog:
        if preset.uses_anchor and preset.anchor_file is not None:
            try:  # pinned: loaded, never built (the same person on every replica)
                assets.anchors[preset.name] = load_pinned_anchor(preset.anchor_file)
            except ValueError as err:
                failed[preset.name] = f"Voice {preset.name!r} ({preset.source}): {err}"
    built = [preset for preset in catalog
             if preset.uses_anchor and preset.anchor_file is None]
    # Before ready: the default voice's anchor only; the other preloaded voices' are
    # built in the background once the worker runs (AnchorBuilder.start_background).
    first = [preset for preset in built if preset.name == default]
    background = [preset for preset in built
                  if preset.name != default and preloaded(preset, preload, default)]
    later = [preset for preset in built if not preloaded(preset, preload, default)]
    for preset in first:
        try:
            assets.anchors[preset.name] = cache.get_or_create(preset, maker.codes_on(engine))
        except ValueError as err:
            failed[preset.name] = f"Voice {preset.name!r} ({preset.source}): {err}"
    for preset in catalog:
        if not preset.is_cloned:
            continue
        try:
            assets.prompts[preset.name] = clone_prompt_for(engine, preset, data_dir)
        except ValueError as err:
            failed[preset.name] = f"Voice {preset.name!r} ({preset.source}): {err}"
    for preset in background + later:
        cached = cache.load(preset)
        if cached is not None:
            assets.anchors[preset.name] = cached
    assets.builder = AnchorBuilder(cache, engine, maker, assets.anchors,
                                   background=background, batch_size=batch_size)
    if later:
        _LOGGER.info("%d voice anchor(s) of other languages are cached, %d are built on "
                     "first use (--preload-languages)",
                     sum(preset.name in assets.anchors for preset in later),
                     sum(preset.name not in assets.anchors for preset in later))
    if default in failed:
        raise StartupError(f"The default voice (--voice) cannot be used: {failed[default]}")
    for message in failed.values():
        _LOGGER.error("Voice skipped: %s", one_line(message))
    kept = VoiceCatalog(preset for preset in catalog if preset.name not in failed)
    return kept, assets


class WorkerEncoder:
    """Encodes cloning references on the inference worker's thread (any thread may ask)."""

    def __init__(self, worker: EngineThread, fingerprint: str) -> None:
        self._worker = worker
        self.fingerprint = fingerprint

    def encode_reference(self, wav: np.ndarray[Any, np.dtype[Any]], sample_rate: int,
                         ref_text: str) -> VoicePrompt:
        def encode(engine: Engine) -> VoicePrompt:
            prompt: VoicePrompt = engine.encode_reference(wav, sample_rate, ref_text)
            return prompt

        return self._worker.call(encode).result()


def folder_voice_watcher(encoder: WorkerEncoder, data_dir: Path,
                         add: Callable[[list[NewVoice]], None]) -> FolderVoiceWatcher:
    """Adds voice folders created under <data-dir>/voices while the server runs."""

    def discover(problems: dict[Path, str]) -> list[cloned_voices.ClonedVoiceSpec]:
        return cloned_voices.discover_cloned_voices(data_dir, problems=problems)

    return FolderVoiceWatcher(
        cloned_voices.voices_dir(data_dir),
        discover=discover,
        to_preset=preset_from_spec,
        load_prompt=lambda preset: clone_prompt_for(encoder, preset, data_dir),
        on_found=add,
    )
