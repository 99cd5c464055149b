"""Where the time of one :meth:`Engine.synthesize_batch` went, by phase.

``plan`` (requests checked, durations, long texts split), ``prompt`` (token rows and the
batch layout), ``decode`` (the diffusion steps: embeddings, backbone, scoring and the host
selection), ``vocoder`` (codes to samples) and ``post`` (cross-fades, silence removal,
loudness, fades). A mixed batch that costs much more than a batch of copies shows here in
the phase that grew (the vocoder, before it ran in buckets: a new shape per item).
"""

from __future__ import annotations

from dataclasses import dataclass, field

PHASES = ("plan", "decode", "vocoder", "post")


@dataclass
class SynthesisStats:
    """Seconds per phase of the last batch, and what the phases did."""

    plan_s: float = 0.0
    decode_s: float = 0.0
    vocoder_s: float = 0.0
    post_s: float = 0.0
    total_s: float = 0.0
    #: Diffusion steps run (all chunk rounds).
    steps: int = 0
    #: Seconds of the steps inside the decode: backbone, embeddings, scoring.
    backbone_s: float = 0.0
    embed_s: float = 0.0
    scoring_s: float = 0.0
    #: ``(rows, frames)`` of every vocoder call.
    vocoder_calls: list[tuple[int, int]] = field(default_factory=list)
    vocoder_bucketed: bool = False

    @property
    def other_s(self) -> float:
        """Time not in any phase (request bookkeeping)."""
        return max(0.0, self.total_s - self.plan_s - self.decode_s - self.vocoder_s
                   - self.post_s)

    @property
    def selection_s(self) -> float:
        """Decode time outside the three graphs: the host's per-step selection."""
        return max(0.0, self.decode_s - self.backbone_s - self.embed_s - self.scoring_s)

    def row(self) -> dict[str, float]:
        """Milliseconds per phase, for a side-by-side table."""
        return {
            "total": 1000 * self.total_s, "plan": 1000 * self.plan_s,
            "decode": 1000 * self.decode_s, "  backbone": 1000 * self.backbone_s,
            "  embed": 1000 * self.embed_s, "  scoring": 1000 * self.scoring_s,
            "  selection": 1000 * self.selection_s, "vocoder": 1000 * self.vocoder_s,
            "post": 1000 * self.post_s, "other": 1000 * self.other_s,
            "vocoder calls": float(len(self.vocoder_calls)),
            "vocoder shapes": float(len(set(self.vocoder_calls))),
        }


def phase_table(columns: dict[str, SynthesisStats]) -> str:
    """The phases of several runs side by side (milliseconds; calls and shapes counted)."""
    names = list(columns)
    rows = {name: stats.row() for name, stats in columns.items()}
    keys = list(next(iter(rows.values()))) if rows else []
    width = max([12, *(len(n) for n in names)])
    lines = ["phase ms".ljust(16) + "".join(n.rjust(width + 2) for n in names)]
    for key in keys:
        cells = "".join(f"{rows[n][key]:>{width + 2}.1f}" for n in names)
        lines.append(key.ljust(16) + cells)
    return "\n".join(lines)
