"""The one reader of the voice catalogue: built-in presets, voice folders, ``--voices-file``.

The server, ``--list-voices`` and the synthesize CLI all read voices through
:func:`gather_voices`, so they always agree on what is served.
"""

from __future__ import annotations

from pathlib import Path

from wyoming_omnivoice.voices import cloned as cloned_voices
from wyoming_omnivoice.voices.assets import preset_from_spec
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.config import VoiceProblem, build_catalog


def gather_voices(data_dir: Path, voices_file: Path | None
                  ) -> tuple[VoiceCatalog, list[VoiceProblem], dict[Path, str]]:
    """The catalog the server serves (before anchors): built-in presets, the voice folders
    under <data-dir>/voices, then --voices-file; with every problem found, unlogged (also
    the voice folders' problems by folder). The server, ``--list-voices`` and the
    synthesize CLI all read voices through here."""
    folder_problems: dict[Path, str] = {}
    extra: list[VoicePreset] = []
    for spec in cloned_voices.discover_cloned_voices(data_dir, problems=folder_problems):
        try:
            extra.append(preset_from_spec(spec))
        except ValueError as err:
            folder_problems[Path(spec.audio_path).parent] = str(err)
    problems = [VoiceProblem(f"voice folder {folder}: {message}", folder.name)
                for folder, message in sorted(folder_problems.items())]
    catalog = build_catalog(voices_file, extra=extra, problems=problems)
    return catalog, problems, folder_problems
