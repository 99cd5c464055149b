"""Per-language voices: presets whose instruct works in any language, served once per language.

Home Assistant never sends the pipeline's language to a TTS server, only the voice name, so
the language travels in the voice: a preset marked ``per_language: true`` (gender, age,
pitch and whisper work in every language; accents are English-only and dialects
Chinese-only, so those presets are not marked) becomes one voice per language, named
``<language>-<preset>`` (``de-female``, ``fr-child``), each listing only that language's
tags. A language with regional variants gets one voice per variant and preset
(``pt-female`` for Portugal, ``pt-BR-female`` for Brazil, :mod:`.ha_languages`), each
listing its variant's tags. A voice of the same name written out in a voices file wins
over the generated one (``zh-female`` keeps its Chinese instruct). ``languages: all``
means every Home Assistant language OmniVoice speaks (:mod:`.ha_languages`); ``[all,
nan]`` adds to it.

The top-level ``voice_languages`` mapping of a voices file restricts or extends the
languages of any preset by name, without repeating the preset::

    voice_languages:
      child: [en, de]            # children's voices only in English and German
      female: [all, nan]         # every Home Assistant language and Min Nan
      en-female-british: [en, de]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.ha_languages import ha_language_ids, variants_of
from wyoming_omnivoice.voices.language_list import VoiceLanguages

#: The word for "every Home Assistant language" in a ``languages`` list.
ALL = "all"


def expand_all(items: Iterable[str]) -> list[str]:
    """Language items with ``all`` replaced by the Home Assistant language ids (in order,
    no duplicates)."""
    languages: list[str] = []
    for item in items:
        for language in (ha_language_ids() if item.strip().casefold() == ALL else (item,)):
            if language not in languages:
                languages.append(language)
    return languages


def per_language_name(language: str, template: str) -> str:
    return f"{language}-{template}"


def expand(catalog: VoiceCatalog) -> VoiceCatalog:
    """The catalog with every per-language preset replaced by its per-language voices.

    Written-out voices keep their place; generated ones follow, language by language in
    the order of the first template that lists it, presets in file order within a
    language (its regional variants one after the other: ``pt-*``, then ``pt-BR-*``). A
    written-out voice of the same name wins over a generated one.
    """
    plain = [preset for preset in catalog if not preset.per_language]
    templates = [preset for preset in catalog if preset.per_language]
    taken = {preset.name for preset in plain}
    languages: list[str] = []
    for template in templates:
        languages.extend(lang for lang in template.languages if lang not in languages)
    generated: list[VoicePreset] = []
    for language in languages:
        for variant in variants_of(language) or (None,):
            for template in templates:
                name = per_language_name(variant or language, template.name)
                if language in template.languages and name not in taken:
                    taken.add(name)
                    generated.append(replace(template, name=name, languages=(language,),
                                             per_language=False, template=template.name,
                                             variant=variant))
    return VoiceCatalog([*plain, *generated])


def apply_language_overrides(catalog: VoiceCatalog,
                             overrides: Mapping[str, VoiceLanguages]) -> VoiceCatalog:
    """Presets named in ``overrides`` with their languages (and regional variant: ``[pt-BR]``)
    replaced (before :func:`expand`). A name that is no preset is ignored here (the caller
    reports it)."""
    if not overrides:
        return catalog
    return VoiceCatalog(
        replace(preset, languages=overrides[preset.name].languages,
                variant=overrides[preset.name].variant) if preset.name in overrides
        else preset
        for preset in catalog
    )


def unknown_overrides(catalog: VoiceCatalog, overrides: Mapping[str, Any]) -> list[str]:
    return [name for name in overrides if name not in catalog]
