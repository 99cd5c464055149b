"""A voice's languages as a person writes them: ids, names, or a regional variant's tag.

``[pt-BR, en]`` is Portuguese read the Brazilian way, and English. The catalogue keeps
the engine's ids (``("pt", "en")``) and the variant apart (``pt-BR``,
:attr:`.catalog.VoicePreset.variant`); written back (the studio's voices file and voice
folders, its API) the variant's tag stands in the place of its language's id, so a saved
voice reads and is offered the same way after a restart. A plain id (``pt``) names no
variant: the voice lists every tag of the language and reads its default way (European).
The default variant has a tag of its own (``pt-PT``): such a voice lists that variant's
tags only, like ``pt-female``. One voice has at most one regional variant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from wyoming_omnivoice.engine import strict_language
from wyoming_omnivoice.voices.ha_languages import (
    REGIONAL_VARIANTS,
    language_for_tag,
    variant_for_tag,
    variant_tags,
)

#: The hint for a language that is no language (``none``: language-agnostic).
NOT_A_VOICE_LANGUAGE = "is not usable for a voice; name a language such as en, zh, de or English"


class VoiceLanguages(NamedTuple):
    """The engine ids a voice speaks, in order, and its regional variant, if any."""

    languages: tuple[str, ...]
    variant: str | None = None

    def written(self) -> list[str]:
        """The languages list a voices file or voice.yaml holds (``[pt-BR, en]``)."""
        return [written_tag(language, self.variant) for language in self.languages]


def regional(tag: str) -> tuple[str, str] | None:
    """``(language id, variant)`` for a tag naming a regional variant (``pt-BR``, ``pt_br``
    -> ``("pt", "pt-BR")``; ``pt-PT`` -> ``("pt", "pt")``); None for a plain id (``pt``)
    and for every other value."""
    cleaned = tag.strip().replace("_", "-")
    if "-" not in cleaned:
        return None
    variant, language = variant_for_tag(cleaned), language_for_tag(cleaned)
    if variant is None or language is None or variant_tags(language, variant) is None:
        return None
    return language, variant


def written_tag(language: str, variant: str | None) -> str:
    """How a voice's languages name ``language`` read the ``variant`` way: the variant
    (``pt-BR``), or for the language's default variant its first regional tag (``pt-PT``);
    the id itself without a variant of it."""
    if variant is None or variant_tags(language, variant) is None:
        return language
    if variant != language:
        return variant
    tags = REGIONAL_VARIANTS[language][variant]
    return next((tag for tag in tags if tag != language), language)


def parse_languages(items: Iterable[object]) -> VoiceLanguages:
    """Ids, names or regional tags -> :class:`VoiceLanguages` (order kept, duplicates
    dropped); ValueError saying which item is wrong (the caller adds where it is)."""
    languages: list[str] = []
    variant: str | None = None
    for item in items:
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise ValueError(f"language {item!r} must be text")
        text = str(item)
        found = regional(text)
        if found is not None:
            language, item_variant = found
            if variant is not None and item_variant != variant:
                raise ValueError(f"languages name two regional variants ({variant} and "
                                 f"{text}); a voice reads one way: keep one of them")
            variant = item_variant
        else:
            resolved = strict_language(text)
            if resolved is None:
                raise ValueError(f"language {text!r} {NOT_A_VOICE_LANGUAGE}")
            language = resolved
        if language not in languages:
            languages.append(language)
    return VoiceLanguages(tuple(languages), variant)
