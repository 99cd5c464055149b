"""Takes: the candidate people a person hears before keeping one.

A designed voice differs from seed to seed. A *take* is one candidate: the anchor made from
the design with one seed, decoded like the server's anchors (canonical where the server
makes canonical ones: :mod:`.anchors.maker`). The first take uses the server's anchor
seed, so a voice saved without another take sounds like the one every replica would build;
**Another take** draws a new seed. A picked take is the voice's anchor from then on, in a
file of its own, whatever precision made it. A cloned take is an encoded recording. Takes
live in memory only, at most ``limit`` of them (the oldest go first); saving one writes it
to disk (:mod:`.voices.saved`).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wyoming_omnivoice.voices import Anchor, Recording, VoicePreset, written_tag

if TYPE_CHECKING:
    from wyoming_omnivoice import VoicePrompt

DRAFT_NAME = "studio-draft"


@dataclass(frozen=True)
class Design:
    """A designed voice before it has a name: instruct, language and speed (a cloned take's
    too: its language). ``variant``: the language's regional variant it reads (``pt-BR``)."""

    instruct: str | None
    language: str
    speed: float | None = None
    variant: str | None = None

    @property
    def tag(self) -> str:
        """The language as the studio shows it (``pt-BR`` for a Brazilian take)."""
        return written_tag(self.language, self.variant)

    def preset(self, name: str | None = None) -> VoicePreset:
        """The preset a saved voice of this design would be (its name decides the seed of
        ``--deterministic``, so a preview under the intended name matches the saved voice)."""
        # anchor=False: the take's own anchor is passed with every preview; the server must
        # not build one for a draft.
        return VoicePreset(name=name or DRAFT_NAME, description="", languages=(self.language,),
                           instruct=self.instruct, speed=self.speed, anchor=False,
                           source="voice studio", variant=self.variant)


@dataclass(frozen=True)
class Take:
    id: str
    design: Design
    seed: int | None = None
    anchor: Anchor | None = None
    prompt: VoicePrompt | None = None
    recording: Recording | None = None
    transcript: str | None = None

    @property
    def kind(self) -> str:
        return "cloned" if self.prompt is not None else "designed"

    @property
    def reference(self) -> Anchor | VoicePrompt:
        reference = self.prompt if self.prompt is not None else self.anchor
        assert reference is not None
        return reference


class TakeStore:
    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self._takes: OrderedDict[str, Take] = OrderedDict()

    def new_id(self) -> str:
        return secrets.token_urlsafe(9)

    def add(self, take: Take) -> Take:
        self._takes[take.id] = take
        while len(self._takes) > self.limit:
            self._takes.popitem(last=False)
        return take

    def get(self, take_id: object) -> Take | None:
        return self._takes.get(take_id) if isinstance(take_id, str) else None
