"""The GPU check's yardsticks: issue 30's targets, the first run's figures, the peers.

Every figure the check prints stands next to its target, its value in the first run (H200,
2026-12-04, project at ceb3989, raw output in ``shared/measurements/gpu-2026-12-04/``) and,
where one exists, a peer's figure. :func:`summary_rows` turns the merged figures of a run
into the table the check ends with (figure, target, now, before, verdict).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: Where the first run's raw output lives (beside the project checkout).
FIRST_RUN = "shared/measurements/gpu-2026-12-04 (project at ceb3989)"

#: Peers on the same class of GPU (issue 30).
PEERS = {
    "upstream FlashInfer + CUDA graphs (H100)": {"rtf_single": 0.0367, "rtf_aggregate_8": 0.0115},
    "skwid-inc/omnivoice-hosting, vLLM-Omni bf16 (H100)": {
        "rtf_single": 0.048, "replies_per_s_8": 14.1, "first_audio_p50_ms": 239.0},
}
#: upstream PyTorch eager fp32 on the first run's H200 and weights (upstream.json there).
UPSTREAM_EAGER = {"forward_ms": {"96": 44.47, "150": 47.17, "300": 44.71},
                  "first_audio_p50_ms": 1113.2, "first_audio_p95_ms": 2649.9,
                  "rtf_single": 0.4731, "rtf_aggregate_8": 0.0975}


@dataclass(frozen=True)
class Target:
    key: str  # path in the merged figures, dots between levels ({p}: the precision)
    label: str
    limit: float | None  # None: printed, no verdict
    unit: str = ""
    higher_is_better: bool = False
    before: float | None = None  # the first run's value (fp16 where per precision)

    def verdict(self, value: float | None) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "not measured"
        if self.limit is None:
            return "-"
        ok = value >= self.limit if self.higher_is_better else value <= self.limit
        return "MET" if ok else "MISSED"

    def target_text(self) -> str:
        if self.limit is None:
            return "-"
        return f"{'>=' if self.higher_is_better else '<='} {self.limit:g}{self.unit}"


#: Issue 30's targets (H200). ``{p}`` is filled with each precision measured.
TARGETS = (
    Target("{p}.forward_ms.96", "forward at 96 positions ({p})", 2.0, " ms", before=3.96),
    Target("{p}.forward_ms.150", "forward at 150 positions ({p})", None, " ms", before=4.30),
    Target("{p}.forward_ms.300", "forward at 300 positions ({p})", None, " ms", before=5.36),
    Target("{p}.first_audio_p50_ms", "first audio p50, short reply, engine ({p})", 80.0,
           " ms", before=181.4),
    Target("{p}.first_audio_p95_ms", "first audio p95, short reply, engine ({p})", None,
           " ms", before=312.2),
    Target("{p}.rtf_single", "single-stream RTF ({p})", 0.02, before=0.0687),
    Target("{p}.replies_per_s_8", "8 different replies at once, replies/s ({p})", 20.0,
           "/s", higher_is_better=True, before=6.3),
    Target("{p}.rtf_aggregate_8", "8 different replies at once, aggregate RTF ({p})", 0.012,
           before=0.0707),
    Target("{p}.rtf_copies_8", "8 copies of one reply, aggregate RTF ({p})", None,
           before=0.0223),
    Target("{p}.gpu_mib_warm", "GPU memory, context + engine after warm-up ({p})", None,
           " MiB"),
    Target("{p}.gpu_mib_engine", "GPU memory, context + engine after the requests ({p})",
           2560.0, " MiB", before=5141.0),
    Target("{p}.gpu_mib_growth", "GPU memory growth over the last half of the requests ({p})",
           64.0, " MiB", before=0.0),
    Target("server.first_audio_p50_ms", "first audio p50, short reply, through the server",
           100.0, " ms"),
    Target("server.stream_first_audio_ms", "streamed 3 sentences: first audio (server)", None,
           " ms"),
    Target("server.stream_total_ms", "streamed 3 sentences: total (server)", None, " ms"),
    Target("server.replies_per_s_8", "8 concurrent clients, replies/s (server)", 14.1, "/s",
           higher_is_better=True),
)
#: Peers' figures to beat (issue 30: "ahead on each"), per figure key suffix.
AHEAD_OF = (("rtf_single", 0.0367, "upstream FlashInfer single-stream RTF"),
            ("rtf_single", 0.048, "skwid single-stream RTF"),
            ("rtf_aggregate_8", 0.0115, "upstream FlashInfer RTF at batch 8"),
            ("replies_per_s_8", 14.1, "skwid replies/s at 8 concurrent"))


def lookup(figures: dict[str, Any], key: str) -> float | None:
    node: Any = figures
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) \
        else None


def fmt(value: float | None, unit: str = "") -> str:
    if value is None or math.isnan(value):
        return "not measured"
    return f"{value:.4g}{unit}"


def summary_rows(figures: dict[str, Any], precisions: list[str]) -> list[tuple[str, ...]]:
    """(figure, target, now, first run, verdict) for every target and precision measured,
    then the peers to beat with the best precision's figures."""
    rows: list[tuple[str, ...]] = []
    for target in TARGETS:
        for precision in precisions if "{p}" in target.key else [""]:
            key = target.key.format(p=precision)
            value = lookup(figures, key)
            # the first run measured fp16 (and fp32); a new precision has no "before"
            before = target.before if precision in ("fp16", "") else (
                FP32_BEFORE.get(key.split(".", 1)[1]) if precision == "fp32" else None)
            rows.append((target.label.format(p=precision), target.target_text(),
                         fmt(value, target.unit), fmt(before, target.unit),
                         target.verdict(value)))
    for suffix, peer, label in AHEAD_OF:
        values = [v for p in precisions if (v := lookup(figures, f"{p}.{suffix}")) is not None]
        if suffix.startswith("replies") and (v := lookup(figures, "server.replies_per_s_8")):
            values.append(v)
        best = (max(values) if suffix.startswith("replies") else min(values)) if values \
            else None
        higher = suffix.startswith("replies")
        verdict = "not measured" if best is None else (
            "AHEAD" if (best > peer if higher else best < peer) else "BEHIND")
        rows.append((f"vs {label} (best precision)", f"{'>' if higher else '<'} {peer:g}",
                     fmt(best), "behind", verdict))
    return rows


#: The first run's fp32 figures (for the fp32 rows' "before").
FP32_BEFORE = {"forward_ms.96": 6.70, "forward_ms.150": 8.79, "forward_ms.300": 12.32,
               "first_audio_p50_ms": 340.6, "first_audio_p95_ms": 662.1,
               "rtf_single": 0.1291, "rtf_aggregate_8": 0.1267, "gpu_mib_engine": 6021.0,
               "gpu_mib_growth": 0.0}


def table(rows: list[tuple[str, ...]], header: tuple[str, ...] = (
        "figure", "target", "now", "first run", "verdict")) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
