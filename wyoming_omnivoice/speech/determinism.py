"""``--deterministic``: the same request gives the same audio, whichever replica answers.

Decoding draws random numbers (the position temperature, and the class temperature when it
is above 0) from a generator per request, seeded by ``SynthesisRequest.seed``; without a
seed every request gets fresh randomness. In deterministic mode each request's seed is
derived from what it asks for (the voice's name and the text spoken, after normalisation),
so replicas that share the model and settings give identical audio. Voice anchors are
already built with a fixed seed (:mod:`.anchors`), so each replica rebuilds the same anchor
in its own data directory.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest


def request_seed(voice_name: str, request: SynthesisRequest) -> int:
    """A stable 63-bit seed from the voice and what the request says (any process)."""
    key = "\x1f".join([voice_name, request.text, request.language or "",
                       request.instruct or "", repr(request.speed)])
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") >> 1
