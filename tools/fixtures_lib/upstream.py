"""Import upstream OmniVoice and transformers' Higgs codec without a real torchaudio.

Upstream imports ``torchaudio`` at module load and transformers guards the Higgs codec
with a torchaudio backend check, yet neither path we use (prompt building, the iterative
decode, the codec's decode and its encoder sub-modules) calls torchaudio. A stub module
with a real ``__spec__`` satisfies both.
"""

from __future__ import annotations

import importlib.machinery
import logging
import random
import sys
import types

logger = logging.getLogger(__name__)


def install_torchaudio_stub() -> None:
    """Register an empty ``torchaudio`` module unless a real one is importable."""
    if "torchaudio" in sys.modules:
        return
    try:
        import torchaudio  # noqa: F401
        return
    except ImportError:
        pass

    def _unavailable(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("torchaudio is stubbed out in the fixture builder")

    stub = types.ModuleType("torchaudio")
    stub.__spec__ = importlib.machinery.ModuleSpec("torchaudio", loader=None)
    stub.__version__ = "0.0.0+stub"
    functional = types.ModuleType("torchaudio.functional")
    functional.__spec__ = importlib.machinery.ModuleSpec("torchaudio.functional", loader=None)
    functional.resample = _unavailable
    stub.functional = functional
    sys.modules["torchaudio"] = stub
    sys.modules["torchaudio.functional"] = functional
    logger.debug("installed a torchaudio stub")


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (what upstream's fix_random_seed does)."""
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def import_upstream() -> types.ModuleType:
    """Return the ``omnivoice.models.omnivoice`` module (after the stub)."""
    install_torchaudio_stub()
    import omnivoice.models.omnivoice as ov_module

    return ov_module
