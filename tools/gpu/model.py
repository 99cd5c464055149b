#!/usr/bin/env python3
"""Build the GPU check's real-size random model on the GPU machine itself (call 1).

    python -m tools.gpu.model --out /tmp/ov-gpu/real [--preset real]

The same seeded weights as ``tools/build_fixtures.py --preset real`` (it reuses
``tools/fixtures_lib``), but only what the check runs: the backbone, embeddings and heads graphs,
the vocoder (``higgs_decoder``), the tokenizer, and the torch model under ``upstream/`` for
the side by side. The three codec encoders (voice cloning only) are skipped, and only the
backbone is checked against torch: minutes of export that the check's device time cannot
spare. Needs torch, transformers, onnx, onnxscript (on the machine) and upstream
``omnivoice`` (carried in the kit). This whole build took 136 s on the H200 machine (81 s
of it the backbone's export). ``check.sh all`` runs it as two processes at once, the
language-model graphs without vocoder or torch twin, and the vocoder alone:

    python -m tools.gpu.model --out DIR --no-vocoder --no-upstream
    python -m tools.gpu.model --vocoder-only --out VDIR   # VDIR/higgs_decoder.onnx, seed 7

(``MODEL_BUILD=numpy`` writes the language-model graphs from seeded numpy weights instead,
``benchmarks.random_model``: 36 s at real size on 2 cores here, but a hand-built graph with
none of the exported graph's shape arithmetic, so its node placement is not the published
graph's.)
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--preset", default="real", choices=("mid", "real"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocoder-only", action="store_true",
                        help="only the preset's Higgs decoder, as OUT/higgs_decoder.onnx")
    parser.add_argument("--no-vocoder", action="store_true",
                        help="skip the vocoder (check.sh exports it in parallel)")
    parser.add_argument("--no-upstream", action="store_true",
                        help="skip the torch twin (only the upstream side by side needs it)")
    args = parser.parse_args(argv)
    if args.vocoder_only:
        return vocoder_only(args.preset, args.seed, args.out)

    import numpy as np
    import torch

    from tools.fixtures_lib import graph_set, setup_logging
    from tools.fixtures_lib.higgs import make_export_modules as make_codec_modules
    from tools.fixtures_lib.omnivoice_graphs import make_export_modules as make_llm_modules
    from tools.fixtures_lib.onnx_export import export_graph, max_abs_diff_vs_torch
    from tools.fixtures_lib.presets import TOLERANCE
    from tools.fixtures_lib.torch_models import build_torch_models, save_upstream

    setup_logging(False)
    log = logging.getLogger("gpu_model")
    started = time.monotonic()
    built = build_torch_models(args.preset, seed=args.seed)
    model, codec = built.model, built.codec
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / graph_set.TOKENIZER).write_text(built.tokenizer.to_str(), encoding="utf-8")
    hidden = model.config.llm_config.hidden_size
    llm, codec_modules = make_llm_modules(model), make_codec_modules(codec)
    graph_set.export_backbone(llm["backbone"], hidden, out / graph_set.BACKBONE)
    export_graph(
        llm["embeddings"],
        (torch.full((2, 8, 9), 1024, dtype=torch.long), torch.ones(2, 9, dtype=torch.bool)),
        out / graph_set.EMBEDDINGS, input_names=["input_ids", "audio_mask"],
        output_names=["inputs_embeds"],
        dynamic_axes={"input_ids": {0: "batch", 2: "seq"}, "audio_mask": {0: "batch", 1: "seq"}},
        external_data=True)
    export_graph(llm["heads"], (torch.randn(2, 9, hidden),), out / graph_set.HEADS,
                 input_names=["hidden_states"], output_names=["logits"],
                 dynamic_axes={"hidden_states": {0: "batch", 1: "seq"}}, external_data=False)
    if not args.no_vocoder:
        export_graph(codec_modules["higgs_decoder"], (torch.randint(0, 1024, (8, 2, 6)),),
                     out / graph_set.CODEC_DIR / "higgs_decoder.onnx", input_names=["codes"],
                     output_names=["waveform_24k"],
                     dynamic_axes={"codes": {1: "batch", 2: "frames"}}, external_data=False)
    rng = np.random.default_rng(99)
    feeds = {"inputs_embeds": rng.standard_normal((2, 17, hidden)).astype(np.float32),
             "attention_mask": np.ones((2, 1, 17, 17), dtype=bool)}
    diff = max_abs_diff_vs_torch(out / graph_set.BACKBONE, llm["backbone"], feeds)
    print(f"backbone ORT vs torch max abs diff {diff:.3g}", flush=True)
    if diff > TOLERANCE[args.preset]:
        log.error("ORT and torch disagree by %.3g", diff)
        return 1
    if not args.no_upstream:
        save_upstream(model, codec, built.text_tokenizer, out / "upstream")
    print(f"model in {out} ({time.monotonic() - started:.0f} s)", flush=True)
    return 0


def vocoder_only(preset_name: str, seed: int, out: Path) -> int:
    """The preset's seeded Higgs decoder (the codec of ``build_torch_models``), exported alone
    (the real one: about 20 s on the H200 machine, against 136 s for the whole model)."""
    import torch

    from tools.fixtures_lib import higgs, setup_logging
    from tools.fixtures_lib.onnx_export import export_graph
    from tools.fixtures_lib.presets import PRESETS
    from tools.fixtures_lib.torch_models import CODEC_SEED_OFFSET
    from tools.fixtures_lib.weights import round_to_bfloat16_values

    setup_logging(False)
    started = time.monotonic()
    preset = PRESETS[preset_name]
    codec = higgs.build_codec(preset.codec, seed=seed + CODEC_SEED_OFFSET)
    if preset.round_weights:
        round_to_bfloat16_values(codec)
    modules = higgs.make_export_modules(codec)
    out.mkdir(parents=True, exist_ok=True)
    export_graph(modules["higgs_decoder"], (torch.randint(0, 1024, (8, 2, 6)),),
                 out / "higgs_decoder.onnx", input_names=["codes"],
                 output_names=["waveform_24k"],
                 dynamic_axes={"codes": {1: "batch", 2: "frames"}}, external_data=False)
    print(f"{preset_name} vocoder in {out} ({time.monotonic() - started:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
