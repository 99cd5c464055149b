#!/usr/bin/env python3
"""Build a random-weight OmniVoice model directory with onnx + numpy only (no torch).

For machines where the torch exporter is unavailable (the lent GPU machine): writes the
published layout with the same I/O contracts as the real graphs,

* ``audio_embeddings_encoder.onnx``: text table lookup of row 0, sum of the 8 codebook
  embeddings at audio positions, selected by ``audio_mask``;
* ``llm_backbone_fp32.onnx`` (+ ``.data``): a Qwen3 backbone (RMSNorm, q/k norms, rotary
  attention with GQA, bool ``[B, 1, S, S]`` mask, SiLU-gated MLP), bidirectional;
* ``audio_heads_decoder.onnx``: ``[B, S, H] -> [B, 8, S, 1025]`` logits;
* the vocoder and tokenizer copied from a donor directory (default: the tiny fixtures,
  so the vocoder is tiny: its time is not the real Higgs decoder's).

    python -m benchmarks.random_model --out bench-out/real-random            # 28 layers
    python -m benchmarks.random_model --out /tmp/small --layers 2 --text-vocab 4096

Timing and memory match a real-size model; the codes are noise (random weights).
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
DONOR = REPO / "tests" / "fixtures" / "models" / "tiny"
NUM_CODEBOOKS = 8
AUDIO_VOCAB = 1025
OPSET = 18
#: The sequence axis named as in the published export (the int8/fp32 preparation finds the
#: rotary chain by it).
SEQ = "sequence_length"


class Builder:
    """Collects nodes and initializers with unique names."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.rng = rng
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, array: np.ndarray, stem: str = "c") -> str:
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape: tuple[int, ...], std: float, stem: str) -> str:
        data = self.rng.standard_normal(shape, dtype=np.float32)
        data *= np.float32(std)
        return self.const(data, stem)

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def rms_norm(b: Builder, x: str, size: int, eps: float, stem: str) -> str:
    weight = b.const((1.0 + 0.1 * b.rng.standard_normal(size)).astype(np.float32),
                     f"{stem}.weight")
    sq = b.op("Pow", [x, b.const(np.array(2.0, np.float32))])
    mean = b.op("ReduceMean", [sq, b.const(np.array([-1], np.int64))], keepdims=1)
    var = b.op("Add", [mean, b.const(np.array(eps, np.float32))])
    inv = b.op("Reciprocal", [b.op("Sqrt", [var])])
    return b.op("Mul", [weight, b.op("Mul", [x, inv])])


def rotate(b: Builder, x: str, cos: str, sin: str, half: int) -> str:
    first = b.op("Slice", [x, b.const(np.array([0], np.int64)),
                           b.const(np.array([half], np.int64)),
                           b.const(np.array([-1], np.int64))])
    second = b.op("Slice", [x, b.const(np.array([half], np.int64)),
                            b.const(np.array([2 * half], np.int64)),
                            b.const(np.array([-1], np.int64))])
    rotated = b.op("Concat", [b.op("Neg", [second]), first], axis=-1)
    return b.op("Add", [b.op("Mul", [x, cos]), b.op("Mul", [rotated, sin])])


