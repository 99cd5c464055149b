"""Synthetic test signals for the post-processing goldens, built from named recipes.

Shared by ``tools/record_rule_goldens.py`` (which runs upstream's pydub-based functions on
them) and ``tests/engine/test_postprocess.py`` (which runs ours): both rebuild the exact same
float32 arrays from a recipe and a seed.
"""

from __future__ import annotations

import numpy as np

SR = 24000
# RMS of -50 dBFS in float units: the silence threshold of upstream's post-processing.
THRESHOLD_RMS = 10 ** (-50 / 20)


def _segment(rng: np.random.Generator, kind: str, n: int, level: float) -> np.ndarray:
    if n <= 0:
        return np.zeros(0, dtype=np.float32)
    if kind == "zero":
        return np.zeros(n, dtype=np.float32)
    if kind == "noise":
        return (rng.standard_normal(n) * level).astype(np.float32)
    if kind == "uniform":
        return (rng.uniform(-level, level, n)).astype(np.float32)
    if kind == "tone":
        freq = float(rng.uniform(80, 3000))
        phase = float(rng.uniform(0, 2 * np.pi))
        t = np.arange(n) / SR
        return (np.sqrt(2) * level * np.sin(2 * np.pi * freq * t + phase)).astype(np.float32)
    if kind == "speech":  # noise under a syllable-rate envelope
        t = np.arange(n) / SR
        envelope = np.clip(np.sin(2 * np.pi * float(rng.uniform(2, 6)) * t), 0, None) ** 2
        return (rng.standard_normal(n) * level * envelope).astype(np.float32)
    raise ValueError(kind)


def _bursts(seed: int, count: int, max_ms: int, quiet: str, extra: int) -> np.ndarray:
    """Alternating loud and quiet segments of random length, plus ``extra`` samples."""
    rng = np.random.default_rng(seed)
    parts = []
    for index in range(count):
        n = int(rng.integers(1, max_ms)) * SR // 1000 + int(rng.integers(0, 24))
        if index % 2 == 0:
            kind = str(rng.choice(["noise", "tone", "speech", "uniform"]))
            parts.append(_segment(rng, kind, n, float(rng.uniform(0.02, 0.6))))
        elif quiet == "zero":
            parts.append(_segment(rng, "zero", n, 0.0))
        else:  # near the threshold, above or below it
            level = THRESHOLD_RMS * float(rng.uniform(0.6, 1.4))
            parts.append(_segment(rng, quiet, n, level))
    parts.append(_segment(rng, "noise", extra, 0.001))
    return np.concatenate(parts)


def _recipes() -> dict[str, tuple]:
    recipes: dict[str, tuple] = {}
    for n in (0, 1, 11, 12, 13, 36, 239, 240, 241, 4800, 11999, 12000, 12012, 72005):
        recipes[f"zeros_{n}"] = ("plain", "zero", n, 0.0, 0)
    for n in (1, 5, 12, 13, 100, 479, 2400, 11999, 12000, 12013, 36011):
        recipes[f"noise_{n}"] = ("plain", "uniform", n, 0.3, n)
    for index, scale in enumerate((0.97, 0.995, 1.0, 1.003, 1.02, 1.2)):
        level = THRESHOLD_RMS * scale
        recipes[f"threshold_tone_{index}"] = ("plain", "tone", 48000 + index, level, 7)
        n = 36000 + 5 * index
        recipes[f"threshold_noise_{index}"] = ("plain", "noise", n, level, 8 + index)
    recipes["clipping_noise"] = ("plain", "noise", 24000, 1.5, 3)
    recipes["speech_3s"] = ("plain", "speech", 72000, 0.3, 4)
    for seed in range(16):
        quiet = ("zero", "noise", "tone", "uniform")[seed % 4]
        recipes[f"bursts_{seed}"] = ("bursts", seed, 4 + seed % 5, 1800, quiet, seed % 24)
    for seed in range(4):
        recipes[f"short_bursts_{seed}"] = ("bursts", 100 + seed, 7, 250, "zero", 5 + seed)
    recipes["edges_only"] = ("sandwich", 1300, 0.2, 700, 11)
    recipes["long_gap"] = ("sandwich", 50, 0.5, 4000, 5)
    recipes["long_25s"] = ("bursts", 500, 30, 1700, "zero", 3)
    recipes["long_31s"] = ("bursts", 501, 24, 2600, "noise", 17)
    recipes["long_early_speech"] = ("sandwich", 1000, 0.3, 21000, 9)
    return recipes


RECIPES = _recipes()
SIGNALS = tuple(RECIPES)
CHUNK_SETS = (
    ("noise_2400", "speech_3s"),
    ("bursts_1", "bursts_2", "bursts_3"),
    ("noise_1", "noise_5", "zeros_0", "noise_100"),
    ("speech_3s",),
    ("zeros_0", "noise_2400"),
)


def build_signal(name: str) -> np.ndarray:
    """The float32 mono 24 kHz signal for a recipe name."""
    recipe = RECIPES[name]
    if recipe[0] == "plain":
        _, kind, n, level, seed = recipe
        return _segment(np.random.default_rng(seed), kind, n, level)
    if recipe[0] == "bursts":
        _, seed, count, max_ms, quiet, extra = recipe
        return _bursts(seed, count, max_ms, quiet, extra)
    if recipe[0] == "sandwich":  # silence, loud speech, silence (lengths in ms)
        _, lead_ms, level, trail_ms, seed = recipe
        rng = np.random.default_rng(seed)
        body = _segment(rng, "speech", 2 * SR + 7, level)
        lead = np.zeros(lead_ms * SR // 1000, dtype=np.float32)
        trail = np.zeros(trail_ms * SR // 1000 + 3, dtype=np.float32)
        return np.concatenate([lead, body, trail])
    raise ValueError(name)
