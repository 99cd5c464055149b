"""The model directory layout: which files the engine loads, and errors about them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

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
#: ONNX graphs larger than this hold their weights inline; their external data is not checked.
_MAX_GRAPH_PARSE_BYTES = 64 * 1024 * 1024


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
        optional = [self.root / name for name in CLONING_FILES if (self.root / name).is_file()]
        graphs = [self.backbone, self.embeddings, self.heads, self.vocoder, self.tokenizer]
        return _fingerprint(graphs + optional)

    def decode_fingerprint(self) -> str:
        """A short id of the files that decide the generated codes (backbone, embeddings,
        heads, tokenizer): the same on every replica of a model, whether or not it holds the
        cloning graphs, and whatever vocoder it runs. Keys what is shared between replicas
        (canonical anchors)."""
        return _fingerprint([self.backbone, self.embeddings, self.heads, self.tokenizer])


def _fingerprint(paths: list[Path]) -> str:
    """Each file's name, size (and its ``.data`` file's size) and first megabyte."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode())
        digest.update(str(path.stat().st_size).encode())
        data_file = path.with_name(path.name + ".data")
        if data_file.is_file():
            digest.update(str(data_file.stat().st_size).encode())
        with path.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class LayoutProblem:
    """One reason a model directory cannot be loaded; ``missing`` names a missing file."""

    message: str
    missing: str | None = None


def layout_problems(root: Path, names: Iterable[str]) -> list[LayoutProblem]:
    """What keeps the files ``names`` of ``root`` from loading, without changing anything.

    Each file must exist, and every external-data file an ONNX graph references must exist
    inside ``root`` and be long enough for the tensors stored in it.
    """
    names = list(names)
    missing = [name for name in names if not (root / name).is_file()]
    problems = [LayoutProblem(f"missing {name}", missing=name) for name in missing]
    for name in names:
        if name in missing or not name.endswith(".onnx"):
            continue
        for problem in _external_data_problems(root, root / name):
            if problem.missing is None or all(p.missing != problem.missing for p in problems):
                problems.append(problem)
    return problems


def _external_data_problems(root: Path, graph: Path) -> list[LayoutProblem]:
    """Missing, escaping or too short external-data files referenced by one ONNX graph
    (read by :mod:`.onnx_wire`: no onnx import at start-up)."""
    from wyoming_omnivoice.engine.store.onnx_wire import WireError, external_tensors

    try:
        if graph.stat().st_size > _MAX_GRAPH_PARSE_BYTES:
            return []
        tensors = external_tensors(graph.read_bytes())
    except (OSError, WireError) as err:
        name = graph.relative_to(root)
        return [LayoutProblem(f"{name} is not a readable ONNX file ({err}); download it again")]

    needed: dict[str, int] = {}
    for tensor in tensors:
        end = tensor.offset + tensor.length
        needed[tensor.location] = max(needed.get(tensor.location, 0), end)

    problems: list[LayoutProblem] = []
    graph_name = graph.relative_to(root).as_posix()
    for location, end in sorted(needed.items()):
        # The name must stay in the folder; the file may be a link that leaves it (a
        # Hugging Face cache snapshot links every file into its blobs/).
        parts = PurePosixPath(location.replace("\\", "/")).parts
        if not parts or location.startswith(("/", "\\")) or ".." in parts:
            problems.append(LayoutProblem(
                f"{graph_name} points at external data {location!r} outside the model folder"
            ))
            continue
        target = graph.parent / location
        relative = (graph.parent.relative_to(root) / location).as_posix()
        if not target.is_file():
            problems.append(LayoutProblem(
                f"missing {relative} (external data of {graph_name})", missing=relative
            ))
        elif target.stat().st_size < end:
            problems.append(LayoutProblem(
                f"{relative} has {target.stat().st_size} bytes but {graph_name} needs {end} "
                "(truncated): download it again"
            ))
    return problems
