"""Build a random upstream ``OmniVoice`` torch model of a given preset."""

from __future__ import annotations

import logging

from .presets import QWEN3_COMMON, Preset
from .upstream import import_upstream, seed_everything

logger = logging.getLogger(__name__)


def build_omnivoice(preset: Preset, text_vocab: int, seed: int):  # -> OmniVoice
    """Return an eval-mode fp32 ``OmniVoice`` with seeded random weights.

    ``text_vocab`` is the tokenizer size; the embedding table gets at least
    ``preset.min_text_vocab`` rows because upstream pads batch rows with id 1024 and
    looks it up in the text table.
    """
    import torch

    ov = import_upstream()
    seed_everything(seed)
    llm_config = dict(QWEN3_COMMON)
    llm_config.update(
        vocab_size=max(text_vocab, preset.min_text_vocab),
        hidden_size=preset.hidden_size,
        intermediate_size=preset.intermediate_size,
        num_hidden_layers=preset.num_hidden_layers,
        num_attention_heads=preset.num_attention_heads,
        num_key_value_heads=preset.num_key_value_heads,
        head_dim=preset.head_dim,
    )
    config = ov.OmniVoiceConfig(llm_config=llm_config)
    config.llm_config._attn_implementation = "sdpa"
    model = ov.OmniVoice(config)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        model.audio_heads.weight.mul_(preset.heads_scale)
        # RMSNorm weights start as exact ones; jitter them so every norm is distinct
        # (a port that skips or swaps one then shows up in the goldens).
        for name, param in model.llm.named_parameters():
            if name.endswith("norm.weight"):
                noise = torch.randn(param.shape, generator=generator)
                param.copy_(1.0 + 0.1 * noise)
            # With the default init every target position sees nearly the same context
            # and a random model emits one code per codebook; these make codes diverse.
            if name.endswith(("q_norm.weight", "k_norm.weight")):
                param.mul_(preset.attention_sharpen)
            if name.endswith(("v_proj.weight", "o_proj.weight")) or ".mlp." in name:
                param.mul_(preset.residual_scale)
    model = model.float().eval()
    for name, param in model.named_parameters():
        if not torch.isfinite(param).all():
            raise RuntimeError(f"non-finite initial weights in {name}")
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("built OmniVoice preset=%s with %.2fM parameters", preset.name, n_params / 1e6)
    return model


def attach_inference_helpers(model, text_tokenizer, audio_tokenizer) -> None:
    """Set what ``OmniVoice.from_pretrained`` would attach for inference."""
    from omnivoice.utils.duration import RuleDurationEstimator

    model.text_tokenizer = text_tokenizer
    model.audio_tokenizer = audio_tokenizer
    model.duration_estimator = RuleDurationEstimator()
    model.sampling_rate = 24000
