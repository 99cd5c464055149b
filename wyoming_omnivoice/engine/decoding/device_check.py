"""The step loop on the device held against the host loop: the whole-batch reference decode
(:func:`decode_on_device`), the noise it draws, and the start-up check
(:func:`check_device_loop`): a short seeded decode on both loops, the device loop kept only
when the codes are the same.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID
from wyoming_omnivoice.engine.decoding.decode_types import DecodeItem, DecodeOptions, DecodeStats
from wyoming_omnivoice.engine.decoding.device_selection import (
    DeviceStep,
    StepSession,
    leave_device_loop,
)
from wyoming_omnivoice.engine.decoding.schedule import unmask_counts
from wyoming_omnivoice.engine.decoding.stepping import run_to_end
from wyoming_omnivoice.engine.forward.layouts import Batch
from wyoming_omnivoice.engine.graphs.scoring import CONF, PRED
from wyoming_omnivoice.engine.prompt.builder import Prompt


def draw_position_noise(rngs: list[np.random.Generator], schedules: np.ndarray,
                        t_lens: list[int], t_max: int) -> np.ndarray:
    """Each item's Gumbel noise for all its steps, ``[B, S, 8, T_max]`` float32: drawn from
    its own generator on the steps where it unmasks, in step order, as the host loop draws
    it (zeros elsewhere and past the item's length)."""
    size, steps = schedules.shape
    noise = np.zeros((size, steps, 8, t_max), dtype=np.float32)
    eps = np.float32(1e-10)
    for i, rng in enumerate(rngs):
        for step in np.flatnonzero(schedules[i] > 0):
            u = rng.random((8, t_lens[i]), dtype=np.float32)
            noise[i, step, :, :t_lens[i]] = -np.log(-np.log(u + eps) + eps)
    return noise


def decode_on_device(decoder: Any, session: StepSession, items: list[DecodeItem],
                     options: DecodeOptions) -> list[np.ndarray]:
    """:meth:`.decoder.Decoder.decode` with the step loop on the device (IO binding; greedy
    classes): the same codes, per item ``[8, T_i]``. ``session``:
    :func:`.device_selection.step_session` for ``guided = options.guidance_scale != 0``
    and ``noisy = position_temperature > 0``."""
    if decoder.runner is None:
        raise ValueError("the device step loop needs the IO-binding step runner")
    if options.class_temperature > 0:
        raise ValueError("class sampling runs on the host path (class_temperature > 0)")
    started = time.perf_counter()
    stats = DecodeStats()
    prompts = [item.prompt for item in items]
    layout = decoder.layout_for(prompts)
    padded, pad_rows = decoder.shape_for(prompts, None, layout)
    batch = Batch(prompts, layout, padded, pad_rows)
    stats.layout, stats.grids = layout, [(g.rows, g.length) for g in batch.grids]
    size, t_max, t_lens = len(items), batch.t_max, batch.t_lens
    valid = np.arange(t_max)[None, :] < np.array(t_lens)[:, None]
    tokens = np.where(np.broadcast_to(valid[:, None, :], (size, 8, t_max)), MASK_ID,
                      0).astype(np.int64)
    schedules = np.array([unmask_counts(8 * t, options.num_step, options.t_shift)
                          for t in t_lens], dtype=np.int64).reshape(size, options.num_step)
    penalty = (np.arange(8, dtype=np.float32)[:, None]
               * np.float32(options.layer_penalty_factor))
    guidance = np.array(options.guidance_scale, dtype=np.float32)
    noisy = options.position_temperature > 0
    noise = draw_position_noise([item.rng for item in items], schedules, t_lens, t_max) \
        if noisy else None
    bound = decoder.runner.prepare(batch, decoder.scorer, guidance, [PRED, CONF])
    device = DeviceStep(session)
    t0 = time.perf_counter()
    device.prepare(bound, batch, tokens, schedules, np.zeros(size, np.int64),
                   guidance=float(guidance), penalty=penalty,
                   position_temperature=options.position_temperature, noise=noise)
    # The whole decode's noise goes up here, once: its size and the time of the uploads.
    stats.extra["prepare_s"] = time.perf_counter() - t0
    stats.extra["noise_mib"] = 0.0 if noise is None else noise.nbytes / 2**20
    for _ in range(options.num_step):
        device.step(stats)
        stats.steps += 1
    tokens = device.tokens()
    device.release()
    stats.total_s = time.perf_counter() - started
    decoder.last_stats = stats
    out = [np.ascontiguousarray(tokens[i, :, :t]) for i, t in enumerate(t_lens)]
    if any(np.any(t == MASK_ID) for t in out):
        raise RuntimeError("decode finished with MASK cells left; schedule bug")
    return out


def check_device_loop(decoder: Any, prompts: list[Prompt], options: DecodeOptions,
                      seed: int = 0) -> bool:
    """Decode ``prompts`` (seeded) on the device loop and on the host loop; keep the device
    loop only when both give the same codes (else the engine leaves it, with one warning).
    Returns whether the device loop is on."""
    if decoder.selection_graph is None:
        return False

    def decode(host_only: bool) -> list[Any]:
        stepper = decoder.stepper(options, host_only=host_only)
        states = [stepper.start(prompt, np.random.default_rng(seed + i))
                  for i, prompt in enumerate(prompts)]
        run_to_end(stepper)
        return states

    on_device = decode(host_only=False)
    on_host = decode(host_only=True)
    failed = next((s.error for s in on_device + on_host if s.error is not None), None)
    if failed is not None:
        leave_device_loop(decoder, f"its check decode failed ({failed})")
    elif any(not np.array_equal(a.codes, b.codes)
             for a, b in zip(on_device, on_host, strict=True)):
        leave_device_loop(decoder, "a seeded check decode gave other codes than the host "
                          "loop's")
    return decoder.selection_graph is not None
