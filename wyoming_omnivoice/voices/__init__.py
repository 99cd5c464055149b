"""Voices: the catalogue and where its voices come from, and what each brings to a request.

- `catalog`: `VoicePreset`, `VoiceCatalog` (lookup, advertised languages, routing).
- `config`, `templates`, `ha_languages`: presets from YAML, per-language voices, the Home
  Assistant languages.
- the anchors that keep a designed voice one person live in their own wing,
  :mod:`wyoming_omnivoice.anchors`.
- `cloned`, `watch`: cloned voices from voice folders, and folders added while running.
- `assets`: anchors and clone prompts per voice at start-up.
- `listing`: ``--list-voices``.

Engine work (encoding a reference, building an anchor) reaches the engine through
:class:`.engine_thread.EngineThread`, never by importing the worker.
"""
