"""Export one model directory in the published layout and measure ORT vs torch."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .higgs import HOP
from .higgs import make_export_modules as make_codec_modules
from .omnivoice_graphs import make_export_modules as make_llm_modules
from .onnx_export import export_graph, max_abs_diff_vs_torch

logger = logging.getLogger(__name__)

BACKBONE = "llm_backbone_fp32.onnx"
EMBEDDINGS = "audio_embeddings_encoder.onnx"
HEADS = "audio_heads_decoder.onnx"
CODEC_DIR = "audio_tokenizer"
TOKENIZER = "tokenizer.json"

_BACKBONE_IO = dict(
    input_names=["inputs_embeds", "attention_mask"],
    output_names=["hidden_states"],
    dynamic_axes={
        "inputs_embeds": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 2: "seq", 3: "seq"},
    },
)


def _padded_mask(rng, batch: int, seq: int):
    """A [B,1,S,S] bool mask like upstream's batches: valid block plus a padding diagonal."""
    import numpy as np

    mask = np.zeros((batch, 1, seq, seq), dtype=bool)
    for b in range(batch):
        valid = int(rng.integers(seq // 2, seq + 1))
        mask[b, 0, :valid, :valid] = True
        for pos in range(valid, seq):
            mask[b, 0, pos, pos] = True
    return mask


def export_backbone(module, hidden: int, path: Path) -> None:
    import torch

    embeds = torch.randn(2, 9, hidden)
    mask = torch.ones(2, 1, 9, 9, dtype=torch.bool)
    export_graph(module, (embeds, mask), path, external_data=True, **_BACKBONE_IO)


def export_model_dir(model, codec, tokenizer_json: str, out_dir: Path) -> dict[str, Any]:
    """Write the five runtime graphs, three codec encoders and tokenizer into ``out_dir``.

    Returns ``{graph path: max |ORT - torch|}`` measured on fresh random inputs whose batch
    and sequence sizes differ from the export example (so dynamic axes are exercised).
    """
    import numpy as np
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / TOKENIZER).write_text(tokenizer_json, encoding="utf-8")
    hidden = model.config.llm_config.hidden_size
    llm = make_llm_modules(model)
    codec_modules = make_codec_modules(codec)

    export_backbone(llm["backbone"], hidden, out_dir / BACKBONE)
    export_graph(
        llm["embeddings"],
        (torch.full((2, 8, 9), 1024, dtype=torch.long), torch.ones(2, 9, dtype=torch.bool)),
        out_dir / EMBEDDINGS,
        input_names=["input_ids", "audio_mask"],
        output_names=["inputs_embeds"],
        dynamic_axes={"input_ids": {0: "batch", 2: "seq"}, "audio_mask": {0: "batch", 1: "seq"}},
        external_data=True,
    )
    export_graph(
        llm["heads"],
        (torch.randn(2, 9, hidden),),
        out_dir / HEADS,
        input_names=["hidden_states"],
        output_names=["logits"],
        dynamic_axes={"hidden_states": {0: "batch", 1: "seq"}},
        external_data=False,
    )
    codec_dir = out_dir / CODEC_DIR
    semantic_width = codec.config.semantic_model_config.hidden_size
    acoustic_width = codec.config.acoustic_model_config.hidden_size
    export_graph(
        codec_modules["higgs_decoder"],
        (torch.randint(0, 1024, (8, 2, 6)),),
        codec_dir / "higgs_decoder.onnx",
        input_names=["codes"],
        output_names=["waveform_24k"],
        dynamic_axes={"codes": {1: "batch", 2: "frames"}},
        external_data=False,
    )
    export_graph(
        codec_modules["acoustic_encoder"],
        (torch.randn(2, 1, 6 * HOP) * 0.1,),
        codec_dir / "acoustic_encoder.onnx",
        input_names=["waveform_24k"],
        output_names=["acoustic_features"],
        dynamic_axes={"waveform_24k": {0: "batch", 2: "samples"}},
        external_data=False,
    )
    export_graph(
        codec_modules["semantic_encoder"],
        (torch.randn(2, 6 * 640) * 0.1,),
        codec_dir / "semantic_encoder.onnx",
        input_names=["waveform_16k"],
        output_names=["semantic_features"],
        dynamic_axes={"waveform_16k": {0: "batch", 1: "samples"}},
        external_data=False,
    )
    export_graph(
        codec_modules["quantizer_encoder"],
        (torch.randn(2, acoustic_width, 6), torch.randn(2, semantic_width, 6)),
        codec_dir / "quantizer_encoder.onnx",
        input_names=["acoustic_features", "semantic_features"],
        output_names=["codes"],
        dynamic_axes={
            "acoustic_features": {0: "batch", 2: "frames"},
            "semantic_features": {0: "batch", 2: "frames"},
        },
        external_data=False,
    )

    rng = np.random.default_rng(99)
    batch, seq, frames = 3, 17, 5
    ids = rng.integers(0, 1025, size=(batch, 8, seq)).astype(np.int64)
    text_vocab = min(model.config.llm_config.vocab_size, 2000)
    ids[:, :, :4] = rng.integers(0, text_vocab, size=(batch, 1, 4))
    audio_mask = np.zeros((batch, seq), dtype=bool)
    audio_mask[:, 4:] = True
    with torch.no_grad():
        acoustic = codec_modules["acoustic_encoder"](
            torch.from_numpy(rng.standard_normal((batch, 1, frames * HOP)).astype(np.float32) * 0.1)
        ).numpy()
        semantic = codec_modules["semantic_encoder"](
            torch.from_numpy(rng.standard_normal((batch, frames * 640)).astype(np.float32) * 0.1)
        ).numpy()
    checks = {
        BACKBONE: (llm["backbone"], {
            "inputs_embeds": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
            "attention_mask": _padded_mask(rng, batch, seq),
        }),
        EMBEDDINGS: (llm["embeddings"], {"input_ids": ids, "audio_mask": audio_mask}),
        HEADS: (llm["heads"], {
            "hidden_states": rng.standard_normal((batch, seq, hidden)).astype(np.float32),
        }),
        f"{CODEC_DIR}/higgs_decoder.onnx": (codec_modules["higgs_decoder"], {
            "codes": rng.integers(0, 1024, size=(8, batch, frames)).astype(np.int64),
        }),
        f"{CODEC_DIR}/acoustic_encoder.onnx": (codec_modules["acoustic_encoder"], {
            "waveform_24k": (0.1 * rng.standard_normal((batch, 1, frames * HOP))).astype(
                np.float32
            ),
        }),
        f"{CODEC_DIR}/semantic_encoder.onnx": (codec_modules["semantic_encoder"], {
            "waveform_16k": (rng.standard_normal((batch, frames * 640)) * 0.1).astype(np.float32),
        }),
        f"{CODEC_DIR}/quantizer_encoder.onnx": (codec_modules["quantizer_encoder"], {
            "acoustic_features": acoustic, "semantic_features": semantic,
        }),
    }
    diffs = {}
    for name, (module, feeds) in checks.items():
        diffs[name] = max_abs_diff_vs_torch(out_dir / name, module, feeds)
        logger.info("ORT vs torch max abs diff %-40s %.3g", name, diffs[name])
    return diffs


def export_fp16io_variant(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` with its embeddings and heads graphs converted to float16 as
    the exporter's pass converted the published ones (``tools/fp16io.py``)."""
    from fp16io import make_fp16io_dir  # tools/ is on sys.path (build_fixtures.py)

    make_fp16io_dir(src, dst)


def export_causal_backbone(model, dst: Path) -> float:
    """Export the causal control backbone; return its probe value (0 when causal)."""
    hidden = model.config.llm_config.hidden_size
    export_backbone(make_llm_modules(model)["causal_backbone"], hidden, dst / BACKBONE)
    return bidirectional_probe(dst / BACKBONE, hidden)


def bidirectional_probe(path: Path, hidden: int) -> float:
    """Max change of earlier positions' hidden states when only the last input changes.

    Large for a bidirectional backbone, exactly 0 for a causal one.
    """
    import numpy as np

    from .onnx_export import ort_session

    session = ort_session(path)
    rng = np.random.default_rng(5)
    embeds = rng.standard_normal((1, 10, hidden)).astype(np.float32)
    mask = np.ones((1, 1, 10, 10), dtype=bool)
    base = session.run(None, {"inputs_embeds": embeds, "attention_mask": mask})[0]
    embeds[0, -1] += 1.0
    moved = session.run(None, {"inputs_embeds": embeds, "attention_mask": mask})[0]
    return float(np.abs(moved[0, :-1] - base[0, :-1]).max())
