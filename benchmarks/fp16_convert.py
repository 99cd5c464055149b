"""Time and memory of the calibrated fp16 conversion, phase by phase.

    python -m benchmarks.fp16_convert MODEL_DIR [--out DIR] [--scale-layer N]

Loads the graph of ``MODEL_DIR/llm_backbone_fp32.onnx`` (never modified; its weights stay on
disk unless ``--in-memory``), builds the calibration feeds
from the model's embeddings graph, converts, and writes ``llm_backbone_fp16.onnx`` (+ data)
under ``--out``. Prints seconds and peak resident memory after each phase, and the report.
``--scale-layer N`` first scales layer N's gated-MLP weights so that its product passes
65504 (random weights are far from fp16's limit): the report then shows the nodes kept
fp32 at the real model size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from wyoming_omnivoice.convert import load_with_data, save_with_data
from wyoming_omnivoice.engine.offline.calibration_prompts import calibration_feeds
from wyoming_omnivoice.engine.offline.fp16_calibrate import (
    FP16_MAX,
    convert_to_fp16,
    measure_ranges,
)
from wyoming_omnivoice.engine.store import model_files


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _scale_mlp(model: onnx.ModelProto, layer: int, feeds: list[dict[str, np.ndarray]],
               data_dir: Path | None) -> str:
    nodes = list(model.graph.node)
    producer = {out: node for node in nodes for out in node.output}
    sigmoid = [n for n in nodes if n.op_type == "Sigmoid"][layer]
    silu = next(n for n in nodes if n.op_type == "Mul" and sigmoid.output[0] in n.input)
    product = next(n for n in nodes if n.op_type == "Mul" and silu.output[0] in n.input)
    up = producer[next(i for i in product.input if i != silu.output[0])]
    gate = producer[sigmoid.input[0]]
    (peak, _), = measure_ranges(model, [product.output[0]], feeds[:1],
                                data_dir=data_dir).values()
    factor = float(np.sqrt(4 * FP16_MAX / peak))
    for init in model.graph.initializer:
        if init.name in (gate.input[1], up.input[1]):
            array = numpy_helper.to_array(init, str(data_dir or "")) * factor
            init.CopyFrom(numpy_helper.from_array(array, init.name))
    return f"layer {layer} MLP weights x{factor:.1f} (product |x| was {peak:.3g})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--out", type=Path, default=Path("bench-out/fp16"))
    parser.add_argument("--scale-layer", type=int, default=None)
    parser.add_argument("--in-memory", action="store_true",
                        help="load every weight first (default: weights stay on disk)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    phases: list[tuple[str, float, float]] = []
    start = time.perf_counter()

    def phase(name: str) -> None:
        nonlocal start
        phases.append((name, time.perf_counter() - start, _peak_gb()))
        print(f"{name}: {phases[-1][1]:.1f} s, peak RSS {phases[-1][2]:.2f} GB", flush=True)
        start = time.perf_counter()

    feeds = calibration_feeds(args.model_dir / model_files.EMBEDDINGS,
                              args.model_dir / model_files.TOKENIZER)
    phase(f"calibration feeds ({len(feeds)}, "
          f"{sum(f['inputs_embeds'].shape[0] * f['inputs_embeds'].shape[1] for f in feeds)} "
          "positions)")
    source = args.model_dir / model_files.BACKBONE
    data_dir = None if args.in_memory else source.parent
    model = load_with_data(source) if args.in_memory else onnx.load(
        str(source), load_external_data=False)
    phase("load fp32 backbone" + (" (weights in memory)" if args.in_memory else " (graph)"))
    if args.scale_layer is not None:
        print(_scale_mlp(model, args.scale_layer, feeds, data_dir))
        phase("scale")
    converted, report = convert_to_fp16(model, feeds, log_summary=False, data_dir=data_dir)
    phase("convert (calibrate + rewrite)")
    save_with_data(converted, args.out / model_files.BACKBONE_FP16)
    phase("save")
    print(report.summary(limit=40))
    print(f"total {sum(p[1] for p in phases):.1f} s, peak RSS {_peak_gb():.2f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
