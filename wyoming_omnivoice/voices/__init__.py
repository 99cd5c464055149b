"""Voices: the catalogue and where its voices come from, and what each brings to a request.

The public interface for the rooms above (the speech service, the protocols, the shell):
these names, resolved on first use (``lazy_exports``: the anchor wing imports voice modules,
so importing them all here at once would meet a half-imported module). ``web/`` imports
only this package of the voices (``tests/web/test_web_layer.py``).

- `library`: `VoiceLibrary`, the one owner of the voices being served (catalogue, anchors,
  clone prompts, the folder watcher): routing, a request's voice part, live changes.
- `catalog`: `VoicePreset`, `VoiceCatalog` (lookup, advertised languages, routing, the
  household's voice per language), `Advertised` (an entry of the voice list).
- `household`: the household's voices per language, kept in ``<data-dir>/studio/``.
- `config`, `templates`, `ha_languages`, `language_list`: presets from YAML, per-language
  voices, the Home Assistant languages, a voice's languages as written.
- `cloned`, `watch`: cloned voices from voice folders, and folders added while running.
- `assets`: anchors and clone prompts per voice at start-up (the library's store).
- `saved`, `transfer`, `names`: voices the studio saves, one voice as one file, voice names.
- `listing`: ``--list-voices``; `gather`: every source of voices read once.
- the anchors that keep a designed voice one person live in their own wing,
  :mod:`wyoming_omnivoice.anchors` (the names a studio needs are re-exported here).

Engine work (encoding a reference, building an anchor) reaches the engine through
:class:`.engine_thread.EngineThread`, never by importing the worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wyoming_omnivoice.lazy_exports import lazy_getattr

__all__ = [
    "ANCHOR_SEED",
    "Advertised",
    "Anchor",
    "Recording",
    "SavedVoiceError",
    "SavedVoices",
    "VoiceCatalog",
    "VoiceFile",
    "VoiceLanguages",
    "VoiceLibrary",
    "VoicePart",
    "VoicePreset",
    "anchor_text",
    "anchor_text_for",
    "cache_clone_prompt",
    "check_languages",
    "check_voice_name",
    "export_voice",
    "parse_languages",
    "parse_voice_file",
    "tags_for",
    "variant_tags",
    "variants_of",
    "written_tag",
]

#: Public name -> the module that defines it (relative to this package).
_PUBLIC = {
    "ANCHOR_SEED": "..anchors.cache",
    "Advertised": "catalog",
    "Anchor": "..anchors.cache",
    "Recording": "saved",
    "SavedVoiceError": "saved",
    "SavedVoices": "saved",
    "VoiceCatalog": "catalog",
    "VoiceFile": "transfer",
    "VoiceLanguages": "language_list",
    "VoiceLibrary": "library",
    "VoicePart": "assets",
    "VoicePreset": "catalog",
    "anchor_text": "..anchors.texts",
    "anchor_text_for": "..anchors.cache",
    "cache_clone_prompt": "assets",
    "check_languages": "transfer",
    "check_voice_name": "names",
    "export_voice": "transfer",
    "parse_languages": "language_list",
    "parse_voice_file": "transfer",
    "tags_for": "ha_languages",
    "variant_tags": "ha_languages",
    "variants_of": "ha_languages",
    "written_tag": "language_list",
}

if TYPE_CHECKING:  # pragma: no cover
    from wyoming_omnivoice.anchors.cache import ANCHOR_SEED as ANCHOR_SEED
    from wyoming_omnivoice.anchors.cache import Anchor as Anchor
    from wyoming_omnivoice.anchors.cache import anchor_text_for as anchor_text_for
    from wyoming_omnivoice.anchors.texts import anchor_text as anchor_text
    from wyoming_omnivoice.voices.assets import VoicePart as VoicePart
    from wyoming_omnivoice.voices.assets import cache_clone_prompt as cache_clone_prompt
    from wyoming_omnivoice.voices.catalog import Advertised as Advertised
    from wyoming_omnivoice.voices.catalog import VoiceCatalog as VoiceCatalog
    from wyoming_omnivoice.voices.catalog import VoicePreset as VoicePreset
    from wyoming_omnivoice.voices.ha_languages import tags_for as tags_for
    from wyoming_omnivoice.voices.ha_languages import variant_tags as variant_tags
    from wyoming_omnivoice.voices.ha_languages import variants_of as variants_of
    from wyoming_omnivoice.voices.language_list import VoiceLanguages as VoiceLanguages
    from wyoming_omnivoice.voices.language_list import parse_languages as parse_languages
    from wyoming_omnivoice.voices.language_list import written_tag as written_tag
    from wyoming_omnivoice.voices.library import VoiceLibrary as VoiceLibrary
    from wyoming_omnivoice.voices.names import check_voice_name as check_voice_name
    from wyoming_omnivoice.voices.saved import Recording as Recording
    from wyoming_omnivoice.voices.saved import SavedVoiceError as SavedVoiceError
    from wyoming_omnivoice.voices.saved import SavedVoices as SavedVoices
    from wyoming_omnivoice.voices.transfer import VoiceFile as VoiceFile
    from wyoming_omnivoice.voices.transfer import check_languages as check_languages
    from wyoming_omnivoice.voices.transfer import export_voice as export_voice
    from wyoming_omnivoice.voices.transfer import parse_voice_file as parse_voice_file


__getattr__ = lazy_getattr(__name__, _PUBLIC, globals())
