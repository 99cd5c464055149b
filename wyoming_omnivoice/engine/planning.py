"""Requests resolved into decode plans, as upstream ``_preprocess_all`` and ``_generate_chunked``.

A :class:`SynthesisRequest` is what a caller asks for; a :class:`Plan` is that request
checked and resolved (language, instruct, reference codes, frame count, speed, random
generator) so the decoder needs no more decisions. Long text is split into plans of about
15 s here too. :class:`Planner` is the one planning and prompt step of a request, the same
for a whole batch (``Engine.synthesize_batch``) and a step-level session
(:class:`~wyoming_omnivoice.engine.session.SynthesisSession`): its plan on at least the
minimum canvas, its chunks, the rule that later chunks clone chunk 0, each chunk's prompt.
No graphs, no sessions: its rules read on their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.audio.reference import PreparedReference
from wyoming_omnivoice.engine.constants import FRAME_RATE, HOP_LENGTH, MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.forward.layouts import natural_length
from wyoming_omnivoice.engine.prompt.builder import Prompt, PromptBuilder
from wyoming_omnivoice.engine.prompt.duration import estimate_num_frames
from wyoming_omnivoice.engine.prompt.instruct import normalize_instruct
from wyoming_omnivoice.engine.prompt.languages import resolve_language
from wyoming_omnivoice.engine.prompt.text_rules import chunk_text_punctuation

# The plans' lines are the engine facade's (its log is the one turned up to see them).
_LOGGER = logging.getLogger("wyoming_omnivoice.engine.core")

#: Upstream chunks text whose estimate exceeds 30 s into pieces of about 15 s.
CHUNK_THRESHOLD_FRAMES = 30 * FRAME_RATE
CHUNK_DURATION_S = 15.0


@dataclass(frozen=True)
class SynthesisRequest:
    """One utterance to synthesize (see :meth:`Engine.synthesize`)."""

    text: str
    language: str | None = None
    instruct: str | None = None
    ref_text: str | None = None
    ref_codes: np.ndarray | None = field(default=None, compare=False)
    ref_rms: float | None = None
    speed: float | None = None
    num_frames: int | None = None
    seed: int | None = None


@dataclass
class Plan:
    """A request resolved like upstream ``_preprocess_all``."""

    text: str
    language: str | None
    instruct: str | None
    ref_text: str | None
    ref_codes: np.ndarray | None
    ref_rms: float | None
    num_frames: int
    speed: float
    rng: np.random.Generator


def plan_request(request: SynthesisRequest, rng: np.random.Generator | None = None) -> Plan:
    """Check ``request`` and resolve it; a bad field raises ``TypeError``/``ValueError``."""
    if not isinstance(request, SynthesisRequest):
        raise TypeError(f"requests must be SynthesisRequest, not {type(request).__name__}")
    if not isinstance(request.text, str):
        raise ValueError("text must be a string")
    language = resolve_language(request.language)
    instruct = normalize_instruct(request.instruct, request.text) \
        if request.instruct is not None else None
    ref_codes = check_ref_codes(request.ref_codes)
    ref_text = request.ref_text if ref_codes is not None else None
    if ref_codes is not None and not ref_text:
        raise ValueError("ref_codes need their transcript in ref_text")
    ref_len = int(ref_codes.shape[1]) if ref_codes is not None else None
    speed = 1.0 if request.speed is None else float(request.speed)
    if not 0.0 < speed <= 10.0:
        raise ValueError(f"speed must be in (0, 10], not {request.speed}")
    if request.num_frames is not None:
        frames = int(request.num_frames)
        if frames < 1:
            raise ValueError(f"num_frames must be at least 1, not {request.num_frames}")
        estimate = estimate_num_frames(request.text, ref_text, ref_len, 1.0)
        speed = estimate / frames
    else:
        frames = estimate_num_frames(request.text, ref_text, ref_len, speed)
    return Plan(
        text=request.text, language=language, instruct=instruct, ref_text=ref_text,
        ref_codes=ref_codes, ref_rms=request.ref_rms, num_frames=frames, speed=speed,
        rng=rng if rng is not None else np.random.default_rng(request.seed),
    )


def chunk_plan(plan: Plan) -> list[Plan]:
    """``plan`` split at punctuation into pieces of about 15 s when it is over 30 s."""
    if plan.num_frames <= CHUNK_THRESHOLD_FRAMES or not plan.text:
        return [plan]
    frames_per_char = plan.num_frames / len(plan.text)
    chunk_len = int(CHUNK_DURATION_S * FRAME_RATE / frames_per_char)
    pieces = chunk_text_punctuation(plan.text, chunk_len, 3)
    if not pieces:
        return [plan]
    return [replan(plan, text=piece) for piece in pieces]


def replan(plan: Plan, **changes: Any) -> Plan:
    """``plan`` with other text or reference; the frame count is estimated again."""
    changed = replace(plan, **changes)
    ref_len = int(changed.ref_codes.shape[1]) if changed.ref_codes is not None else None
    return replace(changed, num_frames=estimate_num_frames(
        changed.text, changed.ref_text, ref_len, plan.speed))


class Planner:
    """A request's plans and their prompts (see the module docstring)."""

    def __init__(self, prompts: PromptBuilder, min_canvas_frames: int) -> None:
        self.prompts = prompts
        #: The smallest target canvas decoded (``Engine``'s ``MIN_CANVAS_FRAMES``).
        self.min_canvas_frames = min_canvas_frames

    def plan(self, request: SynthesisRequest, rng: np.random.Generator | None = None
             ) -> Plan:
        """``request`` checked and resolved (``TypeError``/``ValueError`` for a bad one), on
        at least the minimum canvas."""
        return self.at_least_minimum(plan_request(request, rng))

    def chunks(self, plan: Plan) -> list[Plan]:
        """``plan`` as the chunks it is decoded in, one after the other (long text: pieces of
        about 15 s, each on at least the minimum canvas)."""
        chunks = chunk_plan(plan)
        if len(chunks) > 1:
            _LOGGER.debug("Long text split into %d chunks", len(chunks))
            chunks = [self.at_least_minimum(chunk) for chunk in chunks]
        return chunks

    def chunk(self, chunks: list[Plan], index: int, first_codes: np.ndarray | None) -> Plan:
        """Chunk ``index`` of ``chunks`` as it is decoded: as upstream, the later chunks of
        an uncloned text clone chunk 0's voice (``first_codes``: the codes of chunk 0)."""
        plan = chunks[index]
        if index > 0 and chunks[0].ref_codes is None:
            plan = self.at_least_minimum(
                replan(plan, ref_codes=first_codes, ref_text=chunks[0].text))
        return plan

    def prompt(self, plan: Plan, denoise: bool) -> Prompt:
        """The prompt ``plan`` is decoded with."""
        return self.prompts.build(
            plan.text, num_target=plan.num_frames, language=plan.language,
            instruct=plan.instruct, ref_text=plan.ref_text, ref_codes=plan.ref_codes,
            denoise=denoise)

    def at_least_minimum(self, plan: Plan) -> Plan:
        """``plan`` on at least the minimum canvas."""
        if plan.num_frames >= self.min_canvas_frames:
            return plan
        return replace(plan, num_frames=self.min_canvas_frames)