def backbone(args: argparse.Namespace, rng: np.random.Generator) -> onnx.ModelProto:
    b = Builder(rng)
    h, heads, kv, hd, inter = args.hidden, args.heads, args.kv_heads, args.head_dim, args.inter
    group = heads // kv
    std = 0.02
    x = "inputs_embeds"
    # Rotary tables from the sequence length.
    seq = b.op("Gather", [b.op("Shape", [x]), b.const(np.array(1, np.int64))], axis=0)
    pos = b.op("Cast", [b.op("Range", [b.const(np.array(0, np.int64)), seq,
                                       b.const(np.array(1, np.int64))])], to=TensorProto.FLOAT)
    inv_freq = (1.0 / (args.rope_theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
                ).astype(np.float32)
    freqs = b.op("Mul", [b.op("Unsqueeze", [pos, b.const(np.array([1], np.int64))]),
                         b.const(inv_freq[None, :])])
    emb = b.op("Concat", [freqs, freqs], axis=-1)
    cos, sin = b.op("Cos", [emb]), b.op("Sin", [emb])  # [S, hd], broadcast over B, heads
    mask = b.op("Unsqueeze", ["attention_mask", b.const(np.array([2], np.int64))])
    neg = b.const(np.array(np.finfo(np.float32).min, np.float32))
    scale = b.const(np.array(1.0 / math.sqrt(hd), np.float32))
    shape_q = b.const(np.array([0, 0, heads, hd], np.int64))
    shape_kv = b.const(np.array([0, 0, kv, hd], np.int64))
    shape_qg = b.const(np.array([0, kv, group, -1, hd], np.int64))
    shape_kg = b.const(np.array([0, kv, 1, -1, hd], np.int64))
    shape_heads = b.const(np.array([0, heads, -1, hd], np.int64))
    shape_flat = b.const(np.array([0, 0, heads * hd], np.int64))
    for layer in range(args.layers):
        p = f"layers.{layer}"
        normed = rms_norm(b, x, h, args.eps, f"{p}.input_layernorm")
        q = b.op("Reshape", [b.op("MatMul", [normed, b.weight((h, heads * hd), std, "wq")]),
                             shape_q])
        k = b.op("Reshape", [b.op("MatMul", [normed, b.weight((h, kv * hd), std, "wk")]),
                             shape_kv])
        v = b.op("Reshape", [b.op("MatMul", [normed, b.weight((h, kv * hd), std, "wv")]),
                             shape_kv])
        q = b.op("Transpose", [rms_norm(b, q, hd, args.eps, f"{p}.q_norm")], perm=[0, 2, 1, 3])
        k = b.op("Transpose", [rms_norm(b, k, hd, args.eps, f"{p}.k_norm")], perm=[0, 2, 1, 3])
        v = b.op("Transpose", [v], perm=[0, 2, 1, 3])
        q = b.op("Reshape", [rotate(b, q, cos, sin, hd // 2), shape_qg])
        k = b.op("Reshape", [rotate(b, k, cos, sin, hd // 2), shape_kg])
        v = b.op("Reshape", [v, shape_kg])
        scores = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k],
                                                        perm=[0, 1, 2, 4, 3])]), scale])
        probs = b.op("Softmax", [b.op("Where", [mask, scores, neg])], axis=-1)
        attn = b.op("Reshape", [b.op("MatMul", [probs, v]), shape_heads])
        attn = b.op("Reshape", [b.op("Transpose", [attn], perm=[0, 2, 1, 3]), shape_flat])
        x = b.op("Add", [x, b.op("MatMul", [attn, b.weight((heads * hd, h), std, "wo")])])
        normed = rms_norm(b, x, h, args.eps, f"{p}.post_attention_layernorm")
        gate = b.op("MatMul", [normed, b.weight((h, inter), std, "wg")])
        up = b.op("MatMul", [normed, b.weight((h, inter), std, "wu")])
        act = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate])]), up])
        x = b.op("Add", [x, b.op("MatMul", [act, b.weight((inter, h), std, "wd")])])
    out = rms_norm(b, x, h, args.eps, "norm")
    b.nodes.append(helper.make_node("Identity", [out], ["hidden_states"],
                                    name="hidden_states_out"))
    graph = helper.make_graph(
        b.nodes, "omnivoice_backbone_random",
        [helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["B", SEQ, h]),
         helper.make_tensor_value_info("attention_mask", TensorProto.BOOL, ["B", 1, SEQ, SEQ])],
        [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["B", SEQ, h])],
        initializer=b.inits,
    )
    return _model(graph)


