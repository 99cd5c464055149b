"""The selection graph against the host selection, bit for bit, on the CPU provider:
random cases with ties, padding cells, items that unmask nothing, -inf scores and
Gumbel noise indexed per item by its own step; and the scatter into the grid ids."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from selection_reference import MASK_ID, choose_cells

from wyoming_omnivoice.engine.graphs import selection_graph as sg


@pytest.fixture(scope="module")
def sessions() -> dict[bool, ort.InferenceSession]:
    return {noisy: ort.InferenceSession(sg.build_selection_model(noisy=noisy),
                                        providers=["CPUExecutionProvider"])
            for noisy in (False, True)}


def gumbel(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    u = rng.random(shape, dtype=np.float32)
    eps = np.float32(1e-10)
    noise: np.ndarray = -np.log(-np.log(u + eps) + eps)
    return noise


def random_case(rng: np.random.Generator, *, ties: bool) -> dict[str, np.ndarray]:
    size = int(rng.integers(1, 6))
    t_max = int(rng.integers(1, 40))
    t_lens = rng.integers(1, t_max + 1, size)
    t_lens[0] = t_max
    valid = np.arange(t_max)[None, :] < t_lens[:, None]
    valid3 = np.broadcast_to(valid[:, None, :], (size, 8, t_max))
    # Some cells already decoded (not MASK); padding cells hold 0.
    decoded = rng.random((size, 8, t_max)) < rng.random()
    tokens = np.where(valid3 & ~decoded, MASK_ID, rng.integers(0, 1024, (size, 8, t_max)))
    tokens = np.where(valid3, tokens, 0).astype(np.int64)
    pred = rng.integers(0, 1024, (size, 8, t_max)).astype(np.int64)
    if ties:  # few distinct values: many exact ties, some -inf
        conf = rng.choice(np.array([-1.0, -0.5, -2.0, -np.inf, 0.0, -0.0], np.float32),
                          (size, 8, t_max))
    else:
        conf = (-rng.exponential(2.0, (size, 8, t_max))).astype(np.float32)
    masked = (tokens == MASK_ID).reshape(size, -1).sum(axis=1)
    counts = np.array([int(rng.integers(0, m + 1)) if rng.random() < 0.8 else 0
                       for m in masked], dtype=np.int64)
    if rng.random() < 0.2:  # a count past the masked cells picks -inf cells, as on the host
        counts[0] = min(8 * t_max, masked[0] + 3)
    penalty = (np.arange(8, dtype=np.float32)[:, None] * np.float32(rng.choice([0.0, 5.0])))
    return {"tokens": tokens, "pred": pred, "conf": conf, "counts": counts,
            "penalty": penalty, "t_lens": t_lens}


def run(session: ort.InferenceSession, case: dict[str, np.ndarray], *, noise: np.ndarray
        | None = None, steps: np.ndarray | None = None, temperature: float = 0.0
        ) -> tuple[np.ndarray, np.ndarray]:
    tokens = case["tokens"]
    grid = np.full((2, 8, tokens.shape[2] + 3), 7, dtype=np.int64)
    # Item 0's cells into both grid rows (two copies), at an offset of 2 and 0.
    t = tokens.shape[2]
    src = np.concatenate([np.arange(8 * t), np.arange(8 * t)]).astype(np.int64)
    books, frames = np.divmod(np.arange(8 * t), t)
    length = grid.shape[2]
    dst = np.concatenate([0 * 8 * length + books * length + frames + 2,
                          1 * 8 * length + books * length + frames]).astype(np.int64)
    feeds = {sg.PRED: case["pred"], sg.CONF: case["conf"], sg.TOKENS: tokens,
             sg.COUNTS: case["counts"], sg.PENALTY: case["penalty"], sg.GRID_IDS: grid,
             sg.SRC_CELLS: src, sg.DST_CELLS: dst}
    if noise is not None:
        feeds.update({sg.NOISE: noise, sg.STEPS: steps,
                      sg.TEMPERATURE: np.array(temperature, np.float32)})
    new_tokens, new_grid = session.run([sg.NEW_TOKENS, sg.NEW_GRID_IDS], feeds)
    return new_tokens, new_grid


@pytest.mark.parametrize("ties", [True, False], ids=["ties", "continuous"])
def test_deterministic_selection_equals_host(sessions: dict[bool, ort.InferenceSession],
                                             ties: bool) -> None:
    rng = np.random.default_rng(11 if ties else 12)
    for _ in range(150):
        case = random_case(rng, ties=ties)
        want = choose_cells(case["tokens"], case["pred"], case["conf"], case["counts"],
                            None, case["penalty"], 0.0)
        got, grid = run(sessions[False], case)
        np.testing.assert_array_equal(got, want)
        t = want.shape[2]
        np.testing.assert_array_equal(grid[0, :, 2:2 + t], want[0])
        np.testing.assert_array_equal(grid[1, :, :t], want[0])
        assert (grid[0, :, :2] == 7).all() and (grid[1, :, t:] == 7).all()


@pytest.mark.parametrize("ties", [True, False], ids=["ties", "continuous"])
def test_gumbel_selection_equals_host(sessions: dict[bool, ort.InferenceSession],
                                      ties: bool) -> None:
    rng = np.random.default_rng(21 if ties else 22)
    for _ in range(150):
        case = random_case(rng, ties=ties)
        size, _, t_max = case["tokens"].shape
        num_steps = int(rng.integers(1, 6))
        steps = rng.integers(0, num_steps, size).astype(np.int64)
        # The whole decode's noise: zeros where an item does not unmask or past its length.
        noise = np.zeros((size, num_steps, 8, t_max), np.float32)
        for i, t_len in enumerate(case["t_lens"]):
            for s in range(num_steps):
                if rng.random() < 0.8:
                    noise[i, s, :, :t_len] = gumbel(rng, (8, int(t_len)))
        temperature = float(rng.choice([5.0, 1.0, 0.3]))
        this_step = noise[np.arange(size), steps]
        want = choose_cells(case["tokens"], case["pred"], case["conf"], case["counts"],
                            this_step, case["penalty"], temperature)
        got, _ = run(sessions[True], case, noise=noise, steps=steps, temperature=temperature)
        np.testing.assert_array_equal(got, want)


def test_nothing_changes_when_no_item_unmasks(sessions: dict[bool, ort.InferenceSession]
                                              ) -> None:
    case = random_case(np.random.default_rng(5), ties=True)
    case["counts"] = np.zeros_like(case["counts"])
    got, _ = run(sessions[False], case)
    np.testing.assert_array_equal(got, case["tokens"])
