"""The resumable decode: per-item decode states and one step over whichever items are active.

A :class:`DecodeState` is one item's decode (its prompt, tokens, schedule, step index and
all its noise, drawn when it starts: :mod:`.selection`). A :class:`Stepper` holds the
active states of one :class:`.decode_types.DecodeOptions`; :meth:`Stepper.step` builds the batch
of the states active now (layout, length and row buckets as a whole-batch decode would, so
CUDA-graph shapes repeat), runs one forward through the decoder's step runner (plain or IO
binding) and advances every state by one of ITS OWN steps. States join at a step boundary
and leave when their last step is done (or when cancelled). Each item's codes are exactly
those it gets decoded alone: a forward's outputs for an item depend on its own tokens only,
and its noise only on its own generator.

A step that raises is run again item by item (a step is a pure function of the states, so
running it twice draws nothing twice): only the items whose own step fails get the error.
A step of the device loop (:mod:`.device_loop`) whose step session fails is run again on
the host loop, which the engine keeps from then on.

The opt-in prefix cache (``prefix_cache >= 2``, not exact) counts refreshes per batch, so a
batch with the prefix cache is whole: items join only when none is active, and a cancelled
item stays in the batch until the others finish (its result is discarded).

:func:`between_steps` installs a hook that :meth:`.decoder.Decoder.decode` (every
whole-batch decode: ``Engine.synthesize_batch``, ``generate_codes_batch``) calls on this
thread at each step boundary: the worker serves requests there while background work (a
voice anchor, say) waits, its steps kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.decoding.decode_types import DecodeOptions, DecodeStats
from wyoming_omnivoice.engine.decoding.device_loop import DeviceLoop, tokens_of
from wyoming_omnivoice.engine.decoding.device_selection import DeviceLoopError
from wyoming_omnivoice.engine.decoding.schedule import unmask_counts
from wyoming_omnivoice.engine.decoding.selection import (
    ItemNoise,
    choose_cells,
    draw_noise,
    sample_classes,
)
from wyoming_omnivoice.engine.forward.layouts import Batch, natural_length
from wyoming_omnivoice.engine.graphs.scoring import (
    CONF,
    PRED,
    TOPK_INDICES,
    TOPK_VALUES,
)
from wyoming_omnivoice.engine.prompt.builder import Prompt
from wyoming_omnivoice.engine.runtime.interrupt import ForwardInterrupt, Interrupted, arm


class StepSource(Protocol):
    """What a :class:`Stepper` uses of its :class:`.decoder.Decoder`."""

    max_positions: int | None
    selection_graph: Callable[..., Any] | None

    def scorer_for(self, options: DecodeOptions) -> Any: ...

    def layout_for(self, prompts: list[Prompt]) -> str: ...

    def shape_for(self, prompts: list[Prompt], pad_to: int | None = None,
                  layout: str | None = None
                  ) -> tuple[int | tuple[int, ...] | None, int | None]: ...

    def prepare_step(self, batch: Batch, scorer: Any, guidance: np.ndarray, want: list[str],
                     prefix_cache: int = 0) -> Any: ...

_local = threading.local()


@contextmanager
def between_steps(hook: Callable[[], None], interrupt: ForwardInterrupt | None = None
                  ) -> Iterator[None]:
    """Call ``hook()`` at every step boundary of the whole-batch decodes run on this thread
    inside the ``with`` (not inside ``hook`` itself); an exception it raises ends the decode.

    With ``interrupt``, :meth:`.interrupt.ForwardInterrupt.request` (from any thread) stops
    the forward of such a decode's step in the middle (host step loop on the CPU): the step
    is run again after the next ``hook()``, with the same result."""
    previous = getattr(_local, "hook", None), getattr(_local, "interrupt", None)
    _local.hook, _local.interrupt = hook, interrupt
    if interrupt is not None:
        interrupt.clear()
    try:
        yield
    finally:
        _local.hook, _local.interrupt = previous


def step_boundary() -> None:
    """Run this thread's :func:`between_steps` hook, if any (not re-entrantly)."""
    hook = getattr(_local, "hook", None)
    if hook is None:
        return
    interrupt = getattr(_local, "interrupt", None)
    if interrupt is not None:
        interrupt.clear()  # what is waiting now is served by this call
    _local.hook = None
    try:
        hook()
    finally:
        _local.hook = hook


