"""The Sphinx cross-references in the package's docstrings and ``#:`` comments, resolved.

A reference is ``:mod:``, ``:func:``, ``:class:``, ``:meth:``, ``:data:``, ``:attr:``,
``:exc:`` or ``:obj:`` with a target in backquotes (``~`` only shortens what is shown;
``title <target>`` names the target). It resolves as Sphinx resolves it:

- a target with a leading ``.`` is a suffix search over the package's fully qualified
  names: modules, their module-level functions, classes and variables, the classes'
  methods and attributes (class-level, dataclass fields, ``self.x = ...``);
- a plain target resolves in the current module (its own names, the names it imports, or
  ``Class.member`` of a class it defines), else as a suffix anywhere (``.target``);
- a target naming this package in full resolves in the index, or as a name its module
  imports (the lazily resolved public names of ``engine/``, ``voices/``, imported there for
  type checkers);
- a target naming another importable package (numpy, asyncio, onnxruntime, ...) resolves
  by importing it and reading the attributes; a plain builtin name (``TimeoutError``)
  resolves too.

The index is read from the source with ``ast``: no module of the package is imported.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "wyoming_omnivoice"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE
ROLES = ("mod", "func", "class", "meth", "data", "attr", "exc", "obj")
REFERENCE = re.compile(r":(?:py:)?(" + "|".join(ROLES) + r"):`([^`]+)`")


@dataclass(frozen=True)
class Reference:
    module: str
    line: int
    role: str
    target: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: :{self.role}:`{self.target}`"


def module_name(path: Path, root: Path = PACKAGE_DIR) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _class_names(node: ast.ClassDef) -> set[str]:
    """A class's methods and attributes (class level, ``self.x = ...`` in its methods)."""
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and isinstance(inner.ctx, ast.Store) \
                and isinstance(inner.value, ast.Name) and inner.value.id in ("self", "cls"):
            names.add(inner.attr)
    return names


@dataclass
class ModuleNames:
    """What one module defines (``own``), imports (``imported``) and its classes' members."""

    own: set[str]
    imported: set[str]
    classes: dict[str, set[str]]
    #: Names imported from a module of the package: name -> its qualified name there.
    imported_from: dict[str, str]


def module_names(tree: ast.Module) -> ModuleNames:
    own: set[str] = set()
    imported: set[str] = set()
    classes: dict[str, set[str]] = {}
    imported_from: dict[str, str] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                own.add(node.name)
            elif isinstance(node, ast.ClassDef):
                own.add(node.name)
                classes[node.name] = _class_names(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    own.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                own.add(node.target.id)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                imported.update((alias.asname or alias.name).split(".")[0]
                                for alias in node.names)
                if isinstance(node, ast.ImportFrom) and node.level == 0 \
                        and (node.module or "").split(".")[0] == PACKAGE:
                    imported_from.update({alias.asname or alias.name: f"{node.module}.{alias.name}"
                                          for alias in node.names})
            elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING, optional imports
                visit(node.body)
                visit(node.orelse)
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return ModuleNames(own, imported, classes, imported_from)


class Index:
    """The fully qualified names of the package under ``root`` (see the module docstring)."""

    def __init__(self, root: Path = PACKAGE_DIR) -> None:
        self.root = root
        self.trees: dict[str, ast.Module] = {}
        self.names: dict[str, ModuleNames] = {}
        self.qualified: set[str] = set()
        for path in sorted(root.rglob("*.py")):
            name = module_name(path, root)
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            self.trees[name] = tree
            names = module_names(tree)
            self.names[name] = names
            self.qualified.add(name)
            self.qualified |= {f"{name}.{own}" for own in names.own}
            for cls, members in names.classes.items():
                self.qualified |= {f"{name}.{cls}.{member}" for member in members}
        #: Every dotted tail of a qualified name (``.pacing.PlayClock``), for suffix search.
        self.suffixes = {"." + ".".join(parts[cut:]) for parts in
                         (qualified.split(".") for qualified in self.qualified)
                         for cut in range(1, len(parts))}

    def references(self) -> list[Reference]:
        found: list[Reference] = []
        for name, tree in self.trees.items():
            path = self.root.parent / (name.replace(".", "/"))
            source = (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
                      ).read_text(encoding="utf-8")
            del tree
            for match in REFERENCE.finditer(source):
                line = source.count("\n", 0, match.start()) + 1
                found.append(Reference(name, line, match.group(1), match.group(2)))
        return found

    def resolves(self, reference: Reference) -> bool:
        target = reference.target.strip()
        if target.endswith(">") and "<" in target:  # ``title <target>``
            target = target[target.rindex("<") + 1:-1]
        target = target.lstrip("~").removesuffix("()")
        if not target:
            return False
        if target.startswith("."):
            return self._suffix(target)
        head = target.split(".")[0]
        if head == PACKAGE:
            return target in self.qualified or self._bound(target)
        names = self.names[reference.module]
        if target in self.qualified or f"{reference.module}.{target}" in self.qualified:
            return True
        if "." not in target and (target in names.own or target in names.imported
                                  or hasattr(builtins, target)):
            return True
        if self._suffix("." + target):
            return True
        return head not in self.names[reference.module].own and _importable(target)

    def _bound(self, target: str, depth: int = 0) -> bool:
        """``package.module.name[.member]`` where the module binds ``name`` by an import
        (a public interface's names; those resolved lazily at run time are imported for
        type checkers): ``member`` is looked up where ``name`` comes from."""
        parts = target.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module not in self.names:
                continue
            names, rest = self.names[module], parts[cut:]
            if rest[0] in names.imported_from and depth < 5:
                origin = ".".join([names.imported_from[rest[0]], *rest[1:]])
                return origin in self.qualified or self._bound(origin, depth + 1)
            return len(rest) == 1 and rest[0] in names.imported
        return False

    def _suffix(self, dotted: str) -> bool:
        return dotted in self.suffixes


def _importable(target: str) -> bool:
    """``target`` is a module, or an attribute path of one, that imports."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        except Exception:  # a module that fails to import is no target
            return False
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def unresolved(root: Path = PACKAGE_DIR) -> list[str]:
    index = Index(root)
    return [str(reference) for reference in index.references()
            if not index.resolves(reference)]
