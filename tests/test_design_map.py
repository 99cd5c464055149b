"""``docs/design.md`` names every module of the package: a module added, moved or renamed
without its row in the map fails here (a brace group such as ``lang_{en,de}.py`` names each
of its members)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wyoming_omnivoice"
DESIGN = ROOT / "docs" / "design.md"


def named_paths(text: str) -> set[str]:
    """Every path written in backticks (a trailing word such as ``+ data/x`` aside), brace
    groups expanded."""
    names: set[str] = set()
    for code in re.findall(r"`([^`\s]+\.py)`", text):
        match = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", code)
        if match is None:
            names.add(code)
            continue
        head, members, tail = match.groups()
        names.update(f"{head}{member}{tail}" for member in members.split(","))
    return names


def modules() -> list[str]:
    return sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py"))


def test_every_module_is_in_the_design_map() -> None:
    named = named_paths(DESIGN.read_text(encoding="utf-8"))
    missing = [module for module in modules()
               if module not in named and f"wyoming_omnivoice/{module}" not in named]
    assert missing == [], "add a row to docs/design.md for:\n" + "\n".join(missing)


def test_brace_groups_name_each_member() -> None:
    assert named_paths("`text/lang_{en,pt_br}.py`") == {"text/lang_en.py", "text/lang_pt_br.py"}
