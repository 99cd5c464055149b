"""The values of a decode: its options, one item of a batch, where its time went."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from wyoming_omnivoice.engine.forward.prefix_cache import check_prefix_cache
from wyoming_omnivoice.engine.prompt.builder import Prompt


@dataclass(frozen=True)
class DecodeOptions:
    """Decoding parameters, with upstream ``OmniVoiceGenerationConfig`` names and defaults."""

    num_step: int = 32
    guidance_scale: float = 2.0
    t_shift: float = 0.1
    layer_penalty_factor: float = 5.0
    position_temperature: float = 5.0
    class_temperature: float = 0.0
    denoise: bool = True
    #: Refresh the prefix's keys and values every N steps, reuse them between (not exact,
    #: see :mod:`.prefix_cache`); 0 (and 1) decode exactly.
    prefix_cache: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.num_step, int) or not 1 <= self.num_step <= 256:
            raise ValueError(f"num_step must be an integer from 1 to 256, not {self.num_step!r}")
        if not 0.0 <= float(self.guidance_scale) <= 20.0:
            raise ValueError(f"guidance_scale must be between 0 and 20, not {self.guidance_scale}")
        if not 0.0 < float(self.t_shift) <= 10.0:
            raise ValueError(f"t_shift must be in (0, 10], not {self.t_shift}")
        if float(self.position_temperature) < 0 or float(self.class_temperature) < 0:
            raise ValueError("temperatures must not be negative")
        check_prefix_cache(self.prefix_cache)


@dataclass
class DecodeItem:
    """One request inside a batch: its conditional prompt and its own random generator."""

    prompt: Prompt
    rng: np.random.Generator


@dataclass
class DecodeStats:
    """Where the time of the last decode went (seconds)."""

    total_s: float = 0.0
    backbone_s: float = 0.0
    embed_s: float = 0.0
    scoring_s: float = 0.0
    steps: int = 0
    layout: str = ""
    #: ``(rows, length)`` of each backbone input of a step.
    grids: list[tuple[int, int]] = field(default_factory=list)
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        """Rows of the first (conditional) backbone input."""
        return self.grids[0][0] if self.grids else 0

    @property
    def length(self) -> int:
        """Length of the first (conditional) backbone input."""
        return self.grids[0][1] if self.grids else 0

    @property
    def outside_backbone_share(self) -> float:
        return 0.0 if self.total_s <= 0 else 1.0 - self.backbone_s / self.total_s
