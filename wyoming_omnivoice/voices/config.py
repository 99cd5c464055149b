"""Voice presets from YAML: the built-in file, the user's ``--voices-file``, validation.

Presets are validated with the engine's own instruct and language rules; every problem
names the file, the entry and what is allowed. At start-up a bad entry costs only itself
(pass ``problems``): it is reported and skipped, every other voice is served.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from wyoming_omnivoice.engine import normalize_instruct
from wyoming_omnivoice.text.characters import TextRefused, check_characters
from wyoming_omnivoice.user_files import (
    TEXT_LIMIT,
    VOICES_FILE_LIMIT,
    UserFileError,
    read_user_text,
)
from wyoming_omnivoice.voices.catalog import BUILTIN_SOURCE, VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.language_list import VoiceLanguages, parse_languages
from wyoming_omnivoice.voices.names import VOICE_NAME_RE
from wyoming_omnivoice.voices.reference import CloneReference
from wyoming_omnivoice.voices.templates import (
    apply_language_overrides,
    expand,
    expand_all,
    unknown_overrides,
)

_LOGGER = logging.getLogger(__name__)

DESIGN_KEYS = frozenset(
    {"name", "description", "instruct", "languages", "language", "speed", "anchor",
     "anchor_text", "anchor_file", "normalize_text", "per_language"}
)
CLONE_KEYS = frozenset(
    {"name", "description", "reference_audio", "reference_text", "reference_text_file",
     "instruct", "languages", "language", "speed", "normalize_text"}
)
ALL_KEYS = DESIGN_KEYS | CLONE_KEYS

MIN_SPEED = 0.25
MAX_SPEED = 4.0


class VoiceConfigError(ValueError):
    """A voices file or one of its entries is invalid; the message says where and why."""


@dataclass(frozen=True)
class VoiceProblem:
    """A voice (or a whole file) that is not served, and why (file, entry and the fix)."""

    message: str
    #: The voice's name when the entry has a usable one.
    name: str | None = None


def _entry_label(source: str, index: int, entry: Mapping[str, Any] | Any) -> str:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    label = f"{source}: voice entry #{index + 1}"
    return f"{label} ({name!r})" if name else label


def _parse_languages(value: Any, label: str) -> VoiceLanguages:
    """Ids, names or a regional variant's tag (``pt-BR``, :mod:`.language_list`)."""
    items: Sequence[Any]
    if isinstance(value, str):
        items = [part for part in re.split(r"[,\s]+", value) if part]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise VoiceConfigError(f"{label}: 'languages' must be a list of language ids or names")
    if not items:
        raise VoiceConfigError(f"{label}: 'languages' must name at least one language")
    try:
        return parse_languages(expand_all(str(item) for item in items))
    except ValueError as err:
        raise VoiceConfigError(f"{label}: {err}") from None


