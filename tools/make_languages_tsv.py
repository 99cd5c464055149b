"""Write wyoming_omnivoice/data/languages.tsv from upstream's language table.

Dev script: reads ``omnivoice.utils.lang_map`` (upstream, installed in the dev venv) and
writes one row per language: ``id<TAB>key<TAB>display``, where ``key`` is upstream's
lowercase lookup name and ``display`` is upstream's display form of it. Rows are sorted
by key, the order upstream lists its names in.

    python tools/make_languages_tsv.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import _upstream

_upstream.ensure_torchaudio()

from omnivoice.utils.lang_map import (  # noqa: E402
    LANG_IDS,
    LANG_NAME_TO_ID,
    lang_display_name,
)

OUT = Path(__file__).resolve().parent.parent / "wyoming_omnivoice" / "data" / "languages.tsv"


def main() -> None:
    rows = ["id\tkey\tdisplay"]
    for key in sorted(LANG_NAME_TO_ID):
        for field in (key, LANG_NAME_TO_ID[key], lang_display_name(key)):
            if "\t" in field or "\n" in field:
                raise ValueError(f"unexpected separator in {field!r}")
        rows.append(f"{LANG_NAME_TO_ID[key]}\t{key}\t{lang_display_name(key)}")
    if len(rows) - 1 != len(LANG_IDS):
        raise ValueError("upstream maps several names to one id; the table needs a new layout")
    fd, tmp = tempfile.mkstemp(dir=OUT.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(rows) + "\n")
    os.replace(tmp, OUT)
    print(f"wrote {len(rows) - 1} languages to {OUT}")


if __name__ == "__main__":
    main()
