"""Cloned voices: folders under ``<data-dir>/voices/`` and their cached clone prompts.

A folder voice is ``<data-dir>/voices/<name>/`` holding ``reference.wav`` (or ``.flac`` /
``.ogg``), ``reference.txt`` (the exact words spoken; required, since no speech recognition
model ships) and optionally ``voice.yaml`` with ``language`` (or ``languages``; a regional
variant's tag such as ``pt-BR`` reads that variant's way), ``description`` and
``normalize_text``. Encoding a reference takes seconds, so the prompt (codes, transcript,
RMS) is cached under the data dir, keyed by the audio file's sha256, the transcript and the
engine's model fingerprint: a restart never re-encodes, a changed file does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import yaml

from wyoming_omnivoice.engine import (
    PROMPT_FORMAT_VERSION,
    VoicePrompt,
    load_reference_audio,
    read_prompt_extras,
)
from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.model.file_hash import sha256_file
from wyoming_omnivoice.text.characters import TextRefused, check_characters
from wyoming_omnivoice.user_files import (
    TEXT_LIMIT,
    UserFileError,
    describe_unusable,
    read_user_text,
)
from wyoming_omnivoice.voices.language_list import VoiceLanguages, parse_languages
from wyoming_omnivoice.voices.names import check_voice_name
from wyoming_omnivoice.voices.reference import CloneReference

_LOGGER = logging.getLogger(__name__)

VOICES_DIR = "voices"
AUDIO_NAMES = ("reference.wav", "reference.flac", "reference.ogg")
TRANSCRIPT_NAME = "reference.txt"
META_NAME = "voice.yaml"
META_KEYS = frozenset({"language", "languages", "description", "normalize_text"})


class Encoder(Protocol):
    """What encoding a reference needs: an `Engine`, or one that hands the work to the
    engine's thread (`voice_assets.WorkerEncoder`)."""

    @property
    def fingerprint(self) -> str: ...

    def encode_reference(self, wav: Any, sample_rate: int, ref_text: str) -> VoicePrompt: ...


@dataclass(frozen=True)
class ClonedVoiceSpec:
    """A cloned voice as found in a voice folder: its reference and how it is advertised."""

    name: str
    reference: CloneReference
    language: str | None = None
    description: str | None = None
    normalize_text: bool | None = None
    #: All the languages the voice speaks (``languages`` in voice.yaml); ``language`` is
    #: the first of them.
    languages: tuple[str, ...] | None = None
    #: The regional variant its languages name (``pt-BR``), if any.
    variant: str | None = None

    @property
    def audio_path(self) -> Path:
        return self.reference.audio_path

    def read_transcript(self) -> str:
        """The transcript, stripped; ValueError naming the file when it is missing."""
        return self.reference.read_transcript()


# ---------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------


def voices_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / VOICES_DIR


def discover_cloned_voices(
    data_dir: str | Path, *, on_error: Literal["skip", "raise"] = "skip",
    problems: dict[Path, str] | None = None,
) -> list[ClonedVoiceSpec]:
    """Voice folders under ``<data_dir>/voices/``, sorted by name.

    A broken folder is skipped (so one bad folder does not take the other voices down):
    its problem goes into ``problems`` (folder -> message) when given, else one error
    line is logged; or it raises ValueError (``on_error="raise"``).
    """
    root = voices_dir(data_dir)
    if not root.is_dir():
        return []
    specs: list[ClonedVoiceSpec] = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        try:
            specs.append(read_voice_folder(folder, voices_root=root))
        except ValueError as err:
            if on_error == "raise":
                raise
            if problems is not None:
                problems[folder] = str(err)
            else:
                _LOGGER.error("Voice folder %s skipped: %s", folder, one_line(str(err)))
    return specs


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def read_voice_folder(folder: Path, *, voices_root: Path | None = None) -> ClonedVoiceSpec:
    """One voice folder -> spec; ValueError naming the file for every problem."""
    folder = Path(folder)
    name = check_voice_name(folder.name)
    root = voices_root if voices_root is not None else folder.parent
    if not _inside(folder, root):
        raise ValueError(f"Voice folder {folder} points outside {root}; it is not used.")
    present = [folder / n for n in AUDIO_NAMES if (folder / n).is_file()]
    if not present:
        for audio_name in AUDIO_NAMES:  # there, but a FIFO, a link loop, a dangling link
            path = folder / audio_name
            problem = describe_unusable(path) if os.path.lexists(path) else None
            if problem is not None:
                raise ValueError(f"{path} {problem}; replace it with the recording itself "
                                 "(a WAV, FLAC or OGG file).")
        others = sorted(
            p.name for p in folder.iterdir()
            if p.name.lower().startswith("reference.") and p.name != TRANSCRIPT_NAME
            and p.name not in AUDIO_NAMES
        )
        hint = f" (found {', '.join(others)}: rename it)" if others else ""
        raise ValueError(
            f"Voice folder {folder} has no reference audio: add one of "
            f"{', '.join(AUDIO_NAMES)}{hint}."
        )
    audio = present[0]
    if len(present) > 1:
        _LOGGER.warning("Voice folder %s has several reference files; using %s",
                        folder, audio.name)
    transcript_path = folder / TRANSCRIPT_NAME
    for path in (audio, transcript_path):
        if path.exists() and not _inside(path, folder):
            raise ValueError(f"{path} points outside its voice folder; it is not used.")
    meta = _read_meta(folder / META_NAME)
    reference = CloneReference(audio_path=audio, transcript_path=transcript_path)
    transcript = reference.read_transcript()  # fail early: a voice without words is useless
    return ClonedVoiceSpec(
        name=name, reference=CloneReference(audio, transcript, transcript_path), **meta)


