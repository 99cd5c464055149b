"""Model conversions: ``python -m wyoming_omnivoice.convert --fp16 MODEL_DIR``.

Writes ``llm_backbone_fp16.onnx`` (+ ``.data``) next to the fp32 backbone. The pass is our
own and keeps what fp16 gets wrong in fp32 (``omnivoice.md`` A.5 items 6-7: a naive fp16
RMSNorm squares activations past 65504 and the backbone returns zeros):

* matrix products (``MatMul``, ``Gemm``, ``Conv``, ``Einsum``) run in fp16 with fp16
  weights: that is where the time and the memory go;
* normalisation and softmax ops (``Pow``, ``ReduceMean``, ``Sqrt``, ``Reciprocal``,
  ``Softmax``, ``(Simplified)LayerNormalization``, rotary ``Cos``/``Sin`` ...) run in fp32;
* every other op follows its inputs: fp32 when any data input is fp32, so the residual
  stream, the RMSNorm scaling and the rotary products stay fp32, and the whole fp16 region
  is only the projections, the attention products and the gated MLP;
* graph inputs and outputs stay fp32, so the engine calls both backbones the same way.

Casts are inserted only where a value crosses between the two regions. After writing the
graph the command compares it with the fp32 backbone on the same model directory and prints
the hidden-state error and the code agreement of a few deterministic decodes.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

from .engine import model_files

_LOGGER = logging.getLogger(__name__)

#: Ops computed in fp16 (their float inputs are cast down, their float weights stored fp16).
FP16_OPS = frozenset({"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum"})
#: Ops always computed in fp32: normalisation, softmax and transcendental ops.
FP32_OPS = frozenset({
    "Pow", "ReduceMean", "ReduceSum", "ReduceSumSquare", "ReduceL2", "Sqrt", "Reciprocal",
    "Softmax", "LogSoftmax", "LayerNormalization", "SimplifiedLayerNormalization",
    "SkipSimplifiedLayerNormalization", "RMSNormalization", "Range", "Cos", "Sin", "Exp",
    "Log", "CumSum", "Erf",
})
#: Inputs that are never float data even when typed float (shape/index operands).
_FLOAT = TensorProto.FLOAT
_HALF = TensorProto.FLOAT16
FP16_SUFFIX = "_fp16"
FP16_MAX = float(np.finfo(np.float16).max)


@dataclass
class ConversionReport:
    """What the pass did."""

    fp16_nodes: int
    fp32_nodes: int
    casts: int
    fp16_weights: int
    fp32_weights: int


def _float_values(model: onnx.ModelProto) -> set[str]:
    """Names of every fp32 tensor in the graph (inputs, initializers, inferred values)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    names = set()
    for info in list(inferred.graph.value_info) + list(inferred.graph.input) + list(
        inferred.graph.output
    ):
        if info.type.tensor_type.elem_type == _FLOAT:
            names.add(info.name)
    for init in model.graph.initializer:
        if init.data_type == _FLOAT:
            names.add(init.name)
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attr in node.attribute:
                if attr.name == "value" and attr.t.data_type == _FLOAT:
                    names.add(node.output[0])
    return names


def assign_precision(model: onnx.ModelProto, float_values: set[str]) -> dict[int, int]:
    """Decide, per node index, whether it computes in fp16 or fp32 (topological order)."""
    constants = {init.name for init in model.graph.initializer}
    constants |= {n.output[0] for n in model.graph.node if n.op_type == "Constant"}
    # Precision of each produced float value; graph inputs are fp32 data.
    produced: dict[str, int] = {i.name: _FLOAT for i in model.graph.input}
    decision: dict[int, int] = {}
    for index, node in enumerate(model.graph.node):
        if node.op_type == "Constant":
            continue
        data = [n for n in node.input if n and n in float_values and n not in constants]
        if node.op_type in FP16_OPS:
            precision = _HALF
        elif node.op_type in FP32_OPS:
            precision = _FLOAT
        elif node.op_type == "Cast":
            # An explicit cast keeps its target type; the tracking below records it.
            precision = _FLOAT
        else:
            kinds = {produced.get(n, _FLOAT) for n in data}
            precision = _FLOAT if (not kinds or _FLOAT in kinds) else _HALF
        decision[index] = precision
        for out in node.output:
            if out in float_values:
                produced[out] = precision
    return decision


