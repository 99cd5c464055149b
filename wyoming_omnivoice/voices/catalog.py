"""Voice presets and the catalog: lookup and routing a request to a voice.

A preset is either *designed* (an OmniVoice instruct such as ``"female, british accent"``,
optionally pinned to a cached anchor sample, see :mod:`.anchors`) or *cloned* (a reference
recording and its transcript). Presets come from YAML (:mod:`.voices.config`) and voice
folders (:mod:`.voices.cloned`).

The catalog also holds the household's voices (:mod:`.household`): a voice chosen per
language (a written tag: ``de``, ``pt-BR``) that speaks a request naming no voice in that
language, and that the voice list (:meth:`VoiceCatalog.advertised`) puts first for that
language, its description marked so that Home Assistant, which sorts a language's voices
by description, lists it first too (a new pipeline takes the first).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyoming_omnivoice.engine import advertised_language_code
from wyoming_omnivoice.voices.ha_languages import (
    language_for_tag,
    tags_for,
    variant_for_tag,
    variant_tags,
)
from wyoming_omnivoice.voices.reference import CloneReference

_LOGGER = logging.getLogger(__name__)

BUILTIN_SOURCE = "built-in voices.yaml"

_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

#: Put before the description of a household voice where it is advertised for its
#: language: "(" sorts before every letter and digit, so Home Assistant's sorted list of
#: the language's voices starts with it, and the person sees why.
HOUSEHOLD_MARK = "(default) "


@dataclass(frozen=True)
class VoicePreset:
    """One voice as the server advertises and synthesizes it."""

    name: str
    description: str
    languages: tuple[str, ...]
    instruct: str | None = None
    speed: float | None = None
    anchor: bool = True
    anchor_text: str | None = None
    normalize_text: bool | None = None
    #: A cloned voice's reference (recording and transcript); None for a designed voice.
    clone: CloneReference | None = None
    source: str = BUILTIN_SOURCE
    #: A preset served once per language as ``<language>-<name>`` (see :mod:`.voices.templates`).
    per_language: bool = False
    #: For a voice generated from a per-language preset: that preset's name.
    template: str | None = None
    #: A designed voice pinned to an anchor kept in a file (picked in the voice studio or
    #: imported): loaded as is, never rebuilt, so every replica speaks the same person
    #: whatever its precision and steps (see :mod:`.pinned`).
    anchor_file: Path | None = None
    #: For a per-language voice of a language with regional variants (``pt``): the variant
    #: it is served for (``pt`` or ``pt-BR``, :data:`.ha_languages.REGIONAL_VARIANTS`). It
    #: lists that variant's tags only and its text is read that variant's way; it shares
    #: the anchor of the language's other variants (same instruct and language). Any other
    #: voice has one when its languages name it (``languages: [pt-BR]``,
    #: :mod:`.language_list`).
    variant: str | None = None

    @property
    def is_cloned(self) -> bool:
        return self.clone is not None

    @property
    def uses_anchor(self) -> bool:
        """Designed voices are pinned to an anchor unless the preset turns it off."""
        return self.anchor and not self.is_cloned

    @property
    def language(self) -> str:
        """The main language (the first listed)."""
        return self.languages[0]

    def language_for(self, text: str) -> str:
        """The language to synthesize ``text`` in: Chinese text picks zh when listed."""
        if len(self.languages) > 1 and _CJK_RE.search(text):
            for language in self.languages:
                if language in ("zh", "yue") or language.startswith("zh"):
                    return language
        return self.languages[0]

    def reading_language(self, language: str) -> str:
        """The language whose rules read text spoken in ``language`` (normalisation): the
        voice's regional variant when it is one of that language's (``pt-BR``), else the
        language itself."""
        if self.variant and variant_tags(language, self.variant) is not None:
            return self.variant
        return language

    def content_key(self) -> dict[str, Any]:
        """What defines the sound of a designed voice (anchor cache key material)."""
        return {
            "instruct": self.instruct,
            "language": self.language,
            "speed": self.speed,
            "anchor_text": self.anchor_text,
            "anchor_file": str(self.anchor_file) if self.anchor_file is not None else None,
        }

    def advertised_languages(self) -> list[str]:
        """Language tags for Home Assistant, order kept, no duplicates: every tag Home
        Assistant uses for a language of its Assist list (:mod:`.ha_languages`), else the
        usable ISO code."""
        codes: list[str] = []
        for language in self.languages:
            own = variant_tags(language, self.variant) if self.variant else None
            for code in (own or tags_for(language)
                         or (advertised_language_code(language) or language,)):
                if code not in codes:
                    codes.append(code)
        return codes


@dataclass(frozen=True)
class VoiceRoute:
    """The voice chosen for a request; ``note`` says why it is not the one asked for."""

    preset: VoicePreset
    note: str | None = None


def _clip(value: str, limit: int = 80) -> str:
    """A client-given name, shortened for a log line."""
    return value if len(value) <= limit else value[:limit] + "..."


@dataclass(frozen=True)
class Advertised:
    """One entry of the voice list: a voice, its description and the tags it is listed for
    (a household voice is listed twice when it also speaks languages it is not chosen for)."""

    preset: VoicePreset
    description: str
    languages: list[str]


def language_tags(written: str) -> tuple[str, ...]:
    """The advertised tags a written language names (``de``: every German tag, ``pt-BR``:
    Brazil's); () when it is no language."""
    from wyoming_omnivoice.voices.language_list import parse_languages

    try:
        (language,), variant = parse_languages([written])
    except ValueError:
        return ()
    probe = VoicePreset(name="-", description="", languages=(language,), variant=variant)
    # The id too (a request may name ``yue``), unless a regional variant is named: a plain
    # ``pt`` is not Brazil's.
    return (*probe.advertised_languages(), *((language,) if variant is None else ()))


class VoiceCatalog:
    """All presets by name, in a stable order (built-ins first, then user additions), and
    the household's voice per language (``household``: written tag -> voice name)."""

    def __init__(self, presets: Iterable[VoicePreset],
                 household: dict[str, str] | None = None) -> None:
        self._presets: dict[str, VoicePreset] = {}
        for preset in presets:
            self._presets[preset.name] = preset
        self._household = dict(household or {})

    def __len__(self) -> int:
        return len(self._presets)

    def __iter__(self) -> Iterator[VoicePreset]:
        return iter(self._presets.values())

    def __contains__(self, name: object) -> bool:
        return name in self._presets

    @property
    def names(self) -> list[str]:
        return list(self._presets)

    def get(self, name: str) -> VoicePreset | None:
        return self._presets.get(name)

    def find_for_language(self, language: str) -> VoicePreset | None:
        """The first voice that speaks ``language`` (an id, a name or an advertised code)."""
        wanted = {language.lower(), language.replace("_", "-").lower()}
        base = re.split(r"[-_]", language)[0].lower()
        for preset in self:
            codes = {code.lower() for code in preset.advertised_languages()}
            codes |= {lang.lower() for lang in preset.languages}
            if wanted & codes:
                return preset
        for preset in self:
            if any(re.split(r"[-_]", code)[0].lower() == base
                   for code in preset.advertised_languages()):
                return preset
        return None

    def _language_of_name(self, name: str) -> str | None:
        """The language an unknown name starts with, when voices of that language are named
        the same way (``de-female-old`` -> ``de``, ``pt-BR-female-old`` -> ``pt-BR``;
        ``no-such-voice`` -> None)."""
        prefix, dash, rest = name.partition("-")
        if not dash or not prefix:
            return None
        regional = f"{prefix}-{rest.partition('-')[0]}"  # pt-BR-female-old -> pt-BR
        variant = variant_for_tag(regional)
        if variant is not None and variant.casefold() == regional.casefold() and any(
                preset.variant == variant and preset.name.startswith(variant + "-")
                for preset in self):
            return variant
        language = language_for_tag(prefix)
        if language is None or not any(
                preset.language == language and preset.name.startswith(prefix + "-")
                for preset in self):
            return None
        return language

    def speaks(self, preset: VoicePreset, language: str) -> bool:
        return VoiceCatalog([preset]).find_for_language(language) is not None

    # ---- the household's voices ------------------------------------------------------

    @property
    def household(self) -> dict[str, str]:
        """Written language tag -> the household's voice for it (a copy)."""
        return dict(self._household)

    def with_household(self, household: dict[str, str]) -> VoiceCatalog:
        """The same voices with another choice of household voices."""
        return VoiceCatalog(self, household)

    def household_tags(self, written: str, preset: VoicePreset) -> list[str]:
        """The tags ``preset`` is advertised with that the written language names."""
        names = {tag.casefold() for tag in language_tags(written)}
        return [tag for tag in preset.advertised_languages() if tag.casefold() in names]

    def _household_order(self) -> list[tuple[str, str]]:
        """The choices, a regional variant's (``pt-BR``) before its language's (``pt``)."""
        return sorted(self._household.items(), key=lambda item: "-" not in item[0])

    def household_voice(self, language: str) -> VoicePreset | None:
        """The household's voice for a request's language (an id or a tag: ``de``,
        ``de-AT``, ``pt-BR``), when one is chosen and served."""
        wanted = language.replace("_", "-").casefold()
        for written, name in self._household_order():
            preset = self._presets.get(name)
            if preset is not None and wanted in {
                    tag.casefold() for tag in language_tags(written)}:
                return preset
        return None

    def advertised(self) -> list[Advertised]:
        """The voice list for clients: the household voices first, each for the tags of
        its chosen languages, its description marked (:data:`HOUSEHOLD_MARK`); then every
        voice in catalog order with the tags left."""
        chosen: dict[str, list[str]] = {}
        claimed: set[str] = set()  # a tag has one household voice (the variant's first)
        for written, name in self._household_order():
            preset = self._presets.get(name)
            if preset is not None:
                tags = chosen.setdefault(name, [])
                tags += [t for t in self.household_tags(written, preset) if t not in claimed]
                claimed.update(tags)
        entries = [Advertised(self._presets[name], HOUSEHOLD_MARK + self._presets[name]
                              .description, tags) for name, tags in chosen.items() if tags]
        for preset in self:
            left = [tag for tag in preset.advertised_languages()
                    if tag not in chosen.get(preset.name, ())]
            if left:
                entries.append(Advertised(preset, preset.description, left))
        return entries

    def best_for_language(self, language: str, default: VoicePreset) -> VoicePreset:
        """The household's voice for ``language``, else the default voice if it speaks
        it, else the first voice that does, else the default voice."""
        household = self.household_voice(language)
        if household is not None:
            return household
        if self.speaks(default, language):
            return default
        return self.find_for_language(language) or default

    def route(self, default: str, name: str | None = None,
              language: str | None = None) -> VoiceRoute:
        """The voice for a request naming ``name`` and/or ``language`` (both optional).

        - Neither: the household's voice of the default voice's language, else the
          default voice.
        - A known name (exact, else ignoring case): that voice.
        - An unknown name: the best voice for the request's language (``language`` if
          given, else the language its ``<language>-`` prefix names, as in ``de-female``,
          else the default voice's), with a note to log; never an error, so a voice saved
          in a client and later removed still speaks.
        - Only a language: the best voice for it (the household's first); the default
          voice (with a note) when no voice speaks it.
        """
        fallback = self._presets[default]
        if name:
            preset = self._presets.get(name)
            if preset is None:
                folded = name.casefold()
                preset = next((p for p in self if p.name.casefold() == folded), None)
            if preset is not None:
                return VoiceRoute(preset)
            wanted = language or self._language_of_name(name) or fallback.language
            best = self.best_for_language(wanted, fallback)
            return VoiceRoute(best, f"Unknown voice {_clip(name)!r}: speaking with {best.name!r}, "
                                    f"the voice for language {_clip(wanted)!r}")
        if language:
            if self.find_for_language(language) is None:
                return VoiceRoute(fallback, f"No voice speaks {_clip(language)!r}; using the "
                                            f"default voice {fallback.name!r}")
            return VoiceRoute(self.best_for_language(language, fallback))
        return VoiceRoute(self.household_voice(fallback.advertised_languages()[0]) or fallback)

    def merged(self, presets: Iterable[VoicePreset]) -> VoiceCatalog:
        """A new catalog where ``presets`` add to or replace (by name) the current ones."""
        merged = dict(self._presets)
        for preset in presets:
            if preset.name in merged:
                _LOGGER.info("Voice %r from %s replaces the one from %s", preset.name,
                             preset.source, merged[preset.name].source)
            merged[preset.name] = preset
        return VoiceCatalog(merged.values(), self._household)
