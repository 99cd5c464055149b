"""The language a request's text is spoken in: the voice's, unless the text is clearly in
another language.

Home Assistant never sends a language; it reaches the engine through the voice
(``de-female`` speaks German). A voice must not make the engine read another language's
text as its own, so two guards may overrule it:

- text whose letters are mostly in a script the voice's language does not use (Cyrillic
  text to a German voice, Japanese to an English one) gets the one language that script
  names (Hangul: Korean, Thai, Greek, ...), else none (OmniVoice's language-free prompt,
  as upstream does for an unknown language);
- long text in the same script gets the language py3langid is sure of
  (:mod:`.text_language_id`); short text keeps the voice's language, since language
  identification on short Home Assistant replies is wrong about one time in ten
  (docs/home-assistant-languages.md).
"""

from __future__ import annotations

import re

from wyoming_omnivoice.speech.text_language_id import confident_language
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.ha_languages import variant_for_tag, variant_tags

#: Letters of each script (the main blocks).
_SCRIPTS: dict[str, re.Pattern[str]] = {
    "latin": re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]"),
    "cyrillic": re.compile(r"[\u0400-\u04ff]"),
    "greek": re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]"),
    "arabic": re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]"),
    "hebrew": re.compile(r"[\u0590-\u05ff]"),
    "devanagari": re.compile(r"[\u0900-\u097f]"),
    "bengali": re.compile(r"[\u0980-\u09ff]"),
    "tamil": re.compile(r"[\u0b80-\u0bff]"),
    "telugu": re.compile(r"[\u0c00-\u0c7f]"),
    "malayalam": re.compile(r"[\u0d00-\u0d7f]"),
    "thai": re.compile(r"[\u0e00-\u0e7f]"),
    "georgian": re.compile(r"[\u10a0-\u10ff]"),
    "armenian": re.compile(r"[\u0530-\u058f]"),
    "hangul": re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"),
    "kana": re.compile(r"[\u3040-\u30ff]"),
    "han": re.compile(r"[\u3400-\u9fff\uf900-\ufaff]"),
}

#: Scripts each language is written in (languages not listed: no guard).
_LANGUAGE_SCRIPTS: dict[str, frozenset[str]] = {
    **{lang: frozenset({"latin"}) for lang in (
        "af", "bs", "ca", "cs", "cy", "da", "de", "en", "eo", "es", "et", "eu", "fi", "fr",
        "fy", "ga", "gl", "hr", "hu", "id", "is", "it", "lb", "lt", "lv", "nb", "nl", "nn",
        "no", "pl", "pt", "ro", "sk", "sl", "sq", "sv", "tr", "vi")},
    **{lang: frozenset({"cyrillic"}) for lang in ("bg", "mk", "ru", "uk")},
    "sr": frozenset({"cyrillic", "latin"}),
    "el": frozenset({"greek"}),
    "arb": frozenset({"arabic"}), "fa": frozenset({"arabic"}), "ur": frozenset({"arabic"}),
    "he": frozenset({"hebrew"}),
    "hi": frozenset({"devanagari"}),
    "bn": frozenset({"bengali"}),
    "ta": frozenset({"tamil"}), "te": frozenset({"telugu"}), "ml": frozenset({"malayalam"}),
    "th": frozenset({"thai"}), "ka": frozenset({"georgian"}), "hy": frozenset({"armenian"}),
    "ko": frozenset({"hangul", "han"}),
    "ja": frozenset({"kana", "han"}),
    "zh": frozenset({"han"}), "yue": frozenset({"han"}),
}

#: A script that names one language on its own.
_SCRIPT_LANGUAGE = {
    "greek": "el", "hebrew": "he", "thai": "th", "georgian": "ka", "armenian": "hy",
    "hangul": "ko", "kana": "ja", "bengali": "bn", "tamil": "ta", "telugu": "te",
    "malayalam": "ml", "han": "zh",
}

#: The share of a text's letters a foreign script needs to overrule the voice's language.
FOREIGN_SHARE = 0.6
#: Fewer letters than this are never enough to tell (a name, an abbreviation).
MIN_LETTERS = 4


def script_counts(text: str) -> dict[str, int]:
    counts = {name: len(pattern.findall(text)) for name, pattern in _SCRIPTS.items()}
    return {name: count for name, count in counts.items() if count}


def text_language(voice_language: str, text: str) -> str | None:
    """The language to speak ``text`` in with a voice of ``voice_language``: that language,
    unless most of the text's letters are in a script the language is not written in."""
    own = _LANGUAGE_SCRIPTS.get(voice_language)
    if own is None:
        return voice_language
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < MIN_LETTERS:
        return voice_language
    if "kana" in counts and "han" in counts:  # Japanese mixes kana and kanji
        counts["kana"] += counts.pop("han")
    script, count = max(counts.items(), key=lambda item: item[1])
    if count < FOREIGN_SHARE * letters:
        return voice_language
    if script in own:
        identified = confident_language(text, letters)
        if identified is not None and script in _LANGUAGE_SCRIPTS.get(identified, frozenset()):
            return identified
        return voice_language
    return _SCRIPT_LANGUAGE.get(script)


def request_language(voice: VoicePreset, text: str, requested: str | None = None) -> str | None:
    """The engine language for ``text`` spoken by ``voice``; ``requested`` (a language the
    request named, when the client sends one the voice speaks) picks among its languages."""
    language = voice.language_for(text)
    if requested:
        from wyoming_omnivoice.voices.ha_languages import language_for_tag

        wanted = language_for_tag(requested) or requested
        if wanted in voice.languages:
            language = wanted
    return text_language(language, text)


def reading_language(voice: VoicePreset, language: str | None,
                     requested: str | None = None) -> str | None:
    """The language whose normalisation rules read text spoken in ``language``: the
    regional variant the request's tag names when it is one of that language's (``pt-BR``
    -> Brazilian, ``pt-PT`` -> European), else the voice's own variant (``pt-BR-female``),
    else ``language``. Home Assistant never sends a tag: there the voice decides."""
    if language is None:
        return None
    if requested:
        variant = variant_for_tag(requested)
        if variant is not None and variant_tags(language, variant) is not None:
            return variant
    return voice.reading_language(language)
