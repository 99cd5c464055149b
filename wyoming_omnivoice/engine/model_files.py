"""The model directory layout: which files the engine loads, and errors about them."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

BACKBONE = "llm_backbone_fp32.onnx"
BACKBONE_FP16 = "llm_backbone_fp16.onnx"
EMBEDDINGS = "audio_embeddings_encoder.onnx"
HEADS = "audio_heads_decoder.onnx"
VOCODER = "audio_tokenizer/higgs_decoder.onnx"
TOKENIZER = "tokenizer.json"
ACOUSTIC_ENCODER = "audio_tokenizer/acoustic_encoder.onnx"
SEMANTIC_ENCODER = "audio_tokenizer/semantic_encoder.onnx"
QUANTIZER_ENCODER = "audio_tokenizer/quantizer_encoder.onnx"

#: Files every synthesis needs.
REQUIRED_FILES = (BACKBONE, EMBEDDINGS, HEADS, VOCODER, TOKENIZER)
#: Files only voice cloning needs.
CLONING_FILES = (ACOUSTIC_ENCODER, SEMANTIC_ENCODER, QUANTIZER_ENCODER)
#: The causal decoder of onnx-community: never usable for OmniVoice.
CAUSAL_DECODER_NAMES = ("llm_decoder.onnx", "llm_decoder_fp16.onnx")
#: What to do when a causal decoder stands where the bidirectional backbone belongs.
CAUSAL_DECODER_HELP = (
    "onnx-community's llm_decoder.onnx is a causal decoder and cannot run OmniVoice; the "
    f"backbone must be {BACKBONE} from dellusional/OmniVoice-ONNX-bidirectional."
)


class ModelError(RuntimeError):
    """A model file is missing, unreadable or does not follow the expected contract.

    The message names the file and says how to fix it.
    """


@dataclass(frozen=True)
class ModelPaths:
    """Absolute paths of the graphs and tokenizer inside one model directory."""

    root: Path
    backbone: Path
    embeddings: Path
    heads: Path
    vocoder: Path
    tokenizer: Path

    @classmethod
    def from_dir(cls, model_dir: str | Path, *, backbone: str = BACKBONE) -> ModelPaths:
        root = Path(model_dir).expanduser().resolve()
        if not root.is_dir():
            raise ModelError(
                f"Model directory {root} does not exist. Pass the folder that holds "
                f"{', '.join(REQUIRED_FILES)} (or let the server download it with --data-dir)."
            )
        paths = cls(
            root=root,
            backbone=root / backbone,
            embeddings=root / EMBEDDINGS,
            heads=root / HEADS,
            vocoder=root / VOCODER,
            tokenizer=root / TOKENIZER,
        )
        paths.check()
        return paths

    def check(self) -> None:
        missing = [
            p for p in (self.backbone, self.embeddings, self.heads, self.vocoder, self.tokenizer)
            if not p.is_file()
        ]
        if missing:
            names = ", ".join(str(p.relative_to(self.root)) for p in missing)
            hint = ""
            if not self.backbone.is_file() and any(
                (self.root / name).exists() for name in CAUSAL_DECODER_NAMES
            ):
                hint = f" The folder holds llm_decoder.onnx: {CAUSAL_DECODER_HELP}"
            raise ModelError(
                f"Model directory {self.root} is missing {names}.{hint} "
                "Run the server with --data-dir to download the model, or complete the folder."
            )

    def fingerprint(self) -> str:
        """A short id of the model files, for cache keys.

        Built from each graph's name, size and the bytes of its (small) ONNX protobuf, so a
        different export gives a different id without hashing gigabytes of weights.
        """
        digest = hashlib.sha256()
        optional = [self.root / name for name in CLONING_FILES if (self.root / name).is_file()]
        graphs = [self.backbone, self.embeddings, self.heads, self.vocoder, self.tokenizer]
        for path in graphs + optional:
            digest.update(path.name.encode())
            digest.update(str(path.stat().st_size).encode())
            data_file = path.with_name(path.name + ".data")
            if data_file.is_file():
                digest.update(str(data_file.stat().st_size).encode())
            with path.open("rb") as handle:
                digest.update(handle.read(1 << 20))
        return digest.hexdigest()[:16]
