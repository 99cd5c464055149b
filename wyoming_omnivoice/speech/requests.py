"""What a request to the speech service says, as typed values: the voice it wishes for,
what a caller sets beyond the voice, and the service's fixed settings.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wyoming_omnivoice.engine import SynthesisRequest


@dataclass(frozen=True)
class VoiceWish:
    """The voice a request asks for: a name and/or a language (a speaker is ignored)."""

    name: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class Override:
    """What a caller sets beyond the voice (the studio's takes, a fixed seed): a reference
    that replaces the voice's anchor or clone prompt, and the decode's seed."""

    ref_codes: Any = None
    ref_text: str | None = None
    ref_rms: float | None = None
    seed: int | None = None

    def apply(self, request: SynthesisRequest) -> SynthesisRequest:
        changes: dict[str, Any] = {}
        if self.ref_codes is not None:
            changes.update(ref_codes=self.ref_codes, ref_text=self.ref_text,
                           ref_rms=self.ref_rms)
        if self.seed is not None:
            changes["seed"] = self.seed
        return dataclasses.replace(request, **changes) if changes else request


@dataclass(frozen=True)
class SpeechSettings:
    """Fixed at start-up."""

    sample_rate: int
    #: Longest text per request, in characters (--max-text-length).
    max_text_length: int = 5000
    #: Requests (one-shot or stream) served at once (--max-concurrent).
    max_concurrent: int = 16
    #: A long first sentence is spoken from its first clause (off: --whole-first-sentence).
    first_clause: bool = True
    #: How the model runs other than intended, one line each (the published backbone in
    #: place of the variant chosen, one row per forward): shown by the studio's /api/info.
    model_notes: tuple[str, ...] = ()
