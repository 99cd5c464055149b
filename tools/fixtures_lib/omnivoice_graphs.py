"""torch modules with the published I/O contracts of the OmniVoice graphs."""

from __future__ import annotations

from typing import Any


def make_export_modules(model: Any) -> dict[str, Any]:
    """Backbone (bidirectional and causal), embeddings and heads modules of ``model``."""
    import torch
    from torch import nn

    num_codebooks = model.config.num_audio_codebook
    vocab = model.config.audio_vocab_size

    class Backbone(nn.Module):
        """inputs_embeds [B,S,H] f32, attention_mask bool [B,1,S,S] -> hidden_states.

        ``Qwen3Model.last_hidden_state`` (after the final RMSNorm); attention follows the
        given mask only, exactly as upstream passes it (no causal mask is added).
        """

        def __init__(self, causal: bool) -> None:
            super().__init__()
            self.llm = model.llm
            self.causal = causal

        def forward(self, inputs_embeds: torch.Tensor, attention_mask: torch.Tensor):
            if self.causal:
                seq = inputs_embeds.shape[1]
                tril = torch.ones(seq, seq, dtype=torch.bool, device=inputs_embeds.device).tril()
                attention_mask = attention_mask & tril
            return self.llm(inputs_embeds=inputs_embeds, attention_mask=attention_mask)[0]

    class Embeddings(nn.Module):
        """input_ids int64 [B,8,S], audio_mask bool [B,S] -> inputs_embeds [B,S,H]."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, audio_mask: torch.Tensor):
            return self.model._prepare_embed_inputs(input_ids, audio_mask)

    class Heads(nn.Module):
        """hidden_states [B,S,H] -> logits [B,8,S,1025]."""

        def __init__(self) -> None:
            super().__init__()
            self.heads = model.audio_heads

        def forward(self, hidden_states: torch.Tensor):
            batch, seq, _ = hidden_states.shape
            flat = self.heads(hidden_states)
            return flat.view(batch, seq, num_codebooks, vocab).permute(0, 2, 1, 3)

    return {
        "backbone": Backbone(causal=False).eval(),
        "causal_backbone": Backbone(causal=True).eval(),
        "embeddings": Embeddings().eval(),
        "heads": Heads().eval(),
    }
