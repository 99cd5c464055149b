"""A :class:`.stepping.Stepper`'s step loop on the device, and its way back to the host.

The stepper hands every step of its active states here while the engine has a step session
(:attr:`.decoder.Decoder.selection_graph`; greedy classes, IO binding, no prefix cache).
The states are bound to a :class:`.device_selection.DeviceStep` once per set of states
(their noise and schedules uploaded once); their host tokens stay as they were at that
moment (the snapshot) and are brought back (:meth:`DeviceLoop.sync`) when the set changes,
an item ends, or another decode takes the step buffers.

When the device fails (the step session raises, or its tokens cannot be read back),
:meth:`DeviceLoop.fail` puts every state back to its snapshot (tokens and step index: a
step is a pure function of the states, so running those steps again on the host gives the
same codes), and the engine leaves the device loop for good with one warning
(:func:`.device_selection.leave_device_loop`). A request never fails because of it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wyoming_omnivoice.engine.constants import NUM_CODEBOOKS
from wyoming_omnivoice.engine.decoding.device_selection import (
    DeviceLoopError,
    DeviceStep,
    leave_device_loop,
)


def tokens_of(states: list[Any], t_max: int) -> np.ndarray:
    """The states' tokens as one ``[B, 8, T_max]`` array (0 past an item's length)."""
    tokens = np.zeros((len(states), NUM_CODEBOOKS, t_max), dtype=np.int64)
    for i, state in enumerate(states):
        tokens[i, :, :state.num_target] = state.tokens
    return tokens


def noise_of(states: list[Any], t_max: int) -> np.ndarray:
    """Every state's Gumbel noise for all its steps, ``[B, S, 8, T_max]`` (zeros where it
    unmasks nothing), uploaded once per set of states."""
    steps = len(states[0].counts)
    noise = np.zeros((len(states), steps, NUM_CODEBOOKS, t_max), dtype=np.float32)
    for i, state in enumerate(states):
        for step, position in enumerate(state.noise.position):
            if position is not None:
                noise[i, step, :, :state.num_target] = position
    return noise


class DeviceLoop:
    """The states a stepper holds on the device (see the module doc)."""

    def __init__(self, stepper: Any) -> None:
        self.stepper = stepper
        #: The states bound now, their DeviceStep and each one's step index at binding.
        self.held: tuple[list[Any], DeviceStep, list[int]] | None = None

    def advance(self, states: list[Any]) -> None:
        """One step of ``states`` on the device (DeviceLoopError: nothing changed that the
        snapshot does not undo)."""
        stepper = self.stepper
        held = self.held
        if held is None or held[0] != states:
            self.sync()
            make = stepper.decoder.selection_graph
            if make is None:
                raise DeviceLoopError("the engine has no step session")
            options = stepper.options
            noisy = options.position_temperature > 0
            session = make(guided=options.guidance_scale != 0, noisy=noisy)
            batch, runner = stepper.batch(states)
            device = DeviceStep(session, on_evict=self.sync)
            device.prepare(runner, batch, tokens_of(states, batch.t_max),
                           np.stack([s.counts for s in states]).astype(np.int64),
                           np.array([s.step for s in states], np.int64),
                           guidance=float(stepper.guidance), penalty=stepper.penalty,
                           position_temperature=float(options.position_temperature),
                           noise=noise_of(states, batch.t_max) if noisy else None)
            held = self.held = (list(states), device, [s.step for s in states])
        held[1].step(stepper.stats)
        for state in states:
            state.step += 1
        if any(s.done for s in states):
            self.sync()

    def sync(self) -> None:
        """Bring the device's tokens back into the states it holds, and let them go (tokens
        that cannot be read: :meth:`fail`)."""
        held, self.held = self.held, None
        if held is None:
            return
        states, device, _ = held
        try:
            tokens = device.tokens()
        except Exception as err:
            self.held = held
            self.fail(err)
            return
        device.release()
        for i, state in enumerate(states):
            state.tokens = tokens[i, :, :state.num_target].copy()

    def fail(self, err: BaseException) -> None:
        """The device failed: the states back to their snapshot, the engine's step loop to
        the host for good."""
        held, self.held = self.held, None
        if held is not None:
            states, device, start = held
            for state, step in zip(states, start, strict=True):
                state.step = step
            device.release()
        leave_device_loop(self.stepper.decoder, f"{type(err).__name__}: {err}")
