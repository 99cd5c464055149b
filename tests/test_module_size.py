"""Small modules with one job each: no module of the package is over 400 lines
(docs/design.md, "Conventions"). ``python -m tools.import_graph_report`` lists them too."""

from __future__ import annotations

from import_graph import modules

LIMIT = 400


def line_counts() -> dict[str, int]:
    return {name: len(path.read_text(encoding="utf-8").splitlines())
            for name, path in modules().items()}


def test_no_module_is_over_400_lines() -> None:
    counts = line_counts()
    assert len(counts) > 200  # the walk sees the package
    assert {name: n for name, n in counts.items() if n > LIMIT} == {}
