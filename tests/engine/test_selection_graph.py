"""The selection graph against the host selection, bit for bit, on the CPU provider:
random cases with ties, padding cells, items that unmask nothing, -inf scores, each
item's count read from its schedule and its Gumbel noise at its own step, the step
counters advanced; and no node that reads a device value to size another (TopK's K)."""

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
    """The selection at each item's step (0 unless given), its count put in its schedule
    there: new tokens and new step counters."""
    tokens = case["tokens"]
    size = tokens.shape[0]
    steps = np.zeros(size, np.int64) if steps is None else steps
    columns = 1 if noise is None else noise.shape[1]
    schedule = np.zeros((size, columns + 1), np.int64)  # the last column: 0, as the decode
    schedule[np.arange(size), steps] = case["counts"]
    feeds = {sg.PRED: case["pred"], sg.CONF: case["conf"], sg.TOKENS: tokens,
             sg.SCHEDULE: schedule, sg.STEPS: steps, sg.PENALTY: case["penalty"]}
    if noise is not None:
        feeds.update({sg.NOISE: noise, sg.TEMPERATURE: np.array(temperature, np.float32)})
    new_tokens, new_steps = session.run([sg.NEW_TOKENS, sg.NEW_STEPS], feeds)
    np.testing.assert_array_equal(new_steps, steps + 1)
    return new_tokens, new_steps


@pytest.mark.parametrize("ties", [True, False], ids=["ties", "continuous"])
def test_deterministic_selection_equals_host(sessions: dict[bool, ort.InferenceSession],
                                             ties: bool) -> None:
    rng = np.random.default_rng(11 if ties else 12)
    for _ in range(150):
        case = random_case(rng, ties=ties)
        want = choose_cells(case["tokens"], case["pred"], case["conf"], case["counts"],
                            None, case["penalty"], 0.0)
        got, _ = run(sessions[False], case)
        np.testing.assert_array_equal(got, want)


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


def test_no_count_sizes_the_sort() -> None:
    """TopK's K is the row's size (a shape), never a value computed from the counts: on
    CUDA a K read from the device is a copy to the host and a sync in every step."""
    import onnx

    for noisy in (False, True):
        model = onnx.ModelProto.FromString(sg.build_selection_model(noisy=noisy))
        producer = {out: n for n in model.graph.node for out in n.output}
        (topk,) = [n for n in model.graph.node if n.op_type == "TopK"]
        seen, pending = set(), [topk.input[1]]
        while pending:
            name = pending.pop()
            node = producer.get(name)
            if node is None or name in seen:
                continue
            seen.add(name)
            assert node.op_type in ("Shape", "Slice", "Reshape", "Where", "Equal", "Sub",
                                    "Div", "Add", "GatherND"), node.op_type
            if node.op_type != "Shape":
                pending.extend(node.input[:1] if node.op_type == "Slice" else [])
        assert any(producer[n].op_type == "Shape" for n in seen)
