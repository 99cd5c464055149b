"""``--list-voices``: the voices the server would serve, without loading the model.

Used by the server CLI (``wyoming-omnivoice --list-voices``) and the synthesize CLI. It
reads the same catalogue as a start (:func:`.gather.gather_voices`: built-in presets, the
voice folders under ``<data-dir>/voices``, ``--voices-file``) and prints one line per voice:
name, languages, description. Voices that would be skipped are listed after, with why.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.voices.gather import gather_voices


def list_voices(data_dir: Path, voices_file: Path | None, default: str | None = None,
                out: TextIO | None = None) -> int:
    """Print the catalogue; returns the exit code (0, or 2 for an unreadable voices file)."""
    stream = out if out is not None else sys.stdout
    if voices_file is not None and not voices_file.is_file():
        sys.stderr.write(f"error: --voices-file {voices_file}: no such file\n")
        return 2
    catalog, problems, _folders = gather_voices(data_dir, voices_file)
    presets = list(catalog)
    width = max([len("NAME")] + [len(preset.name) for preset in presets])
    # A regional variant's voice shows its variant (pt-BR-female: pt-BR).
    languages = {p.name: ", ".join(p.reading_language(lang) for lang in p.languages)
                 for p in presets}
    lang_width = max([len("LANGUAGES")] + [len(text) for text in languages.values()])
    stream.write(f"{'NAME'.ljust(width)}  {'LANGUAGES'.ljust(lang_width)}  DESCRIPTION\n")
    for preset in presets:
        mark = " (default)" if preset.name == default else ""
        extra = "" if preset.source.startswith("built-in") else f" [{preset.source}]"
        stream.write(f"{preset.name.ljust(width)}  {languages[preset.name].ljust(lang_width)}"
                     f"  {preset.description}{mark}{extra}\n")
    stream.write(f"{len(presets)} voice(s); voice folders are read from "
                 f"{data_dir / 'voices'}\n")
    for problem in problems:
        stream.write(f"skipped: {one_line(problem.message)}\n")
    return 0
