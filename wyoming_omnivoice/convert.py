"""Model conversions: ``python -m wyoming_omnivoice.convert --fp16 MODEL_DIR``.

Writes ``llm_backbone_fp16.onnx`` (+ ``.data``) next to the fp32 backbone with the calibrated
pass of :mod:`.engine.offline.fp16_calibrate`: matrix products and attention in fp16;
norms, softmax, the residual stream and graph I/O in fp32; and any fp16 candidate whose
fp32 activations reach a margin of fp16's range on realistic prompts
(:mod:`.engine.offline.calibration_prompts`) kept fp32, so the graph cannot overflow
silently on what it was measured on. The command
prints the pass's report (what was kept fp32 and why), then compares the result with the
fp32 backbone on the same model directory: hidden-state error and code agreement of a few
deterministic decodes. ``--prepare`` builds prepared backbones ahead of time
(:mod:`.convert_prepare`), ``--anchors`` canonical voice anchors (:mod:`.convert_anchors`).
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
from onnx import external_data_helper

from wyoming_omnivoice.convert_anchors import AnchorsConfig, add_anchor_arguments, run_anchors
from wyoming_omnivoice.convert_prepare import PrepareConfig, add_prepare_arguments, run_prepare
from wyoming_omnivoice.engine import BACKBONE, BACKBONE_FP16, EMBEDDINGS, TOKENIZER
from wyoming_omnivoice.engine.offline import (
    DEFAULT_MARGIN,
    Fp16Report,
    calibration_feeds,
    convert_to_fp16,
)

_LOGGER = logging.getLogger(__name__)


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


def convert_backbone(model_dir: Path, *, margin: float = DEFAULT_MARGIN
                     ) -> tuple[Path, Fp16Report]:
    """Write the calibrated fp16 backbone next to the fp32 one; returns its path and report."""
    source = model_dir / BACKBONE
    if not source.is_file():
        raise SystemExit(f"{source} not found: MODEL_DIR must hold {BACKBONE}")
    target = model_dir / BACKBONE_FP16
    feeds = calibration_feeds(model_dir / EMBEDDINGS,
                              model_dir / TOKENIZER)
    # The weights stay on disk while onnxruntime calibrates; they are converted one by one.
    model = onnx.load(str(source), load_external_data=False)
    converted, report = convert_to_fp16(model, feeds, margin=margin, log_summary=False,
                                        data_dir=source.parent)
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
    from wyoming_omnivoice.engine import DecodeOptions, Engine

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
    cosine = float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-30))
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
        hidden_rel=float(np.linalg.norm(h32 - h16) / max(float(np.linalg.norm(h32)), 1e-30)),
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
    parser.add_argument("--fp16", action="store_true",
                        help="write llm_backbone_fp16.onnx next to the fp32 backbone")
    add_prepare_arguments(parser)
    add_anchor_arguments(parser)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"),
                        help="device for the fp32/fp16 comparison (default cpu)")
    parser.add_argument("--no-verify", action="store_true",
                        help="skip the comparison with the fp32 backbone")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help="keep fp32 any fp16 candidate whose calibrated |activation| "
                             f"reaches this fraction of 65504 (default {DEFAULT_MARGIN})")
    parser.add_argument("--verify-steps", type=int, default=16,
                        help="decode steps of the code-agreement check (default 16)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.prepare:
        return run_prepare(PrepareConfig.from_flags(args))
    if args.anchors:
        return run_anchors(AnchorsConfig.from_flags(args))
    if not args.fp16:
        parser.error("give --fp16, --prepare VARIANTS or --anchors LANGS")
    target, report = convert_backbone(args.model_dir, margin=args.margin)
    print(report.summary(limit=40))
    print(f"wrote {target}")
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