def convert_fp16(model: onnx.ModelProto) -> tuple[onnx.ModelProto, ConversionReport]:
    """Return a mixed-precision copy of ``model`` (initializers must be loaded in memory)."""
    float_values = _float_values(model)
    decision = assign_precision(model, float_values)
    graph = model.graph
    constants = {init.name: init for init in graph.initializer}
    const_nodes = {n.output[0]: n for n in graph.node if n.op_type == "Constant"}
    consumers: dict[str, set[int]] = {}
    for index, node in enumerate(graph.node):
        for name in node.input:
            consumers.setdefault(name, set()).add(index)
    graph_outputs = {o.name for o in graph.output}

    # Weights read only by fp16 nodes are stored in fp16; others stay fp32.
    converted: set[str] = set()
    fp32_weights = 0
    for name, init in constants.items():
        if init.data_type != _FLOAT:
            continue
        users = consumers.get(name, set())
        if users and all(decision.get(i) == _HALF for i in users) and name not in graph_outputs:
            # Clip to the fp16 range: a float32-min mask fill becomes -65504, not -inf.
            array = np.clip(numpy_helper.to_array(init), -FP16_MAX, FP16_MAX).astype(np.float16)
            init.CopyFrom(numpy_helper.from_array(array, name))
            converted.add(name)
        else:
            fp32_weights += 1

    # Precision of every float value after the pass.
    value_type: dict[str, int] = {i.name: _FLOAT for i in graph.input}
    for name in constants:
        if name in float_values:
            value_type[name] = _HALF if name in converted else _FLOAT
    for name in const_nodes:
        if name in float_values:
            value_type[name] = _FLOAT
    new_nodes: list[onnx.NodeProto] = []
    cast_cache: dict[tuple[str, int], str] = {}
    casts = 0

    def cast(name: str, to: int) -> str:
        nonlocal casts
        key = (name, to)
        if key not in cast_cache:
            suffix = FP16_SUFFIX if to == _HALF else "_fp32"
            out = f"{name}{suffix}_cast"
            new_nodes.append(helper.make_node("Cast", [name], [out], to=to,
                                              name=f"{out}_node"))
            cast_cache[key] = out
            casts += 1
        return cast_cache[key]

    fp16_nodes = fp32_nodes = 0
    for index, node in enumerate(graph.node):
        if node.op_type == "Constant":
            new_nodes.append(node)
            continue
        precision = decision[index]
        if node.op_type == "Cast":
            new_nodes.append(node)
            to = next(a.i for a in node.attribute if a.name == "to")
            if to in (_FLOAT, _HALF):
                value_type[node.output[0]] = to
            fp32_nodes += 1
            continue
        fp16_nodes += precision == _HALF
        fp32_nodes += precision == _FLOAT
        inputs = list(node.input)
        for position, name in enumerate(inputs):
            have = value_type.get(name)
            if name and have is not None and have != precision:
                inputs[position] = cast(name, precision)
        node.input[:] = inputs
        new_nodes.append(node)
        for out in node.output:
            if out in float_values:
                value_type[out] = precision

    # Graph outputs stay fp32: rename an fp16 producer's output and cast back.
    renames: dict[str, str] = {}
    for out in graph.output:
        if value_type.get(out.name) == _HALF:
            renames[out.name] = f"{out.name}{FP16_SUFFIX}"
    if renames:
        for node in new_nodes:
            node.output[:] = [renames.get(n, n) for n in node.output]
            node.input[:] = [renames.get(n, n) for n in node.input]
        for original, half in renames.items():
            new_nodes.append(helper.make_node("Cast", [half], [original], to=_FLOAT,
                                              name=f"{original}_output_cast"))
            casts += 1

    del graph.node[:]
    graph.node.extend(new_nodes)
    del graph.value_info[:]  # stale types; onnxruntime infers them again
    report = ConversionReport(fp16_nodes, fp32_nodes, casts, len(converted), fp32_weights)
    return model, report


def load_with_data(path: Path) -> onnx.ModelProto:
    model = onnx.load(str(path), load_external_data=False)
    external_data_helper.load_external_data_for_model(model, str(path.parent))
    return model


def save_with_data(model: onnx.ModelProto, path: Path) -> None:
    """Save with all weights in ``<name>.data``; written in a temp folder, then renamed."""
    data_name = path.name + ".data"
    staging = path.parent / f".{path.name}.tmp"
    staging.mkdir(exist_ok=True)
    for tensor in model.graph.initializer:
        tensor.ClearField("data_location")
        del tensor.external_data[:]
    onnx.save_model(model, str(staging / path.name), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=data_name, size_threshold=1024)
    (staging / data_name).replace(path.parent / data_name)
    (staging / path.name).replace(path)
    staging.rmdir()


def convert_backbone(model_dir: Path) -> tuple[Path, ConversionReport]:
    source = model_dir / model_files.BACKBONE
    if not source.is_file():
        raise SystemExit(f"{source} not found: MODEL_DIR must hold {model_files.BACKBONE}")
    target = model_dir / model_files.BACKBONE_FP16
    model = load_with_data(source)
    converted, report = convert_fp16(model)
    save_with_data(converted, target)
    return target, report


