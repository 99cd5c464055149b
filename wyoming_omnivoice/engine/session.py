"""A step-level synthesis session: requests join a running decode at the next step boundary.

:class:`SynthesisSession` (``Engine.open_session(options)``) is the engine's resumable
decode as its owner sees it: :meth:`~SynthesisSession.add` a request (it joins at the next
step), :meth:`~SynthesisSession.step` once per backbone forward (every active request
advances by one of its own steps), and take the requests that finished at that step, each
with its audio (vocoder and post-processing run when its last step is done) or its codes,
or its error. Between two steps its owner may add, cancel or do other work.

Long text is decoded chunk after chunk like ``Engine.synthesize_batch``: when chunk ``k`` of
a request finishes, chunk ``k + 1`` joins at the next step (an uncloned text's later chunks
cloning chunk 0's voice, as upstream). Each request's result is exactly what it gets
decoded alone (:mod:`.stepping`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from wyoming_omnivoice.engine.audio.vocoder import Vocoder
from wyoming_omnivoice.engine.decoding.decode_types import DecodeOptions, DecodeStats
from wyoming_omnivoice.engine.decoding.stepping import DecodeState, Stepper, step_boundary
from wyoming_omnivoice.engine.planning import Plan, Planner, SynthesisRequest
from wyoming_omnivoice.engine.rendering import render_batch
from wyoming_omnivoice.engine.synthesis_stats import SynthesisStats


class _Decoder(Protocol):
    def stepper(self, options: DecodeOptions, pad_to: int | None = None) -> Stepper: ...


class SessionEngine(Protocol):
    """What a session uses of its :class:`.core.Engine`."""

    @property
    def decoder(self) -> _Decoder: ...

    @property
    def planner(self) -> Planner: ...

    @property
    def vocoder_runner(self) -> Vocoder: ...


@dataclass(eq=False)
class SessionItem:
    """One request in a session: its chunks, the codes decoded so far, its outcome."""

    request: SynthesisRequest
    chunks: list[Plan]
    codes_only: bool = False
    #: Whatever the owner keeps with the request (the worker's job).
    tag: Any = None
    codes: list[np.ndarray] = field(default_factory=list)
    state: DecodeState | None = None
    #: float32 audio (or int64 ``[8, T]`` codes with ``codes_only``) once done.
    result: np.ndarray | None = None
    error: BaseException | None = None
    cancelled: bool = False
    #: Diffusion steps decoded for this request so far (all chunks).
    steps: int = 0

    @property
    def done(self) -> bool:
        return self.result is not None or self.error is not None or self.cancelled


class SynthesisSession:
    """Requests of one :class:`DecodeOptions`, decoded step by step together."""

    def __init__(self, engine: SessionEngine, options: DecodeOptions) -> None:
        self.engine = engine
        self.options = options
        self._stepper: Stepper = engine.decoder.stepper(options)
        self._waiting: deque[SessionItem] = deque()
        self._items: list[SessionItem] = []

    @property
    def stats(self) -> DecodeStats:
        """Where the session's time went (steps, backbone, ...)."""
        return self._stepper.stats

    @property
    def active(self) -> int:
        """Requests added and not finished."""
        return len(self._items)

    @property
    def decoding(self) -> int:
        """Requests in the running batch now (one decode state each)."""
        return len(self._stepper.active)

    @property
    def joinable(self) -> bool:
        """A request added now joins at the next step (a prefix-cache batch is whole: it
        waits until the running one has finished)."""
        return self._stepper.joinable

    def add(self, request: SynthesisRequest, *, codes_only: bool = False, tag: Any = None
            ) -> SessionItem:
        """Plan ``request`` (a bad one raises ``ValueError`` here) and let it join at the
        next step. ``codes_only``: its result is the codes of one decode (no long-text
        chunks, no vocoder), like ``generate_codes_batch``."""
        planner = self.engine.planner
        plan = planner.plan(request)
        chunks = [plan] if codes_only else planner.chunks(plan)
        item = SessionItem(request=request, chunks=chunks, codes_only=codes_only, tag=tag)
        self._start(item, raise_errors=True)
        self._items.append(item)
        return item

    def cancel(self, item: SessionItem) -> None:
        """``item`` leaves the batch at the next step boundary; no result."""
        item.cancelled = True
        if item.state is not None:
            self._stepper.cancel(item.state)
        if item in self._waiting:
            self._waiting.remove(item)
        if item in self._items:
            self._items.remove(item)

    def step(self) -> list[SessionItem]:
        """One forward over the requests decoding now; the requests finished at it."""
        finished: list[SessionItem] = []
        self._admit(finished)
        stepping = list(self._stepper.active)
        ended = self._stepper.step()
        for state in stepping:
            if state.error is None:
                state.owner.steps += 1
        rendering: list[SessionItem] = []
        for state in ended:
            item: SessionItem = state.owner
            item.state = None
            if state.error is not None:
                item.error = state.error
            else:
                item.codes.append(state.codes)
                if len(item.codes) < len(item.chunks):
                    self._start(item)
                else:
                    rendering.append(item)
        # The items whose last chunk ended at this step go through the vocoder together
        # (one pass: frame buckets on CUDA, where every new shape costs a set-up).
        self._finish(rendering)
        for state in ended:
            if state.owner.done:
                finished.append(state.owner)
        self._admit(finished)  # waiting for a whole batch that has just ended
        for item in finished:
            if item in self._items:
                self._items.remove(item)
        return finished

    def run(self) -> None:
        """Step until every request added has finished, calling this thread's step hook
        (:func:`.stepping.between_steps`) between steps."""
        while self._items:
            self.step()
            if self._items:
                step_boundary()

    # -- inside --------------------------------------------------------------------------
    def _start(self, item: SessionItem, *, raise_errors: bool = False) -> None:
        """Start the next chunk of ``item`` now, or queue it while a whole batch runs."""
        if not self._stepper.joinable:
            self._waiting.append(item)
            return
        planner = self.engine.planner
        index = len(item.codes)
        plan = planner.chunk(item.chunks, index, item.codes[0] if item.codes else None)
        try:
            prompt = planner.prompt(plan, self.options.denoise)
            item.state = self._stepper.start(prompt, plan.rng, owner=item)
        except Exception as err:
            if raise_errors:
                raise
            item.error = err

    def _admit(self, finished: list[SessionItem]) -> None:
        while self._waiting and self._stepper.joinable:
            item = self._waiting.popleft()
            self._start(item)
            if item.error is not None:
                finished.append(item)

    def _finish(self, items: list[SessionItem]) -> None:
        """The results of ``items`` (their last chunk done): codes, or audio rendered in
        one vocoder pass; when that pass fails, item by item, so only a failing item fails."""
        audio = []
        for item in items:
            if item.codes_only:
                item.result = item.codes[0]
            else:
                audio.append(item)
        if len(audio) > 1:
            try:
                results = self._render([item.codes for item in audio],
                                                   [item.chunks[0].ref_rms for item in audio])
            except Exception:
                results = None
            if results is not None:
                for item, result in zip(audio, results, strict=True):
                    item.result = result
                return
        for item in audio:
            try:
                (item.result,) = self._render([item.codes],
                                                          [item.chunks[0].ref_rms])
            except Exception as err:
                item.error = err

    def _render(self, codes: list[list[np.ndarray]], ref_rms: list[float | None]
                ) -> list[np.ndarray]:
        return render_batch(self.engine.vocoder_runner, codes, ref_rms, SynthesisStats())