def _parse_speed(value: Any, label: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VoiceConfigError(f"{label}: 'speed' must be a number, got {value!r}")
    speed = float(value)
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise VoiceConfigError(
            f"{label}: 'speed' {speed} is out of range ({MIN_SPEED} to {MAX_SPEED}; 1.0 is normal)"
        )
    return speed


def _parse_bool(value: Any, key: str, label: str, default: bool | None) -> bool | None:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise VoiceConfigError(f"{label}: '{key}' must be true or false, got {value!r}")
    return value


def _parse_text(value: Any, key: str, label: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise VoiceConfigError(f"{label}: '{key}' must be a non-empty string")
    try:  # a YAML escape can write what no text holds (a lone surrogate): the voice's own
        return check_characters(value).strip()  # problem, never describe's for everyone
    except TextRefused as err:
        raise VoiceConfigError(f"{label}: '{key}': {err}") from None


def _check_instruct(instruct: str, text: str, label: str) -> None:
    try:
        normalize_instruct(instruct, text)
    except ValueError as err:
        raise VoiceConfigError(f"{label}: bad instruct {instruct!r}: {err}") from None


def parse_preset(entry: Any, *, source: str, index: int, base_dir: Path | None) -> VoicePreset:
    """Validate one YAML entry and turn it into a :class:`VoicePreset`."""
    label = _entry_label(source, index, entry)
    if not isinstance(entry, Mapping):
        raise VoiceConfigError(f"{label}: each voice must be a mapping with at least 'name'")
    unknown = sorted(set(map(str, entry)) - ALL_KEYS)
    if unknown:
        raise VoiceConfigError(
            f"{label}: unknown key(s) {', '.join(unknown)}; allowed keys: "
            f"{', '.join(sorted(ALL_KEYS))}"
        )
    name = entry.get("name")
    if not isinstance(name, str) or not VOICE_NAME_RE.match(name):
        raise VoiceConfigError(
            f"{label}: 'name' must be 1-64 letters, digits, '.', '_', '+' or '-' "
            f"(no spaces or slashes), got {name!r}"
        )
    if "languages" in entry and "language" in entry:
        raise VoiceConfigError(f"{label}: give either 'language' or 'languages', not both")
    raw_languages = entry.get("languages", entry.get("language"))
    if raw_languages is None:
        raise VoiceConfigError(f"{label}: 'languages' is required (for example [en])")
    languages, variant = _parse_languages(raw_languages, label)
    description = _parse_text(entry.get("description"), "description", label) or name
    instruct = _parse_text(entry.get("instruct"), "instruct", label)
    speed = _parse_speed(entry.get("speed"), label)
    normalize = _parse_bool(entry.get("normalize_text"), "normalize_text", label, None)

    if "reference_audio" in entry:
        extra = sorted(set(map(str, entry)) - CLONE_KEYS)
        if extra:
            raise VoiceConfigError(
                f"{label}: {', '.join(extra)} cannot be used with reference_audio (a cloned "
                "voice has no anchor)"
            )
        audio = _parse_text(entry.get("reference_audio"), "reference_audio", label)
        assert_path = Path(audio or "").expanduser()
        if not assert_path.is_absolute() and base_dir is not None:
            assert_path = base_dir / assert_path
        if not assert_path.is_file():
            raise VoiceConfigError(f"{label}: reference_audio {assert_path} does not exist")
        ref_text = _parse_text(entry.get("reference_text"), "reference_text", label)
        text_file = _parse_text(entry.get("reference_text_file"), "reference_text_file", label)
        if text_file is not None:
            if ref_text is not None:
                raise VoiceConfigError(
                    f"{label}: give either reference_text or reference_text_file, not both"
                )
            text_path = Path(text_file).expanduser()
            if not text_path.is_absolute() and base_dir is not None:
                text_path = base_dir / text_path
            try:
                ref_text = read_user_text(text_path, limit=TEXT_LIMIT).strip()
            except UserFileError as err:
                raise VoiceConfigError(f"{label}: reference_text_file {err}") from None
            except (OSError, UnicodeDecodeError) as err:
                raise VoiceConfigError(f"{label}: cannot read {text_path}: {err}") from None
        if not ref_text:
            raise VoiceConfigError(
                f"{label}: a cloned voice needs 'reference_text' (the exact words spoken in "
                "the reference audio); no speech recognizer is shipped to guess it"
            )
        if instruct is not None:
            _check_instruct(instruct, "", label)
        return VoicePreset(
            name=name, description=description, languages=languages, instruct=instruct,
            speed=speed, anchor=False, normalize_text=normalize,
            clone=CloneReference(assert_path.resolve(), ref_text), source=source,
            variant=variant,
        )

    if "reference_text" in entry or "reference_text_file" in entry:
        raise VoiceConfigError(f"{label}: reference_text needs reference_audio next to it")
    anchor = _parse_bool(entry.get("anchor"), "anchor", label, True)
    anchor_text = _parse_text(entry.get("anchor_text"), "anchor_text", label)
    per_language = _parse_bool(entry.get("per_language"), "per_language", label, False)
    if per_language and anchor_text is not None:
        raise VoiceConfigError(f"{label}: a per_language voice takes the anchor text of each "
                               "language; remove 'anchor_text'")
    if instruct is not None:
        _check_instruct(instruct, anchor_text or "", label)
    anchor_file = _parse_anchor_file(entry.get("anchor_file"), label, base_dir)
    if anchor_file is not None and (per_language or not anchor or anchor_text is not None):
        raise VoiceConfigError(f"{label}: 'anchor_file' pins the voice to a recorded anchor; "
                               "it cannot be used with per_language, anchor: false or "
                               "anchor_text")
    return VoicePreset(
        name=name, description=description, languages=languages, instruct=instruct,
        speed=speed, anchor=bool(anchor), anchor_text=anchor_text, normalize_text=normalize,
        source=source, per_language=bool(per_language), anchor_file=anchor_file,
        variant=variant,
    )


def _parse_anchor_file(value: Any, label: str, base_dir: Path | None) -> Path | None:
    """``anchor_file``: an anchor file (relative to the voices file's folder) that must
    exist; its content is checked when the voice is prepared (:mod:`.pinned`)."""
    text = _parse_text(value, "anchor_file", label)
    if text is None:
        return None
    path = Path(text).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise VoiceConfigError(f"{label}: anchor_file {path} does not exist")
    return path.resolve()


def _parse_voice_languages(value: Any, source: str, problems: list[VoiceProblem] | None
                           ) -> dict[str, VoiceLanguages]:
    """The ``voice_languages`` mapping: preset name -> its languages (see voice_templates)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise VoiceConfigError(f"{source}: 'voice_languages' must map voice names to language "
                               "lists, e.g. 'child: [en, de]'")
    overrides: dict[str, VoiceLanguages] = {}
    for name, languages in value.items():
        try:
            overrides[str(name)] = _parse_languages(
                languages, f"{source}: voice_languages entry {str(name)!r}")
        except VoiceConfigError as err:
            if problems is None:
                raise
            problems.append(VoiceProblem(str(err)))
    return overrides


def parse_voices_document(document: Any, *, source: str, base_dir: Path | None = None,
                          problems: list[VoiceProblem] | None = None,
                          language_overrides: dict[str, VoiceLanguages] | None = None
                          ) -> list[VoicePreset]:
    """Parse a loaded YAML document: a mapping with ``voices: [...]`` (and optionally
    ``voice_languages``, added to ``language_overrides``) or a bare list.

    A bad entry raises :class:`VoiceConfigError`, or, when ``problems`` is given, is added
    there and skipped. A document that is not a voices list always raises.
    """
    if document is None:
        return []
    if isinstance(document, Mapping):
        unknown = sorted(set(map(str, document)) - {"voices", "voice_languages"})
        if unknown:
            raise VoiceConfigError(
                f"{source}: unknown top-level key(s) {', '.join(unknown)}; expected 'voices' "
                "or 'voice_languages'"
            )
        overrides = _parse_voice_languages(document.get("voice_languages"), source, problems)
        if language_overrides is not None:
            language_overrides.update(overrides)
        entries = document.get("voices") or []
    else:
        entries = document
    if not isinstance(entries, list):
        raise VoiceConfigError(f"{source}: 'voices' must be a list of voice entries")
    presets: list[VoicePreset] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        try:
            preset = parse_preset(entry, source=source, index=index, base_dir=base_dir)
            if preset.name in seen:
                raise VoiceConfigError(
                    f"{_entry_label(source, index, entry)}: the name is used twice in this "
                    "file; rename one of them"
                )
        except VoiceConfigError as err:
            if problems is None:
                raise
            problems.append(VoiceProblem(str(err), _usable_name(entry)))
            continue
        seen.add(preset.name)
        presets.append(preset)
    return presets


def _usable_name(entry: Any) -> str | None:
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return name if isinstance(name, str) and VOICE_NAME_RE.match(name) else None


def load_voices_file(path: Path, problems: list[VoiceProblem] | None = None,
                     language_overrides: dict[str, VoiceLanguages] | None = None
                     ) -> list[VoicePreset]:
    """Read and validate a user voices file (see :func:`parse_voices_document`).

    With ``problems``, a file that cannot be read at all is reported there too (as one
    problem without a voice name) and gives no voices.
    """
    source = str(path)
    try:
        try:
            text = read_user_text(path, limit=VOICES_FILE_LIMIT)
        except UserFileError as err:
            raise VoiceConfigError(f"Voices file {err}") from None
        except (OSError, UnicodeDecodeError) as err:
            raise VoiceConfigError(f"Cannot read voices file {source}: {err}") from None
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise VoiceConfigError(f"Voices file {source} is not valid YAML: {err}") from None
        return parse_voices_document(document, source=source, base_dir=Path(path).parent,
                                     problems=problems, language_overrides=language_overrides)
    except VoiceConfigError as err:
        if problems is None:
            raise
        problems.append(VoiceProblem(str(err)))
        return []


def load_builtin_voices() -> list[VoicePreset]:
    """The presets shipped in ``config/voices.yaml``."""
    try:
        text = resources.files("wyoming_omnivoice.config").joinpath("voices.yaml").read_text(
            encoding="utf-8"
        )
    except (ModuleNotFoundError, FileNotFoundError):
        # Running from a source checkout without an install: read the file next to the package.
        text = (Path(__file__).resolve().parents[2] / "config" / "voices.yaml").read_text(
            encoding="utf-8"
        )
    return parse_voices_document(yaml.safe_load(text), source=BUILTIN_SOURCE)


def build_catalog(voices_file: Path | None = None, extra: Iterable[VoicePreset] = (),
                  problems: list[VoiceProblem] | None = None) -> VoiceCatalog:
    """Built-in presets, then ``extra`` (e.g. folder voices), then the user's file; then its
    ``voice_languages``, then per-language presets expanded (:mod:`.voices.templates`).

    With ``problems``, bad entries of the user's file are reported there and skipped.
    """
    catalog = VoiceCatalog(load_builtin_voices()).merged(extra)
    overrides: dict[str, VoiceLanguages] = {}
    if voices_file is not None:
        catalog = catalog.merged(load_voices_file(voices_file, problems, overrides))
    for name in unknown_overrides(catalog, overrides):
        message = (f"{voices_file}: voice_languages names {name!r}, which is no voice; "
                   "ignored (names: a built-in or your own voice, e.g. 'female' or 'child')")
        if problems is None:
            raise VoiceConfigError(message)
        problems.append(VoiceProblem(message))
    return expand(apply_language_overrides(catalog, overrides))
