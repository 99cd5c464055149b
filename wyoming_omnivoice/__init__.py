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

_LAZY = {
    "Engine": ("wyoming_omnivoice.engine.core", "Engine"),
    "SynthesisRequest": ("wyoming_omnivoice.engine.core", "SynthesisRequest"),
    "DecodeOptions": ("wyoming_omnivoice.engine.decoder", "DecodeOptions"),
    "ModelError": ("wyoming_omnivoice.engine.model_files", "ModelError"),
    "VoicePrompt": ("wyoming_omnivoice.engine.reference", "VoicePrompt"),
    "estimate_num_frames": ("wyoming_omnivoice.engine.duration", "estimate_num_frames"),
    "normalize_instruct": ("wyoming_omnivoice.engine.instruct", "normalize_instruct"),
    "resolve_language": ("wyoming_omnivoice.engine.languages", "resolve_language"),
}

if TYPE_CHECKING:  # pragma: no cover
    from .engine.core import Engine, SynthesisRequest
    from .engine.decoder import DecodeOptions
    from .engine.duration import estimate_num_frames
    from .engine.instruct import normalize_instruct
    from .engine.languages import resolve_language
    from .engine.model_files import ModelError
    from .engine.reference import VoicePrompt


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'wyoming_omnivoice' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value
