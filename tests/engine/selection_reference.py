"""The host selection of one decode step, as the decode loop does it today
(``engine/decoding/decoder.py`` at ceb3989, the body of its step loop after the model evaluation;
``choose_cells`` of the sched/devstep contract): the reference the device selection
(:mod:`wyoming_omnivoice.engine.graphs.selection_graph`) must equal bit for bit."""

from __future__ import annotations

import numpy as np

MASK_ID = 1024


def choose_cells(tokens: np.ndarray, pred: np.ndarray, conf: np.ndarray, counts: np.ndarray,
                 position_noise: np.ndarray | None, penalty: np.ndarray,
                 position_temperature: float) -> np.ndarray:
    size, books, t_max = tokens.shape
    cells = books * t_max
    scores = conf - penalty
    position_temp = np.float32(position_temperature)
    if position_temp > 0:
        scores = scores / position_temp
        if position_noise is not None:
            scores = scores + position_noise
    scores = np.where(tokens != MASK_ID, np.float32(-np.inf), scores)
    order = np.argsort(-scores.reshape(size, cells), axis=1, kind="stable")
    chosen = np.zeros((size, cells), dtype=bool)
    ranks = np.arange(cells)[None, :]
    np.put_along_axis(chosen, order, ranks < counts[:, None], axis=1)
    new: np.ndarray = np.where(chosen.reshape(tokens.shape), pred, tokens)
    return new
