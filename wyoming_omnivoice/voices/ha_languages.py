"""The languages Home Assistant users pick for Assist, as OmniVoice language ids and tags.

Home Assistant offers a TTS engine for a pipeline when one of the engine's languages
matches the pipeline's language by its base language (``homeassistant/util/language.py``:
``de`` matches ``de``, ``de-DE`` and ``de-CH``), but its ``tts.speak`` action accepts only a
language tag the engine lists exactly. So every language is advertised with the tags
people use: the base tag, the usual regional forms, and the forms Home Assistant itself
uses (``en-GB``, ``es-419``, ``pt-BR``, ``sr-Latn``, ``zh-Hans``, ``zh-Hant``, ``zh-HK``).

The list is Home Assistant's Assist language list (``homeassistant/generated/languages.py``)
less the one language OmniVoice does not speak (``gsw``, Swiss German; ``de-CH`` is listed
under German), plus Cantonese for Hong Kong pipelines (``zh-HK``).

A language whose regions read text differently (Brazilian Portuguese says "dezesseis"
where Portugal says "dezasseis"; normalisation has a table per region) has *regional
variants* (:data:`REGIONAL_VARIANTS`): its per-language voices are served once per
variant (``pt-female`` for Portugal, ``pt-BR-female`` for Brazil), each listing only its
variant's tags, because Home Assistant sends the voice but never the pipeline's language:
the voice is all that tells the server how to read. Other voices of the language (a
cloned or a written-out voice) list every tag of the language, unless their languages
name a variant (``languages: [pt-BR]``, :mod:`.language_list`).
"""

from __future__ import annotations

import re

#: OmniVoice language id -> the tags advertised for it (the first is the base tag).
HA_LANGUAGE_TAGS: dict[str, tuple[str, ...]] = {
    "af": ("af", "af-ZA"),
    "arb": ("ar", "ar-SA", "ar-EG", "ar-AE"),
    "bg": ("bg", "bg-BG"),
    "bn": ("bn", "bn-BD", "bn-IN"),
    "bs": ("bs", "bs-BA"),
    "ca": ("ca", "ca-ES"),
    "cs": ("cs", "cs-CZ"),
    "cy": ("cy", "cy-GB"),
    "da": ("da", "da-DK"),
    "de": ("de", "de-DE", "de-AT", "de-CH"),
    "el": ("el", "el-GR"),
    "en": ("en", "en-US", "en-GB", "en-AU", "en-CA", "en-IE", "en-IN", "en-NZ"),
    "eo": ("eo",),
    "es": ("es", "es-ES", "es-419", "es-MX", "es-US", "es-AR"),
    "et": ("et", "et-EE"),
    "eu": ("eu", "eu-ES"),
    "fa": ("fa", "fa-IR"),
    "fi": ("fi", "fi-FI"),
    "fr": ("fr", "fr-FR", "fr-BE", "fr-CA", "fr-CH"),
    "fy": ("fy", "fy-NL"),
    "ga": ("ga", "ga-IE"),
    "gl": ("gl", "gl-ES"),
    "he": ("he", "he-IL"),
    "hi": ("hi", "hi-IN"),
    "hr": ("hr", "hr-HR"),
    "hu": ("hu", "hu-HU"),
    "hy": ("hy", "hy-AM"),
    "id": ("id", "id-ID"),
    "is": ("is", "is-IS"),
    "it": ("it", "it-IT", "it-CH"),
    "ja": ("ja", "ja-JP"),
    "ka": ("ka", "ka-GE"),
    "ko": ("ko", "ko-KR"),
    "lb": ("lb", "lb-LU"),
    "lt": ("lt", "lt-LT"),
    "lv": ("lv", "lv-LV"),
    "mk": ("mk", "mk-MK"),
    "ml": ("ml", "ml-IN"),
    "nb": ("nb", "nb-NO", "no"),
    "nl": ("nl", "nl-NL", "nl-BE"),
    "nn": ("nn", "nn-NO"),
    "pl": ("pl", "pl-PL"),
    "pt": ("pt", "pt-PT", "pt-BR"),
    "ro": ("ro", "ro-RO"),
    "ru": ("ru", "ru-RU"),
    "sk": ("sk", "sk-SK"),
    "sl": ("sl", "sl-SI"),
    "sq": ("sq", "sq-AL"),
    "sr": ("sr", "sr-RS", "sr-Latn"),
    "sv": ("sv", "sv-SE"),
    "ta": ("ta", "ta-IN"),
    "te": ("te", "te-IN"),
    "th": ("th", "th-TH"),
    "tr": ("tr", "tr-TR"),
    "uk": ("uk", "uk-UA"),
    "ur": ("ur", "ur-PK"),
    "vi": ("vi", "vi-VN"),
    "zh": ("zh", "zh-CN", "zh-Hans", "zh-Hant", "zh-TW", "zh-SG"),
    "yue": ("yue", "zh-HK"),
}

#: OmniVoice id -> its regional variants (a variant name -> the tags its voices list): the
#: languages whose text normalisation has a table per region (``text/normalize``). The
#: first variant keeps the language's plain voice names (``pt-female``).
REGIONAL_VARIANTS: dict[str, dict[str, tuple[str, ...]]] = {
    "pt": {"pt": ("pt", "pt-PT"), "pt-BR": ("pt-BR",)},
}

_SEPARATOR = re.compile(r"[-_]")
_BY_TAG: dict[str, str] = {
    tag.casefold(): language for language, tags in HA_LANGUAGE_TAGS.items() for tag in tags
}
_VARIANT_BY_TAG: dict[str, str] = {
    tag.casefold(): variant for variants in REGIONAL_VARIANTS.values()
    for variant, tags in variants.items() for tag in tags
}


def ha_language_ids() -> tuple[str, ...]:
    """OmniVoice ids of the Home Assistant languages, in table order."""
    return tuple(HA_LANGUAGE_TAGS)


def tags_for(language_id: str) -> tuple[str, ...] | None:
    """The advertised tags of a Home Assistant language, None for any other language."""
    return HA_LANGUAGE_TAGS.get(language_id)


def language_for_tag(tag: str) -> str | None:
    """The OmniVoice id for a Home Assistant tag (``de-DE``, ``pt_BR``, ``zh-Hant``, ``AR``):
    the exact tag first, else its base language; None when it is not one of them."""
    key = tag.strip().replace("_", "-").casefold()
    if key in _BY_TAG:
        return _BY_TAG[key]
    return _BY_TAG.get(_SEPARATOR.split(key, maxsplit=1)[0])


def variants_of(language_id: str) -> tuple[str, ...]:
    """The regional variants of a language (``pt`` -> ``("pt", "pt-BR")``), none for most."""
    return tuple(REGIONAL_VARIANTS.get(language_id, ()))


def variant_tags(language_id: str, variant: str) -> tuple[str, ...] | None:
    """The tags the voices of one variant of a language list; None when it is not one."""
    return REGIONAL_VARIANTS.get(language_id, {}).get(variant)


def variant_for_tag(tag: str) -> str | None:
    """The regional variant a tag names (``pt-BR``, ``pt_br`` -> ``pt-BR``; ``pt-PT`` ->
    ``pt``); None for a tag of a language without variants."""
    return _VARIANT_BY_TAG.get(tag.strip().replace("_", "-").casefold())


def tag_count() -> int:
    return sum(len(tags) for tags in HA_LANGUAGE_TAGS.values())
