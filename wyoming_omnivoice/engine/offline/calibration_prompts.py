"""Backbone inputs of realistic requests, for the fp16 calibration (``fp16_calibrate``).

Each feed is what the decoder hands the backbone in one step: the embeddings graph's
``inputs_embeds`` of a packed conditional + unconditional row and its block attention mask.
The set covers what moves activation ranges: short and long replies, several languages and
scripts, a designed voice (instruct), a cloned voice (reference audio codes), a batch of two
(padding positions), and the first step (every target frame masked) as well as a step half
way through the decode (half the target frames already audio codes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wyoming_omnivoice.engine.constants import CODEBOOK_SIZE, MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.forward.layouts import Batch
from wyoming_omnivoice.engine.prompt.builder import Prompt, PromptBuilder
from wyoming_omnivoice.engine.prompt.duration import estimate_num_frames
from wyoming_omnivoice.engine.prompt.instruct import normalize_instruct
from wyoming_omnivoice.engine.prompt.languages import resolve_language
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers

#: Codebook size of the audio tokens (ids 0..1023).


@dataclass(frozen=True)
class CalibrationRequest:
    text: str
    language: str | None = None
    instruct: str | None = None
    #: Frames of random reference codes (a cloned voice), 0 for none.
    reference_frames: int = 0


CALIBRATION_REQUESTS = (
    CalibrationRequest("The living room lights are now turned on."),
    CalibrationRequest("It is twenty one degrees outside, with light rain after six this "
                       "evening.", "en", "female, low pitch"),
    CalibrationRequest("Guten Morgen! Der Wecker klingelt morgen um sieben Uhr dreißig.", "de"),
    CalibrationRequest("厨房的灯已经关了。", "zh", "male"),
    CalibrationRequest("Your timer for the pasta is done.", "en",
                       reference_frames=60),
)


def _prompt(builder: PromptBuilder, request: CalibrationRequest,
            rng: np.random.Generator) -> Prompt:
    ref_codes = ref_text = None
    ref_len = None
    if request.reference_frames:
        ref_codes = rng.integers(0, CODEBOOK_SIZE, (NUM_CODEBOOKS, request.reference_frames))
        ref_text, ref_len = "Nice to meet you, this is my voice.", request.reference_frames
    frames = estimate_num_frames(request.text, ref_text, ref_len, 1.0)
    return builder.build(
        request.text, num_target=frames, language=resolve_language(request.language),
        instruct=normalize_instruct(request.instruct, request.text),
        ref_text=ref_text, ref_codes=ref_codes,
    )


def calibration_feeds(embeddings_path: Path, tokenizer_path: Path, *,
                      requests: tuple[CalibrationRequest, ...] = CALIBRATION_REQUESTS,
                      filled: tuple[float, ...] = (0.0, 0.5),
                      seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Backbone feeds ``{inputs_embeds, attention_mask}`` for every request and fill level,
    plus one batch of the two shortest prompts (padding positions); CPU provider."""
    rng = np.random.default_rng(seed)
    builder = PromptBuilder(tokenizer_path)
    embeddings = Graph(embeddings_path, choose_providers("cpu"))
    prompts = [_prompt(builder, request, rng) for request in requests]
    shortest = sorted(prompts, key=lambda p: p.length)[:2]
    batches = [[p] for p in prompts] + ([shortest] if len(prompts) > 1 else [])
    feeds = []
    for batch_prompts in batches:
        for fraction in filled:
            batch = Batch(batch_prompts, "packed")
            tokens = np.full((len(batch_prompts), NUM_CODEBOOKS, batch.t_max), MASK_ID,
                             dtype=np.int64)
            known = rng.random(tokens.shape[::2]) < fraction  # per (item, frame)
            codes = rng.integers(0, CODEBOOK_SIZE, tokens.shape)
            tokens = np.where(known[:, None, :], codes, tokens)
            batch.put_all(tokens)
            for grid in batch.grids:
                (embeds,) = embeddings.run({"input_ids": grid.ids,
                                            "audio_mask": grid.audio_mask}, ["inputs_embeds"])
                feeds.append({"inputs_embeds": embeds.astype(np.float32),
                              "attention_mask": grid.mask.copy()})
    return feeds