def embeddings(args: argparse.Namespace, rng: np.random.Generator) -> onnx.ModelProto:
    b = Builder(rng)
    h = args.hidden
    text_ids = b.op("Gather", ["input_ids", b.const(np.array(0, np.int64))], axis=1)
    text = b.op("Gather", [b.weight((args.text_vocab, h), 1.0, "text_table"), text_ids], axis=0)
    offsets = (np.arange(NUM_CODEBOOKS, dtype=np.int64) * AUDIO_VOCAB)[None, :, None]
    # Text positions hold text ids: look up code 0 there (the result is not selected).
    in_audio = b.op("Unsqueeze", ["audio_mask", b.const(np.array([1], np.int64))])
    codes = b.op("Where", [in_audio, "input_ids", b.const(np.array(0, np.int64))])
    audio_ids = b.op("Add", [codes, b.const(offsets)])
    audio = b.op("Gather", [b.weight((NUM_CODEBOOKS * AUDIO_VOCAB, h), 1.0, "audio_table"),
                            audio_ids], axis=0)
    audio = b.op("ReduceSum", [audio, b.const(np.array([1], np.int64))], keepdims=0)
    cond = b.op("Unsqueeze", ["audio_mask", b.const(np.array([-1], np.int64))])
    b.nodes.append(helper.make_node("Where", [cond, audio, text], ["inputs_embeds"],
                                    name="inputs_embeds_out"))
    graph = helper.make_graph(
        b.nodes, "omnivoice_embeddings_random",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", 8, SEQ]),
         helper.make_tensor_value_info("audio_mask", TensorProto.BOOL, ["B", SEQ])],
        [helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["B", SEQ, h])],
        initializer=b.inits,
    )
    return _model(graph)


def heads(args: argparse.Namespace, rng: np.random.Generator) -> onnx.ModelProto:
    b = Builder(rng)
    logits = b.op("MatMul", ["hidden_states",
                             b.weight((args.hidden, NUM_CODEBOOKS * AUDIO_VOCAB), 0.08, "w")])
    logits = b.op("Reshape", [logits, b.const(np.array([0, 0, 8, AUDIO_VOCAB], np.int64))])
    b.nodes.append(helper.make_node("Transpose", [logits], ["logits"], perm=[0, 2, 1, 3],
                                    name="logits_out"))
    graph = helper.make_graph(
        b.nodes, "omnivoice_heads_random",
        [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT,
                                       ["B", SEQ, args.hidden])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                       ["B", 8, SEQ, AUDIO_VOCAB])],
        initializer=b.inits,
    )
    return _model(graph)


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="wyoming-omnivoice random_model")
    model.ir_version = 9
    return model


def save(model: onnx.ModelProto, path: Path, external: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if external:
        onnx.save_model(model, str(path), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=path.name + ".data",
                        size_threshold=1024)
    else:
        onnx.save_model(model, str(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--layers", type=int, default=28)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--inter", type=int, default=3072)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--text-vocab", type=int, default=151676)
    parser.add_argument("--rope-theta", type=float, default=1_000_000.0)
    parser.add_argument("--eps", type=float, default=1e-6)
    parser.add_argument("--donor", type=Path, default=DONOR,
                        help="model directory to copy tokenizer.json and audio_tokenizer/ from")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    rng = np.random.default_rng(args.seed)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    save(embeddings(args, rng), out / "audio_embeddings_encoder.onnx", external=True)
    save(heads(args, rng), out / "audio_heads_decoder.onnx", external=False)
    save(backbone(args, rng), out / "llm_backbone_fp32.onnx", external=True)
    shutil.copy(args.donor / "tokenizer.json", out / "tokenizer.json")
    shutil.copytree(args.donor / "audio_tokenizer", out / "audio_tokenizer", dirs_exist_ok=True)
    print(f"wrote {out} ({args.layers} layers, hidden {args.hidden}) in "
          f"{time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