def _read_meta(path: Path) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    try:
        data = yaml.safe_load(read_user_text(path, limit=TEXT_LIMIT))
    except UserFileError as err:
        raise ValueError(str(err)) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ValueError(f"{path} is not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must be a mapping with keys {', '.join(sorted(META_KEYS))}.")
    unknown = sorted(set(map(str, data)) - META_KEYS)
    if unknown:
        raise ValueError(
            f"{path}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(META_KEYS))}."
        )
    meta: dict[str, Any] = {}
    for key in ("language", "description"):
        value = data.get(key)
        if value is not None:
            if not isinstance(value, str | int | float) or not str(value).strip():
                raise ValueError(f"{path}: {key} must be a non-empty text.")
            try:
                meta[key] = check_characters(str(value)).strip()
            except TextRefused as err:
                raise ValueError(f"{path}: {key}: {err}") from None
    written = [meta["language"]] if "language" in meta else None
    if "languages" in data:
        if written is not None:
            raise ValueError(f"{path}: give either language or languages, not both.")
        written = data["languages"]
    if written is not None:
        languages, variant = _meta_languages(written, path)
        meta.update(language=languages[0], languages=languages, variant=variant)
    normalize = data.get("normalize_text")
    if normalize is not None:
        if not isinstance(normalize, bool):
            raise ValueError(f"{path}: normalize_text must be true or false.")
        meta["normalize_text"] = normalize
    return meta


def _meta_languages(value: Any, path: Path) -> VoiceLanguages:
    """Ids, names or a regional variant's tag (``pt-BR``, :mod:`.language_list`)."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{path}: languages must be a list of language ids, e.g. [en, de].")
    try:
        return parse_languages(value)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None


# ---------------------------------------------------------------------------------------
# Prompt cache
# ---------------------------------------------------------------------------------------


def cache_path(cache_dir: str | Path, name: str) -> Path:
    """The cache file of voice ``name``: a sanitised stem plus a hash, never a path."""
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:40] or "voice"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    return Path(cache_dir) / f"{stem}-{digest}.npz"


def prompt_cache_key(audio_sha256: str, transcript: str, fingerprint: str) -> str:
    material = "\n".join([f"v{PROMPT_FORMAT_VERSION}", audio_sha256, fingerprint, transcript])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


def load_clone_prompt(engine: Encoder, spec: ClonedVoiceSpec, cache_dir: str | Path
                      ) -> VoicePrompt:
    """The voice's `VoicePrompt`, from the cache when its key matches, else encoded.

    ``engine`` is an `Engine` (``encode_reference`` and ``fingerprint``). Errors about the
    reference are ValueError naming the audio file.
    """
    transcript = spec.read_transcript()
    if not spec.audio_path.is_file():
        raise ValueError(f"Reference audio {spec.audio_path} does not exist.")
    key = prompt_cache_key(sha256_file(spec.audio_path), transcript, str(engine.fingerprint))
    path = cache_path(cache_dir, spec.name)
    if path.is_file():
        try:
            prompt, extras = read_prompt_extras(path)
        except (ValueError, OSError) as err:
            _LOGGER.warning("Cached clone prompt %s is unusable (%s); re-encoding", path, err)
        else:
            if extras.get("key") == key:
                _LOGGER.debug("Clone prompt for %r from cache %s", spec.name, path)
                return prompt
            _LOGGER.info("Reference of cloned voice %r changed; re-encoding", spec.name)

    wav, sample_rate = load_reference_audio(spec.audio_path)
    try:
        prompt = engine.encode_reference(wav, sample_rate, transcript)
    except ValueError as err:
        message = str(err)
        lead = "Reference audio"
        if message.startswith(lead):
            message = f"{lead} {spec.audio_path}{message[len(lead):]}"
        else:
            message = f"Reference audio {spec.audio_path}: {message}"
        raise ValueError(message) from None
    _LOGGER.info("Encoded cloned voice %r: %d frames (%.1f s) from %s", spec.name,
                 prompt.num_frames, prompt.num_frames / 25, spec.audio_path)
    try:
        prompt.save(path, key=key, name=spec.name, audio=str(spec.audio_path))
    except OSError as err:
        _LOGGER.warning("Could not cache the clone prompt at %s (%s); it will be "
                        "encoded again at the next start", path, err)
    return prompt
