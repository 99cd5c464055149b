"""Public names of a package resolved on first use (the public interfaces of ``engine``,
``engine.offline`` and ``voices``).

Importing ``wyoming_omnivoice.engine`` must load neither numpy nor onnxruntime, so its
``__init__`` (and ``engine.offline``'s) maps each public name to the module defining it and
imports that module only when the name is asked for. ``voices``' interface is lazy for
another reason: the anchor wing's modules import voice modules, so a package ``__init__``
that imported them back at once would run into a half-imported module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, names: dict[str, str], namespace: dict[str, Any]
                 ) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each public name to its
    submodule (``"core"``, or relative to the package, ``"..anchors.cache"``); a resolved
    value is cached in ``namespace`` (the package's globals)."""

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        relative = module if module.startswith(".") else f".{module}"
        value = getattr(importlib.import_module(relative, package), name)
        namespace[name] = value
        return value

    return getattr_
