"""Voice names: one path component, so a name can never reach outside its folder."""

from __future__ import annotations

import re

#: A voice name: a letter, digit or '_' first, then up to 63 of letters, digits and
#: ``_.+-`` (no separators). Shared by YAML presets, voice folders and saved voices.
VOICE_NAME_RE = re.compile(r"^\w[\w.+-]{0,63}$")


def check_voice_name(name: str) -> str:
    """Return ``name`` if it is a safe voice name (one path component), else raise."""
    if not isinstance(name, str) or not VOICE_NAME_RE.match(name) or name in (".", ".."):
        raise ValueError(
            f"Invalid voice name {name!r}: use 1-64 letters, digits, '_', '.', '+' or '-', "
            "starting with a letter, digit or '_'."
        )
    return name
