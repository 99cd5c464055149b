"""wyoming-omnivoice: OmniVoice text-to-speech for Home Assistant over the Wyoming protocol.

The engine API (``Engine``, ``DecodeOptions``, ...) is importable from here; importing it
loads numpy and onnx, so the names are resolved lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "DecodeOptions",
    "Engine",
    "ModelError",
    "SynthesisRequest",
    "VoicePrompt",
    "__version__",
    "estimate_num_frames",
    "normalize_instruct",
    "resolve_language",
]

if TYPE_CHECKING:  # pragma: no cover
    from .engine import (
        DecodeOptions,
        Engine,
        ModelError,
        SynthesisRequest,
        VoicePrompt,
        estimate_num_frames,
        normalize_instruct,
        resolve_language,
    )


def __getattr__(name: str) -> Any:
    if name not in __all__ or name == "__version__":
        raise AttributeError(f"module 'wyoming_omnivoice' has no attribute {name!r}")
    from . import engine

    value = getattr(engine, name)
    globals()[name] = value
    return value