# -- verification -----------------------------------------------------------------------
VERIFY_TEXTS = (
    "Hello world, this is a test.",
    "The kitchen lights are now off.",
    "It is twenty one degrees outside and sunny.",
)


@dataclass
class Agreement:
    hidden_max_abs: float
    hidden_rel: float
    hidden_cosine: float
    code_agreement: float
    first_step_agreement: float
    codes_compared: int
    finite: bool


def verify(model_dir: Path, device: str = "cpu", texts: Iterable[str] = VERIFY_TEXTS,
           num_step: int = 16) -> Agreement:
    """Compare the fp16 backbone with the fp32 one: hidden states and decoded codes."""
    from .engine.core import Engine
    from .engine.decoder import DecodeOptions

    fp32 = Engine.load(model_dir, device=device, precision="fp32")
    fp16 = Engine.load(model_dir, device=device, precision="fp16")
    options = DecodeOptions(num_step=num_step, position_temperature=0.0,
                            class_temperature=0.0)
    texts = list(texts)
    # Hidden states on a real prompt layout (embeddings of the first text).
    prompt = fp32.prompts.build(texts[0], num_target=40, language=None, instruct=None,
                                ref_text=None, ref_codes=None, denoise=True)
    ids = prompt.ids[None]
    (embeds,) = fp32.decoder.embeddings.run(
        {"input_ids": ids, "audio_mask": prompt.audio_mask[None]}, ["inputs_embeds"])
    mask = np.ones((1, 1, ids.shape[-1], ids.shape[-1]), dtype=bool)
    feeds = {"inputs_embeds": embeds, "attention_mask": mask}
    (h32,) = fp32.decoder.backbone.run(feeds, ["hidden_states"])
    (h16,) = fp16.decoder.backbone.run(feeds, ["hidden_states"])
    finite = bool(np.all(np.isfinite(h16)))
    diff = np.abs(h32 - h16)
    a, b = h32.reshape(-1).astype(np.float64), h16.reshape(-1).astype(np.float64)
    cosine = float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))
    # One-step decodes fill every cell from the first forward: a teacher-forced argmax
    # comparison. Full decodes diverge further once one early choice differs.
    one_step = DecodeOptions(num_step=1, position_temperature=0.0, class_temperature=0.0)
    same = total = first_same = 0
    for text in texts:
        c32 = fp32.generate_codes(text, options=options)
        c16 = fp16.generate_codes(text, options=options)
        same += int(np.sum(c32 == c16))
        total += c32.size
        f32 = fp32.generate_codes(text, options=one_step)
        f16 = fp16.generate_codes(text, options=one_step)
        first_same += int(np.sum(f32 == f16))
    return Agreement(
        hidden_max_abs=float(diff.max()),
        hidden_rel=float(np.linalg.norm(h32 - h16) / max(np.linalg.norm(h32), 1e-30)),
        hidden_cosine=cosine,
        code_agreement=same / max(total, 1),
        first_step_agreement=first_same / max(total, 1),
        codes_compared=total,
        finite=finite,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_omnivoice.convert",
        description="Convert the OmniVoice backbone to mixed fp16 (fp32 norms, softmax, I/O).",
    )
    parser.add_argument("model_dir", type=Path, help="folder holding llm_backbone_fp32.onnx")
    parser.add_argument("--fp16", action="store_true", required=True,
                        help="write llm_backbone_fp16.onnx next to the fp32 backbone")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"),
                        help="device for the fp32/fp16 comparison (default cpu)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the comparison with the fp32 backbone")
    parser.add_argument("--verify-steps", type=int, default=16,
                        help="decode steps of the code-agreement check (default 16)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    target, report = convert_backbone(args.model_dir)
    print(f"wrote {target} ({report.fp16_nodes} fp16 nodes, {report.fp32_nodes} fp32 nodes, "
          f"{report.casts} casts, {report.fp16_weights} fp16 / {report.fp32_weights} fp32 "
          "weights)")
    if args.no_verify:
        return 0
    result = verify(args.model_dir, args.device, num_step=args.verify_steps)
    print(f"hidden states vs fp32: max abs {result.hidden_max_abs:.3g}, relative "
          f"{result.hidden_rel:.3g}, cosine {result.hidden_cosine:.6f}, "
          f"finite {result.finite}")
    print(f"code agreement vs fp32: {100 * result.code_agreement:.2f} % of "
          f"{result.codes_compared} codes ({args.verify_steps} steps, deterministic); "
          f"first-step argmax agreement {100 * result.first_step_agreement:.2f} %")
    if not result.finite:
        print("ERROR: the fp16 backbone produced non-finite hidden states", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
