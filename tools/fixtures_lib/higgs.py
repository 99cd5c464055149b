"""A random Higgs Audio v2 codec (transformers' HiggsAudioV2TokenizerModel) and the
four torch modules whose ONNX exports mirror onnx-community's ``audio_tokenizer/`` graphs.

The tiny config keeps everything the graph contracts depend on: hop 960 (strides
[8,5,4,2,3]), 25 frames/s, 8 quantizers of 1024 codes (target bandwidth 2 kbps),
and the acoustic width 256. The HuBERT semantic width shrinks from 768 to ``SEMANTIC_WIDTH``
(a 768-wide HuBERT plus semantic convs would be ~100 MB) and the internal codebook_dim from
64 to 16; neither is visible in the graphs' I/O except the semantic_features width.
"""

from __future__ import annotations

import logging

from .upstream import install_torchaudio_stub, seed_everything

logger = logging.getLogger(__name__)

ACOUSTIC_WIDTH = 256
SEMANTIC_WIDTH = 64
HOP = 960
SEMANTIC_PAD = 160
NUM_QUANTIZERS = 8


_NO_DROPOUT = {
    "hidden_dropout": 0.0,
    "attention_dropout": 0.0,
    "activation_dropout": 0.0,
    "feat_proj_dropout": 0.0,
    "layerdrop": 0.0,
    "mask_time_prob": 0.0,
}

#: Sub-config overrides per codec kind. "real" keeps the published widths (DAC 64/1024,
#: HuBERT-base 768 x 12 layers) for benchmarks; "tiny" is the committed test codec.
CODEC_KINDS: dict[str, dict] = {
    "tiny": {
        "codebook_dim": 16,
        "acoustic": {"encoder_hidden_size": 2, "decoder_hidden_size": 32},
        "semantic": {
            "hidden_size": SEMANTIC_WIDTH,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "intermediate_size": 128,
            "conv_dim": [32] * 7,
            "num_conv_pos_embeddings": 16,
            "num_conv_pos_embedding_groups": 4,
        },
    },
    "real": {
        "codebook_dim": 64,
        "acoustic": {"encoder_hidden_size": 64, "decoder_hidden_size": 1024},
        "semantic": {},
    },
}


def codec_config(kind: str = "tiny"):  # -> HiggsAudioV2TokenizerConfig
    install_torchaudio_stub()
    from transformers import HiggsAudioV2TokenizerConfig

    ratios = [8, 5, 4, 2, 3]
    overrides = CODEC_KINDS[kind]
    config = HiggsAudioV2TokenizerConfig(
        target_bandwidths=[0.5, 1, 1.5, 2],
        codebook_size=1024,
        codebook_dim=overrides["codebook_dim"],
        acoustic_model_config={
            "downsampling_ratios": ratios,
            "upsampling_ratios": ratios,
            "hidden_size": ACOUSTIC_WIDTH,
            "sampling_rate": 24000,
            **overrides["acoustic"],
        },
        semantic_model_config={**_NO_DROPOUT, **overrides["semantic"]},
    )
    if config.hop_length != HOP or config.num_quantizers != NUM_QUANTIZERS:
        raise RuntimeError(
            f"{kind} Higgs config drifted: hop {config.hop_length}, "
            f"{config.num_quantizers} quantizers"
        )
    return config


def build_codec(kind: str, seed: int, peak: float = 0.5):  # -> HiggsAudioV2TokenizerModel
    """Return an eval-mode random codec whose decoder output peaks near ``peak``.

    Random codebooks replace transformers' all-zero init (which would decode every code
    to the same vector), and the decoder's last conv is rescaled so the waveform of a
    random code grid is speech-like in amplitude (peaks about 0.1-1).
    """
    install_torchaudio_stub()
    import torch
    from transformers import HiggsAudioV2TokenizerModel

    config = codec_config(kind)
    seed_everything(seed)
    model = HiggsAudioV2TokenizerModel(config).float().eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        _reinit_dac_convs(model, generator)
        for quantizer in model.quantizer.quantizers:
            embed = torch.randn(quantizer.codebook.embed.shape, generator=generator)
            quantizer.codebook.embed.copy_(embed)
            quantizer.codebook.embed_avg.copy_(embed)
        codes = torch.randint(0, 1024, (1, NUM_QUANTIZERS, 50), generator=generator)
        wave = model.decode(codes, return_dict=False)
        scale = peak / float(wave.abs().max())
        model.acoustic_decoder.conv2.weight.mul_(scale)
        model.acoustic_decoder.conv2.bias.mul_(scale)
        # Acoustic features of order 1 (DAC's tiny init gives ~1e-7 after five blocks).
        noise = 0.1 * torch.randn(1, 1, 10 * HOP, generator=generator)
        level = float(model.acoustic_encoder(noise).abs().mean())
        model.acoustic_encoder.conv2.weight.mul_(1.0 / level)
        model.acoustic_encoder.conv2.bias.mul_(1.0 / level)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("built %s Higgs codec with %.2fM parameters (decoder scale %.3g)",
                kind, n_params / 1e6, scale)
    return model


def _reinit_dac_convs(model, generator) -> None:
    """Variance-preserving init (std 1/sqrt(fan_in)) for the DAC encoder/decoder convs."""
    import math

    import torch
    from torch import nn

    for part in (model.acoustic_encoder, model.acoustic_decoder):
        for module in part.modules():
            if isinstance(module, nn.ConvTranspose1d):
                fan_in = module.in_channels * module.kernel_size[0] / module.stride[0]
            elif isinstance(module, nn.Conv1d):
                fan_in = module.in_channels // module.groups * module.kernel_size[0]
            else:
                continue
            noise = torch.randn(module.weight.shape, generator=generator)
            module.weight.copy_(noise / math.sqrt(fan_in))
            if module.bias is not None:
                module.bias.zero_()


def describe(codec) -> dict[str, object]:
    """The codec facts a consumer of the graphs needs (widths, hop, quantizers)."""
    config = codec.config
    return {
        "hop_length": config.hop_length,
        "frame_rate": config.frame_rate,
        "num_quantizers": config.num_quantizers,
        "codebook_size": config.codebook_size,
        "codebook_dim": config.codebook_dim,
        "acoustic_width": config.acoustic_model_config.hidden_size,
        "semantic_width": config.semantic_model_config.hidden_size,
        "semantic_downsample_factor": config.semantic_downsample_factor,
        "semantic_pad": SEMANTIC_PAD,
    }


def save_codec(model, out_dir) -> None:
    """Save the codec and a DAC feature-extractor config as OmniVoice expects them."""
    from transformers import DacFeatureExtractor

    model.save_pretrained(out_dir)
    DacFeatureExtractor(sampling_rate=24000, hop_length=HOP).save_pretrained(out_dir)


def make_export_modules(codec) -> dict[str, object]:
    """torch modules with the published graph signatures, keyed by graph file stem."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Decoder(nn.Module):
        """codes int64 [8,B,T] -> waveform_24k [B,1,T*960] (RVQ decode, fc2, DAC)."""

        def __init__(self) -> None:
            super().__init__()
            self.codec = codec

        def forward(self, codes: torch.Tensor) -> torch.Tensor:
            quantized = self.codec.quantizer.decode(codes)
            acoustic = self.codec.fc2(quantized.transpose(1, 2)).transpose(1, 2)
            return self.codec.acoustic_decoder(acoustic)

    class AcousticEncoder(nn.Module):
        """waveform_24k [B,1,T24] -> acoustic_features [B,256,T24/960]."""

        def __init__(self) -> None:
            super().__init__()
            self.codec = codec

        def forward(self, waveform_24k: torch.Tensor) -> torch.Tensor:
            return self.codec.acoustic_encoder(waveform_24k)

    class SemanticEncoder(nn.Module):
        """waveform_16k [B,T16] -> semantic_features [B,W,Ts].

        Pads 160 samples each side, averages all HuBERT hidden states, keeps every 2nd
        frame, then runs the codec's semantic encoder convs (``_extract_semantic_features``
        minus the 24k->16k resampling, which the caller does).
        """

        def __init__(self) -> None:
            super().__init__()
            self.codec = codec

        def forward(self, waveform_16k: torch.Tensor) -> torch.Tensor:
            padded = F.pad(waveform_16k, (SEMANTIC_PAD, SEMANTIC_PAD))
            hidden = self.codec.semantic_model(padded, output_hidden_states=True).hidden_states
            features = torch.stack(list(hidden), dim=1).mean(dim=1)
            step = self.codec.config.semantic_downsample_factor
            features = features[:, ::step, :]
            return self.codec.encoder_semantic(features.transpose(1, 2))

    class QuantizerEncoder(nn.Module):
        """acoustic [B,256,T], semantic [B,W,T] -> codes int64 [8,B,T] (fc + RVQ encode)."""

        def __init__(self) -> None:
            super().__init__()
            self.codec = codec

        def forward(
            self, acoustic_features: torch.Tensor, semantic_features: torch.Tensor
        ) -> torch.Tensor:
            embeddings = torch.cat([acoustic_features, semantic_features], dim=1)
            embeddings = self.codec.fc(embeddings.transpose(1, 2)).transpose(1, 2)
            return self.codec.quantizer.encode(embeddings, 2.0)

    return {
        "higgs_decoder": Decoder().eval(),
        "acoustic_encoder": AcousticEncoder().eval(),
        "semantic_encoder": SemanticEncoder().eval(),
        "quantizer_encoder": QuantizerEncoder().eval(),
    }
