"""The import graph of the ``wyoming_omnivoice`` package, read from its source with ``ast``.

Every import counts, also those inside functions and under ``TYPE_CHECKING``: a cycle that
is dodged at run time is still a cycle for a reader. ``from package import name`` is an
import of the submodule ``package.name`` when that is a module, else of ``package``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "wyoming_omnivoice"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def _absolute(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports() -> Iterator[Import]:
    known = modules()
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        yield Import(name, alias.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                target = _absolute(name, is_package, node)
                if target.split(".")[0] != PACKAGE:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    yield Import(name, sub if sub in known else target, node.lineno)


def cycles() -> list[list[str]]:
    """The groups of modules of the package that import each other, directly or not."""
    graph: dict[str, set[str]] = {name: set() for name in modules()}
    for item in imports():
        if item.imported in graph and item.imported != item.importer:
            graph[item.importer].add(item.imported)
    return strongly_connected(graph)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups
