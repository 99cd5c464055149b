"""The household's voices: one chosen voice per language, kept across restarts.

The studio's "use for LANGUAGE" makes a voice the household's voice of a language: the one
a request naming no voice in that language speaks with, and the first one the voice list
offers for it (:meth:`.catalog.VoiceCatalog.advertised`). The choice is kept in
``<data-dir>/studio/household.yaml`` (written atomically, like the studio's voices file)::

    languages:
      de: anna
      pt-BR: joao

Keys are languages as a voice's languages are written (an id, or a regional variant's tag:
:mod:`.language_list`). A file a person broke is reported once and read as empty (the
voices it named are simply not chosen); a voice it names that is not served this time is
kept in the file and chosen again once it is served.
"""

from __future__ import annotations

import logging
from pathlib import Path

import yaml

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.user_files import UserFileError, read_user_text

_LOGGER = logging.getLogger(__name__)

HOUSEHOLD_FILE = "household.yaml"
HEADER = ("# The household's voice per language, chosen in the wyoming-omnivoice voice studio\n"
          "# (\"use for LANGUAGE\"). A hand edit is read at the next start.\n")


def household_file(data_dir: Path) -> Path:
    return Path(data_dir) / "studio" / HOUSEHOLD_FILE


def read_household(path: Path) -> dict[str, str]:
    """Written language -> voice name; ``{}`` when there is no file or it is not usable."""
    if not path.exists():
        return {}
    try:
        document = yaml.safe_load(read_user_text(path))
    except (UserFileError, OSError, yaml.YAMLError) as err:
        _LOGGER.error("Cannot read the household's voices from %s (%s); no voice is chosen "
                      "per language until the studio writes it again", path, err)
        return {}
    languages = document.get("languages") if isinstance(document, dict) else None
    if not isinstance(languages, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in languages.items()):
        _LOGGER.error("%s: expected 'languages:' mapping each language to a voice name; "
                      "no voice is chosen per language", path)
        return {}
    return dict(languages)


def write_household(path: Path, household: dict[str, str]) -> None:
    text = HEADER + yaml.safe_dump({"languages": household}, allow_unicode=True,
                                   sort_keys=False)
    with atomic_write(path, "w", encoding="utf-8") as handle:
        handle.write(text)
