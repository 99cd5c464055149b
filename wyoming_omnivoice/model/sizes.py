"""Byte counts as people read them (decimal units, as disks and the hub show them)."""

from __future__ import annotations


def human_size(size: int | None) -> str:
    """``1234567`` -> ``"1.2 MB"``; ``None`` -> ``"unknown size"``."""
    if size is None:
        return "unknown size"
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"
