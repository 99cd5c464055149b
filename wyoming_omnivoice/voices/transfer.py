"""One voice as one file: export on one machine, import on another, the same sound.

The file is JSON, data only (nothing in it is ever executed or unpickled), with a format
name and version. A designed voice carries its instruct and its anchor (the codes as
base64 of little-endian int16, shape ``[8, T]``, and the text they say), so the importing
server speaks the same person without building an anchor of its own. A cloned voice
carries its reference recording as sent (WAV, FLAC or OGG, base64) and transcript; the
importing server encodes it (the same model gives the same codes).

``languages`` holds engine ids (``["pt", "en"]``); a voice of a regional variant adds
``"variant": "pt-BR"`` (how it reads and which tags it lists), so a server that predates
the field still imports the file (reading the plain language's way) and no version bump
was needed. ``languages`` may also name the variant itself (``["pt-BR"]``).

:func:`parse_voice_file` checks everything before anything is written: a bad file is one
``ValueError`` saying what is wrong.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

import numpy as np

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.anchors.pinned import check_anchor_codes, check_anchor_text
from wyoming_omnivoice.engine import NUM_CODEBOOKS
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.ha_languages import variant_tags
from wyoming_omnivoice.voices.language_list import VoiceLanguages, parse_languages
from wyoming_omnivoice.voices.names import check_voice_name
from wyoming_omnivoice.voices.saved import Recording

FORMAT = "wyoming-omnivoice-voice"
FORMAT_VERSION = 1
MAX_DESCRIPTION = 500
MAX_TRANSCRIPT = 2000


@dataclass(frozen=True)
class VoiceFile:
    """A validated voice file: what a save needs."""

    name: str
    description: str
    languages: VoiceLanguages
    instruct: str | None = None
    speed: float | None = None
    anchor: Anchor | None = None
    recording: Recording | None = None
    transcript: str | None = None

    @property
    def kind(self) -> str:
        return "cloned" if self.recording is not None else "designed"


def export_voice(preset: VoicePreset, anchor: Anchor | None,
                 recording: Recording | None) -> dict[str, Any]:
    """The voice file of ``preset`` (with its anchor, or its recording when cloned)."""
    document: dict[str, Any] = {
        "format": FORMAT, "version": FORMAT_VERSION, "name": preset.name,
        "description": preset.description, "languages": list(preset.languages),
    }
    if preset.variant is not None:  # a reader of version 1 without it reads the plain id
        document["variant"] = preset.variant
    if preset.speed is not None:
        document["speed"] = preset.speed
    if preset.is_cloned:
        if recording is None or preset.clone is None:
            raise ValueError(f"Voice {preset.name!r}: its recording is not available")
        document["kind"] = "cloned"
        document["cloned"] = {"transcript": preset.clone.read_transcript(),
                              "audio_type": recording.kind,
                              "audio": base64.b64encode(recording.data).decode("ascii")}
        return document
    if anchor is None:
        raise ValueError(f"Voice {preset.name!r} has no anchor yet; listen to it once first")
    document["kind"] = "designed"
    document["designed"] = {
        "instruct": preset.instruct,
        "anchor": {"text": anchor.text, "shape": list(anchor.codes.shape), "dtype": "<i2",
                   "codes": base64.b64encode(anchor.codes.astype("<i2").tobytes())
                   .decode("ascii")},
    }
    return document


def _field(document: dict[str, Any], key: str, kind: type | tuple[type, ...],
           where: str = "the voice file") -> Any:
    value = document.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{where}: {key!r} is missing or has the wrong type")
    return value


def _b64(value: Any, what: str, limit: int) -> bytes:
    if not isinstance(value, str) or len(value) > limit * 4 // 3 + 4:
        raise ValueError(f"the voice file: {what} is missing or longer than {limit} bytes")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"the voice file: {what} is not valid base64") from None


def parse_voice_file(document: Any, *, max_audio_bytes: int,
                     sniff: Any = None) -> VoiceFile:
    """Validate a loaded voice file; ``sniff(bytes) -> kind | None`` checks a recording."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"This is not a voice file (expected \"format\": \"{FORMAT}\")")
    version = document.get("version")
    if version != FORMAT_VERSION:
        raise ValueError(f"Voice file version {version!r} is not supported; this server reads "
                         f"version {FORMAT_VERSION}")
    name = check_voice_name(_field(document, "name", str))
    description = _field(document, "description", str).strip() or name
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(f"the voice file: the description is over {MAX_DESCRIPTION} characters")
    languages = check_languages(_field(document, "languages", list),
                                document.get("variant"))
    speed = document.get("speed")
    if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int | float)
                              or not 0.25 <= float(speed) <= 4.0):
        raise ValueError("the voice file: 'speed' must be a number from 0.25 to 4")
    kind = document.get("kind")
    if kind == "designed":
        designed = _field(document, "designed", dict)
        instruct = designed.get("instruct")
        if instruct is not None and not isinstance(instruct, str):
            raise ValueError("the voice file: 'instruct' must be text")
        raw = _field(designed, "anchor", dict, "the voice file's anchor")
        shape = _field(raw, "shape", list, "the voice file's anchor")
        if raw.get("dtype") != "<i2" or len(shape) != 2 or shape[0] != NUM_CODEBOOKS \
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in shape):
            raise ValueError(f"the voice file: the anchor must be <i2 codes of shape "
                             f"[{NUM_CODEBOOKS}, T]")
        data = _b64(raw.get("codes"), "the anchor codes", 2 * NUM_CODEBOOKS * 1500)
        if len(data) != 2 * shape[0] * shape[1]:
            raise ValueError("the voice file: the anchor codes do not match their shape")
        codes = np.frombuffer(data, dtype="<i2").reshape(shape)
        anchor = Anchor(codes=check_anchor_codes(codes, "the voice file"),
                        text=check_anchor_text(raw.get("text"), "the voice file"))
        return VoiceFile(name, description, languages, instruct=instruct or None,
                         speed=None if speed is None else float(speed), anchor=anchor)
    if kind == "cloned":
        clone = _field(document, "cloned", dict)
        transcript = " ".join(str(_field(clone, "transcript", str, "the voice file")).split())
        if not transcript or len(transcript) > MAX_TRANSCRIPT:
            raise ValueError(f"the voice file: the transcript must be 1 to {MAX_TRANSCRIPT} "
                             "characters")
        audio = _b64(clone.get("audio"), "the recording", max_audio_bytes)
        found = sniff(audio) if sniff is not None else clone.get("audio_type")
        if found is None or found != clone.get("audio_type"):
            raise ValueError("the voice file: the recording is not the WAV, FLAC or OGG file "
                             "it says it is")
        return VoiceFile(name, description, languages,
                         speed=None if speed is None else float(speed),
                         recording=Recording(audio, found), transcript=transcript)
    raise ValueError("the voice file: 'kind' must be \"designed\" or \"cloned\"")


def check_languages(values: list[Any], variant: Any = None) -> VoiceLanguages:
    """Language ids, names or a regional variant's tag (``pt-BR``) -> the engine's ids
    (order kept) and the variant; ``variant`` (the file's own field) names it apart from
    the ids. ValueError for a bad one."""
    if not values or len(values) > 64:
        raise ValueError("Give 1 to 64 languages")
    languages = parse_languages(values)
    if variant is None:
        return languages
    if not isinstance(variant, str) or languages.variant not in (None, variant) or not any(
            variant_tags(language, variant) is not None for language in languages.languages):
        raise ValueError(f"the voice file: 'variant' {str(variant)[:20]!r} is not a regional "
                         "variant of its languages (such as pt-BR for pt)")
    return VoiceLanguages(languages.languages, variant)
