"""Import helpers for dev scripts that read facts from upstream OmniVoice.

Dev-only: needs torch and the upstream ``omnivoice`` package (installed without its
dependencies). ``omnivoice.utils.audio`` imports torchaudio at module load although the
functions we call never use it, so a stub module is registered when torchaudio is absent.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types


def _stub(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    sys.modules[name] = module
    return module


def ensure_torchaudio() -> None:
    try:
        import torchaudio  # noqa: F401
    except ImportError:
        root = _stub("torchaudio")
        root.functional = _stub("torchaudio.functional")  # type: ignore[attr-defined]
