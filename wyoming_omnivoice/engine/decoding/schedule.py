"""Timestep schedule of the masked-diffusion decode (upstream ``_get_time_steps``).

Upstream computes the shifted timesteps in float32 (``torch.linspace`` then
``t_shift * t / (1 + (t_shift - 1) * t)``) and the number of cells to unmask per step in
float64 with ``ceil``. Computing the timesteps in float64 changes the counts for about
1.5 % of lengths, so every operation here is float32 as upstream.

``torch.linspace`` in float32 is reproduced exactly as torch's CPU kernel computes it: with
``step = (end - start) / (steps - 1)`` in float32, point ``i`` is ``start + step * i`` in the
first half and ``end - step * (steps - 1 - i)`` in the second half, each evaluated with one
rounding to float32 (the compiled kernel fuses the multiply-add). The product and the sum are
exact in float64 for these sizes, so a float64 evaluation rounded once to float32 gives the
same bits. Checked against torch 2.13 for every length up to 1200 (``tools/record_rule_goldens.py``
records the schedules the tests compare with).
"""

from __future__ import annotations

import math

import numpy as np


def _torch_linspace_f32(start: float, end: float, steps: int) -> np.ndarray:
    if steps <= 0:
        return np.zeros(0, dtype=np.float32)
    if steps == 1:
        return np.array([start], dtype=np.float32)
    f_start = np.float32(start)
    f_end = np.float32(end)
    step = np.float64(np.float32((f_end - f_start) / np.float32(steps - 1)))
    index = np.arange(steps, dtype=np.float64)
    halfway = steps // 2
    low = np.float64(f_start) + step * index[:halfway]
    high = np.float64(f_end) - step * (steps - 1 - index[halfway:])
    return np.concatenate([low, high]).astype(np.float32)


def timesteps_f32(num_step: int, t_shift: float) -> np.ndarray:
    """The ``num_step + 1`` shifted timesteps from 0 to (nearly) 1, as float32."""
    if num_step < 1:
        raise ValueError(f"num_step must be at least 1, got {num_step}")
    t = _torch_linspace_f32(0.0, 1.0, num_step + 1)
    shift = np.float32(t_shift)
    shift_minus_one = np.float32(t_shift - 1)
    return ((shift * t) / (np.float32(1.0) + shift_minus_one * t)).astype(np.float32)


def timesteps(num_step: int, t_shift: float) -> list[float]:
    """The shifted timesteps as Python floats (float32 values), e.g. last = 0.99999976."""
    return [float(value) for value in timesteps_f32(num_step, t_shift)]


def unmask_counts(total: int, num_step: int, t_shift: float) -> list[int]:
    """Cells to unmask at each step for ``total`` masked cells (8 * frames per item).

    Step ``s`` takes ``ceil(total * (t[s+1] - t[s]))`` (float64), clamped to what is left;
    the last step takes the remainder, so the counts sum to ``total``. Zero means the step
    leaves the item unchanged.
    """
    steps = timesteps(num_step, t_shift)
    remaining = total
    counts: list[int] = []
    for step in range(num_step):
        if step == num_step - 1:
            count = remaining
        else:
            count = min(math.ceil(total * (steps[step + 1] - steps[step])), remaining)
        counts.append(int(count))
        remaining -= int(count)
    return counts
