"""wyoming-omnivoice: OmniVoice text-to-speech for Home Assistant over the Wyoming protocol."""

from __future__ import annotations

__version__ = "0.1.0"
