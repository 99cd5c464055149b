#!/usr/bin/env python3
"""Build random OmniVoice test models in the published ONNX layout, plus upstream goldens.

Dev tool: runs in the dev virtualenv with torch, transformers and upstream ``omnivoice``
(installed ``--no-deps``); nothing here is a runtime dependency. See tools/README.md.

    python tools/build_fixtures.py                     # tiny fixtures + goldens (committed)
    python tools/build_fixtures.py --preset mid --out bench-out/mid
    python tools/build_fixtures.py --preset real --out bench-out/real
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures_lib import goldens, graph_set, higgs, ort_decode, setup_logging  # noqa: E402
from fixtures_lib.presets import PRESETS, TOLERANCE  # noqa: E402
from fixtures_lib.torch_models import build_torch_models, save_upstream  # noqa: E402

logger = logging.getLogger("build_fixtures")

FIXTURES = REPO / "tests" / "fixtures"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    parser.add_argument("--out", type=Path, default=None,
                        help="model directory (default tests/fixtures/models/tiny for tiny)")
    parser.add_argument("--golden-dir", type=Path, default=None,
                        help="where upstream_*.json go (default tests/fixtures/golden for "
                             "tiny, DIR/golden for mid/real with --goldens)")
    parser.add_argument("--goldens", action=argparse.BooleanOptionalAction, default=None,
                        help="record upstream goldens (default: on for tiny, off otherwise)")
    parser.add_argument("--variants", action=argparse.BooleanOptionalAction, default=None,
                        help="also write the fp16-output and causal-backbone variants next "
                             "to DIR (default: on for tiny, off otherwise)")
    parser.add_argument("--save-upstream", action=argparse.BooleanOptionalAction, default=None,
                        help="also save the torch model under DIR/upstream/ for "
                             "OmniVoice.from_pretrained (default: on for mid/real)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    tiny = args.preset == "tiny"
    if args.out is None:
        if not tiny:
            parser.error("--out is required for --preset mid/real (e.g. bench-out/mid)")
        args.out = FIXTURES / "models" / "tiny"
    if args.goldens is None:
        args.goldens = tiny
    if args.variants is None:
        args.variants = tiny
    if args.save_upstream is None:
        args.save_upstream = PRESETS[args.preset].save_upstream
    if args.golden_dir is None:
        args.golden_dir = FIXTURES / "golden" if tiny else args.out / "golden"
    return args


def write_json(path: Path, data: Any) -> None:
    """Compact JSON (one line per top-level list item would be nicer to diff, but size wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    logger.info("wrote %s (%d bytes)", path, path.stat().st_size)


def record_goldens(args: argparse.Namespace, model, codec, facts: dict[str, Any]) -> bool:
    """Record upstream goldens, replay them through the graphs, write the JSON files.

    Returns False when the numpy + ORT replay of the fp32 graphs is not token-exact.
    """
    codes = goldens.record_codes(model)
    replay = ort_decode.check_goldens(args.out, codes)
    facts["ort_numpy_replay"] = replay
    print(f"numpy+ORT replay of the goldens: {replay['exact_matches']}/{replay['cases']} "
          f"exact, smallest argmax gap {replay['min_argmax_gap']:.3g}, smallest top-k "
          f"gap {replay['min_topk_gap']:.3g}")
    fp16_dir = variant_dir(args.out)
    if args.variants:
        fp16 = ort_decode.check_goldens(fp16_dir, codes)
        facts["ort_numpy_replay_fp16io"] = {
            key: fp16[key]
            for key in ("exact_matches", "min_cell_agreement", "mean_cell_agreement")
        }
        print(f"fp16-output variant: {fp16['exact_matches']}/{fp16['cases']} exact, "
              f"cell agreement mean {fp16['mean_cell_agreement']:.3f} "
              f"min {fp16['min_cell_agreement']:.3f}")
    if replay["mismatched"]:
        logger.error("ORT replay differs from upstream on %s", replay["mismatched"])
        return False
    write_json(args.golden_dir / "upstream_codes.json", codes)
    write_json(args.golden_dir / "upstream_codec.json", goldens.record_codec(codec))
    write_json(args.golden_dir / "upstream_graphs.json", facts)
    return True


def variant_dir(out: Path) -> Path:
    """Where the float16-I/O variant of ``out`` goes: a temporary folder (the test suite
    builds its own with ``tools/fp16io.py``; nothing of it is committed)."""
    return Path(tempfile.gettempdir()) / f"omnivoice-{out.name}-fp16io"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.verbose)
    started = time.monotonic()

    built = build_torch_models(args.preset, seed=args.seed)
    model, codec, tokenizer = built.model, built.codec, built.tokenizer
    text_tokenizer = built.text_tokenizer

    diffs = graph_set.export_model_dir(model, codec, tokenizer.to_str(), args.out)
    worst = max(diffs.values())
    print(f"ORT vs torch max abs diff per graph: {json.dumps(diffs, indent=1)}")
    if worst > TOLERANCE[args.preset]:
        logger.error("ORT and torch disagree by %.3g (> %.3g)", worst, TOLERANCE[args.preset])
        return 1
    hidden = model.config.llm_config.hidden_size
    probe = graph_set.bidirectional_probe(args.out / graph_set.BACKBONE, hidden)
    print(f"bidirectional probe (max delta at earlier positions): {probe:.4g}")

    facts: dict[str, Any] = {
        "preset": args.preset,
        "seed": args.seed,
        "ort_vs_torch_max_abs_diff": diffs,
        "bidirectional_probe": probe,
        "text_vocab_rows": model.config.llm_config.vocab_size,
        "tokenizer_size": tokenizer.get_vocab_size(),
        "codec": higgs.describe(codec),
    }
    if args.variants:
        graph_set.export_fp16io_variant(args.out, variant_dir(args.out))
        causal_probe = graph_set.export_causal_backbone(
            model, args.out.parent / "causal_backbone")
        print(f"causal backbone probe: {causal_probe:.4g}")
        facts["causal_probe"] = causal_probe
    if args.save_upstream:
        save_upstream(model, codec, text_tokenizer, args.out / "upstream")
    if args.goldens and not record_goldens(args, model, codec, facts):
        return 1
    logger.info("done in %.1f s", time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