def check_ref_codes(ref_codes: Any) -> np.ndarray | None:
    """Reference codes as int64 ``[8, T_ref]`` in 0..1023, or ``None``; else ``ValueError``."""
    if ref_codes is None:
        return None
    codes = np.asarray(ref_codes)
    if codes.ndim != 2 or codes.shape[0] != NUM_CODEBOOKS or codes.shape[1] < 1:
        raise ValueError(f"ref_codes must have shape [8, T_ref], not {list(codes.shape)}")
    if not np.issubdtype(codes.dtype, np.integer):
        raise ValueError("ref_codes must be integers")
    if codes.min() < 0 or codes.max() >= MASK_ID:
        raise ValueError("ref_codes must be in 0..1023")
    return codes.astype(np.int64)


def check_reference_fits(prompts: PromptBuilder, layout_for: Callable[[list[Prompt]], str],
                         limit: int | None, sample_text: str,
                         prepared: PreparedReference) -> None:
    """ValueError when a request with this reference could never be decoded: its frames,
    its transcript and the longest target one request piece can have (``sample_text`` on
    :data:`CHUNK_THRESHOLD_FRAMES`) need more positions than the backbone supports
    (``limit``; checked before the encoders run)."""
    if limit is None:
        return
    frames = prepared.wav_24k.size // HOP_LENGTH
    prompt = prompts.build(
        sample_text, num_target=CHUNK_THRESHOLD_FRAMES, language=None, instruct=None,
        ref_text=prepared.text, ref_codes=np.zeros((NUM_CODEBOOKS, frames), np.int64))
    needed = natural_length([prompt], layout_for([prompt]))
    if needed > limit:
        raise ValueError(
            f"Reference audio is too long for this backbone: with {frames / FRAME_RATE:.1f}"
            f" s of reference a request needs {needed} positions, more than the {limit} "
            "it supports; use a reference of 3-10 s.")
