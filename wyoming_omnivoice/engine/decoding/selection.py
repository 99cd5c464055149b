"""One diffusion step's choice of cells, and the random numbers every step of an item uses.

Upstream ``_generate_iterative`` unmasks, per step and item, the ``count`` masked cells of
highest score: ``(confidence - layer penalty) / position temperature + Gumbel noise``, ties
broken by the lower flat index of the item's ``[8, T]`` grid. :func:`choose_cells` does that
for a whole batch at once (the contract with the device version, ``device_selection``, which
must give the same tokens bit for bit).

An item's noise depends only on its generator, its target length and its schedule, never on
the model's outputs, so :func:`draw_noise` draws all of it when the item starts, in upstream's
order (per step that unmasks something: the class noise when sampling classes, then the
position noise). An item decoded inside any batch, joining at any step, therefore gets
exactly what it gets alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.graphs.scoring import TOP_K_CLASSES


def gumbel(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gumbel noise as upstream: ``-log(-log(u + 1e-10) + 1e-10)``, ``u ~ U[0, 1)``."""
    u = rng.random(shape, dtype=np.float32)
    eps = np.float32(1e-10)
    noise: np.ndarray = -np.log(-np.log(u + eps) + eps)
    return noise


@dataclass
class ItemNoise:
    """An item's random numbers for every step (``None`` where a step draws none)."""

    #: Per step: float32 ``[8, T]`` position noise (steps that unmask, position temp > 0).
    position: list[np.ndarray | None]
    #: Per step: float32 ``[8, T, TOP_K_CLASSES]`` class noise (steps that unmask, sampling).
    classes: list[np.ndarray | None]


def draw_noise(rng: np.random.Generator, num_target: int, counts: np.ndarray, *,
               sampling: bool, position_noise: bool) -> ItemNoise:
    """All of an item's noise, drawn from its own generator in upstream's order."""
    position: list[np.ndarray | None] = []
    classes: list[np.ndarray | None] = []
    for count in counts:
        unmasks = int(count) > 0
        classes.append(gumbel(rng, (NUM_CODEBOOKS, num_target, TOP_K_CLASSES))
                       if unmasks and sampling else None)
        position.append(gumbel(rng, (NUM_CODEBOOKS, num_target))
                        if unmasks and position_noise else None)
    return ItemNoise(position=position, classes=classes)


def sample_classes(values: np.ndarray, indices: np.ndarray, temperature: float,
                   noise: np.ndarray) -> np.ndarray:
    """Gumbel-max sampling among the top-10 % classes (the rest are -inf upstream)."""
    noisy = values / np.float32(temperature) + noise
    choice = np.argmax(noisy, axis=-1)
    chosen: np.ndarray = np.take_along_axis(indices, choice[..., None], axis=-1)[..., 0]
    return chosen


def choose_cells(tokens: np.ndarray, pred: np.ndarray, conf: np.ndarray, counts: np.ndarray,
                 position_noise: np.ndarray | None, penalty: np.ndarray,
                 position_temperature: float) -> np.ndarray:
    """The tokens after one step: each item's ``counts[i]`` best masked cells take ``pred``.

    ``tokens``, ``pred``: int64 ``[B, 8, T]`` (cells past an item's length hold 0, never
    MASK, so they are never chosen); ``conf``: float32 ``[B, 8, T]``; ``counts``: int64
    ``[B]`` (0: the item unmasks nothing this step); ``position_noise``: float32
    ``[B, 8, T]`` or None (zeros where an item does not unmask); ``penalty``: float32
    ``[8, 1]``. Ties: the lower flat index of ``[8, T]`` first (a stable sort, as upstream).
    """
    size = tokens.shape[0]
    scores = conf - penalty
    if position_temperature > 0:
        scores = scores / np.float32(position_temperature)
    if position_noise is not None:
        scores = scores + position_noise
    scores = np.where(tokens != MASK_ID, np.float32(-np.inf), scores)
    cells = scores.shape[1] * scores.shape[2]
    order = np.argsort(-scores.reshape(size, cells), axis=1, kind="stable")
    chosen = np.zeros((size, cells), dtype=bool)
    ranks = np.arange(cells)[None, :]
    np.put_along_axis(chosen, order, ranks < np.asarray(counts)[:, None], axis=1)
    new_tokens: np.ndarray = np.where(chosen.reshape(tokens.shape), pred, tokens)
    return new_tokens
