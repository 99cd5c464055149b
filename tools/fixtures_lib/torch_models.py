"""Build the seeded torch models behind the fixtures (upstream ``OmniVoice`` + Higgs codec).

``tools/build_fixtures.py`` exports these into ONNX; recorders that run upstream's own
code on the committed tiny fixtures rebuild them here (the build is seeded and
byte-for-byte reproducible, so the weights equal the exported graphs' weights).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import higgs
from .omnivoice_model import attach_inference_helpers, build_omnivoice
from .presets import PRESETS
from .text_tokenizer import train_tokenizer, wrap_for_upstream
from .weights import round_to_bfloat16_values

logger = logging.getLogger("build_fixtures")

#: Seed of the tokenizer's training corpus (independent of the model seed).
TOKENIZER_SEED = 1234
#: The codec is seeded with ``seed + CODEC_SEED_OFFSET``.
CODEC_SEED_OFFSET = 7


@dataclass
class TorchModels:
    """The upstream model with its inference helpers attached, and what it was built from."""

    model: Any  # omnivoice OmniVoice
    codec: Any  # transformers HiggsAudioV2TokenizerModel (also model.audio_tokenizer)
    tokenizer: Any  # tokenizers.Tokenizer
    text_tokenizer: Any  # transformers.PreTrainedTokenizerFast (model.text_tokenizer)


def build_torch_models(preset_name: str = "tiny", seed: int = 0) -> TorchModels:
    """Build the seeded upstream model and codec of a preset, ready for ``generate``."""
    preset = PRESETS[preset_name]
    tokenizer = train_tokenizer(seed=TOKENIZER_SEED)
    text_tokenizer = wrap_for_upstream(tokenizer)
    model = build_omnivoice(preset, tokenizer.get_vocab_size(), seed=seed)
    codec = higgs.build_codec(preset.codec, seed=seed + CODEC_SEED_OFFSET)
    if preset.round_weights:
        round_to_bfloat16_values(model)
        round_to_bfloat16_values(codec)
    attach_inference_helpers(model, text_tokenizer, codec)
    return TorchModels(model, codec, tokenizer, text_tokenizer)


def save_upstream(model, codec, text_tokenizer, out_dir: Path) -> None:
    """Save the torch model so ``OmniVoice.from_pretrained(out_dir)`` loads the same weights."""
    out_dir.mkdir(parents=True, exist_ok=True)
    # The codec is attached as a sub-module for inference; keep it out of the model's
    # weights file (from_pretrained loads it from audio_tokenizer/).
    attached, model.audio_tokenizer = model.audio_tokenizer, None
    try:
        model.save_pretrained(out_dir)
    finally:
        model.audio_tokenizer = attached
    text_tokenizer.save_pretrained(out_dir)
    higgs.save_codec(codec, out_dir / "audio_tokenizer")
    logger.info("saved upstream torch model to %s", out_dir)
