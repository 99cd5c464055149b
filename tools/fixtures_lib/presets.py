"""Model size presets for the fixture builder: tiny (committed), mid and real (benchmarks)."""

from __future__ import annotations

from dataclasses import dataclass

#: Largest acceptable |ORT - torch| per preset (fp32 graphs; bigger models sum more terms).
TOLERANCE = {"tiny": 1e-4, "mid": 2e-3, "real": 1e-2}


@dataclass(frozen=True)
class Preset:
    """Backbone shape of one preset (Qwen3 ``llm_config`` values)."""

    name: str
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    #: Minimum text-embedding rows; the real model has 151676, upstream needs >= 1025.
    min_text_vocab: int
    #: Multiplier applied to ``audio_heads.weight`` so a random model's choices are decisive.
    heads_scale: float
    #: Whether the torch model is also saved under ``DIR/upstream/`` for benchmarks.
    save_upstream: bool
    #: Higgs codec size: "tiny" (semantic width 64) or "real" (published widths).
    codec: str
    #: Round every weight to a bfloat16-representable fp32 value: the low 16 bits of each
    #: float become zero, so git's zlib halves the committed fixtures. Compute stays fp32.
    round_weights: bool = False
    #: Multiplier on every q_norm/k_norm weight: sharper attention, so positions differ.
    attention_sharpen: float = 1.0
    #: Multiplier on v_proj, o_proj and MLP weights: context moves the residual stream.
    residual_scale: float = 1.0


_REAL_WIDTH = dict(
    hidden_size=1024, intermediate_size=3072, num_attention_heads=16, num_key_value_heads=8,
    head_dim=128, min_text_vocab=32768, heads_scale=4.0, save_upstream=True, codec="real",
)

PRESETS: dict[str, Preset] = {
    "tiny": Preset(
        "tiny", hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=16, min_text_vocab=1025,
        heads_scale=8.0, save_upstream=False, codec="tiny", round_weights=True,
        attention_sharpen=3.0, residual_scale=4.0,
    ),
    "mid": Preset("mid", num_hidden_layers=4, **_REAL_WIDTH),
    "real": Preset("real", num_hidden_layers=28, **_REAL_WIDTH),
}

#: Shared Qwen3 settings (the published ``llm_config``).
QWEN3_COMMON = {
    "model_type": "qwen3",
    "rope_theta": 1_000_000.0,
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 40960,
    "attention_bias": False,
    "hidden_act": "silu",
    "tie_word_embeddings": True,
}