def _background_interrupt() -> ForwardInterrupt | None:
    """The interrupt a step on this thread answers to: only a background decode's step
    (inside :func:`between_steps`, not inside its hook)."""
    if getattr(_local, "hook", None) is None:
        return None
    return getattr(_local, "interrupt", None)


@dataclass(eq=False)
class DecodeState:
    """One item's resumable decode."""

    prompt: Prompt
    counts: np.ndarray  # int64 [num_step]: cells unmasked per step
    noise: ItemNoise
    tokens: np.ndarray  # int64 [8, T]
    step: int = 0
    cancelled: bool = False
    error: BaseException | None = None
    #: Anything the owner keeps with the state (the session's item).
    owner: Any = field(default=None, repr=False)

    @property
    def num_target(self) -> int:
        return int(self.tokens.shape[1])

    @property
    def done(self) -> bool:
        return self.step >= len(self.counts)

    @property
    def codes(self) -> np.ndarray:
        """The finished codes, int64 ``[8, T]``."""
        if np.any(self.tokens == MASK_ID):
            raise RuntimeError("decode finished with MASK cells left; schedule bug")
        return np.ascontiguousarray(self.tokens)


class Stepper:
    """The active decode states of one set of options, stepped together."""

    def __init__(self, decoder: StepSource, options: DecodeOptions,
                 pad_to: int | None = None, *, host_only: bool = False) -> None:
        self.decoder, self.options, self.pad_to = decoder, options, pad_to
        self.active: list[DecodeState] = []
        self.stats: DecodeStats = DecodeStats()
        self.sampling = options.class_temperature > 0
        self.scorer = decoder.scorer_for(options)
        self.guidance = np.array(options.guidance_scale, dtype=np.float32)
        self.want = [PRED, CONF] + ([TOPK_VALUES, TOPK_INDICES] if self.sampling else [])
        self.penalty = (np.arange(NUM_CODEBOOKS, dtype=np.float32)[:, None]
                        * np.float32(options.layer_penalty_factor))
        self.whole = options.prefix_cache >= 2
        #: Steps on the host loop even when the engine has the device loop (its check).
        self.host_only = host_only
        self._built: tuple[list[DecodeState], Batch, Any] | None = None
        #: The states held on the device and their step session (:mod:`.device_loop`).
        self.device = DeviceLoop(self)

    @property
    def on_device(self) -> bool:
        """Steps run on the device loop: the engine has one (greedy classes, IO binding,
        no prefix cache) and this stepper may use it."""
        return (self.decoder.selection_graph is not None and not self.sampling
                and not self.whole and not self.host_only)

    @property
    def joinable(self) -> bool:
        """New items may join now (a prefix-cache batch is whole: only before its first
        step)."""
        return not (self.whole and any(s.step for s in self.active))

    def start(self, prompt: Prompt, rng: np.random.Generator, owner: Any = None
              ) -> DecodeState:
        """A new item (its noise drawn now); it joins at the next step. ValueError when the
        backbone cannot take it, or when a prefix-cache batch is running."""
        if not self.joinable:
            raise ValueError("a prefix-cache batch is whole: wait until it has finished")
        self._check_fits([prompt])
        options = self.options
        t_len = prompt.num_target
        counts = np.asarray(unmask_counts(NUM_CODEBOOKS * t_len, options.num_step,
                                          options.t_shift), dtype=np.int64)
        noise = draw_noise(rng, t_len, counts, sampling=self.sampling,
                           position_noise=options.position_temperature > 0)
        state = DecodeState(prompt=prompt, counts=counts, noise=noise, owner=owner,
                            tokens=np.full((NUM_CODEBOOKS, t_len), MASK_ID, dtype=np.int64))
        self.active.append(state)
        return state

    def cancel(self, state: DecodeState) -> None:
        """``state`` leaves at the next step boundary (a prefix-cache batch: at its end)."""
        state.cancelled = True
        if not self.whole and state in self.active:
            self.active.remove(state)

    def step(self) -> list[DecodeState]:
        """One forward over the active states; those finished or failed now leave and are
        returned (``error`` set on a failed one)."""
        states = list(self.active)
        if not states:
            return []
        if self.device.held is not None and not self.on_device:
            self.device.sync()  # the engine left the device loop since the last step
        interrupt = None if self.on_device or self.options.prefix_cache >= 2 \
            else _background_interrupt()
        try:
            with arm(interrupt):
                self._advance_or_host(states)
        except Interrupted:
            return []  # nothing changed: the step runs again after the step boundary
        except Exception as err:
            self.device.sync()
            states = [s for s in states if s.error is None]
            self._built = None
            if len(states) == 1:
                states[0].error = err
            else:
                for state in states:
                    try:
                        self._advance_or_host([state])
                    except Exception as item_err:
                        state.error = item_err
                self._built = None
        self.stats.steps += 1
        ended = [s for s in states if s.error is not None or s.done]
        if ended:
            self.active = [s for s in self.active if s not in ended]
        if self.whole and self.active and all(s.cancelled for s in self.active):
            ended += self.active
            self.active = []
        return [s for s in ended if not s.cancelled]

    def _advance_or_host(self, states: list[DecodeState]) -> None:
        """:meth:`_advance`; when the device loop fails, the same step on the host loop."""
        try:
            self._advance(states)
        except DeviceLoopError as err:
            self.device.fail(err)
            self._advance(states)

    # -- inside --------------------------------------------------------------------------
    def _check_fits(self, prompts: list[Prompt]) -> None:
        limit = self.decoder.max_positions
        if limit is None:
            return
        layout = self.decoder.layout_for(prompts)
        padded, _ = self.decoder.shape_for(prompts, self.pad_to, layout)
        longest = natural_length(prompts, layout)
        if isinstance(padded, tuple):
            longest = max(longest, *padded)
        elif padded is not None:
            longest = max(longest, padded)
        if longest > limit:
            raise ValueError(f"this request needs {longest} positions, more than the "
                             f"{limit} the backbone supports; shorten the text or the "
                             "voice reference")

    def batch(self, states: list[DecodeState]) -> tuple[Batch, Any]:
        """The batch of ``states`` and its step runner (built once per set of states)."""
        built = self._built
        if built is not None and built[0] == states:
            return built[1], built[2]
        decoder = self.decoder
        prompts = [s.prompt for s in states]
        self._check_fits(prompts)
        layout = decoder.layout_for(prompts)
        padded, pad_rows = decoder.shape_for(prompts, self.pad_to, layout)
        batch = Batch(prompts, layout, padded, pad_rows)
        if not self.stats.layout:
            self.stats.layout = layout
            self.stats.grids = [(grid.rows, grid.length) for grid in batch.grids]
        if any(s.step for s in states):
            batch.put_all(tokens_of(states, batch.t_max))
        runner = decoder.prepare_step(batch, self.scorer, self.guidance, self.want,
                                      self.options.prefix_cache)
        self._built = (list(states), batch, runner)
        return batch, runner

    def _advance(self, states: list[DecodeState]) -> None:
        """One forward over ``states`` and one selection step each (nothing is changed
        when the forward raises)."""
        if self.on_device:
            self.device.advance(states)
            return
        batch, runner = self.batch(states)
        results = runner.run(self.stats)
        t_max = batch.t_max
        pred, conf = results[0], results[1]
        counts = np.zeros(len(states), dtype=np.int64)
        noise = None
        if self.options.position_temperature > 0:
            noise = np.zeros((len(states), NUM_CODEBOOKS, t_max), dtype=np.float32)
        if self.sampling:
            pred = pred.copy()
        for i, state in enumerate(states):
            if state.done:  # a finished item of a whole (prefix-cache) batch
                continue
            t_len = state.num_target
            counts[i] = state.counts[state.step]
            if counts[i] == 0:
                continue
            classes = state.noise.classes[state.step]
            if classes is not None:
                pred[i, :, :t_len] = sample_classes(
                    results[2][i, :, :t_len], results[3][i, :, :t_len],
                    self.options.class_temperature, classes)
            position = state.noise.position[state.step]
            if noise is not None and position is not None:
                noise[i, :, :t_len] = position
        tokens = choose_cells(tokens_of(states, t_max), pred, conf, counts, noise,
                              self.penalty, float(self.options.position_temperature))
        for i, state in enumerate(states):
            if not state.done:
                state.tokens = tokens[i, :, :state.num_target].copy()
                state.step += 1
        batch.put_all(tokens)


def run_to_end(stepper: Stepper, on_done: Callable[[DecodeState], None] | None = None
               ) -> None:
    """Step until no state is active, calling this thread's step hook between steps."""
    started = time.perf_counter()
    while stepper.active:
        for state in stepper.step():
            if on_done is not None:
                on_done(state)
        if stepper.active:
            step_boundary()
    stepper.stats.total_s += time.perf_counter() - started

