"""The suite's own layout: no test module imports another test module (what tests share
lives in helper modules beside conftest.py in tests/)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_test_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names]
    names += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    return [name for name in names if name.split(".")[-1].startswith("test_")]


def test_no_test_module_imports_another() -> None:
    found = {str(path.relative_to(TESTS)): imported for path in sorted(TESTS.rglob("test_*.py"))
             if (imported := imported_test_modules(path))}
    assert found == {}


def test_the_check_sees_a_test_import(tmp_path: Path) -> None:
    module = tmp_path / "test_example.py"
    module.write_text("from test_other import helper\nimport conftest\n", encoding="utf-8")
    assert imported_test_modules(module) == ["test_other"]
