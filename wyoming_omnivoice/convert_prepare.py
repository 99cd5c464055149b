"""``python -m wyoming_omnivoice.convert --prepare fp32,int8 MODEL_DIR``: prepare backbones.

The server prepares the variant it needs at its first start; this builds them ahead of time
(for an image, or to see the cost). See :mod:`.engine.prepare`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from wyoming_omnivoice.engine import VARIANTS
from wyoming_omnivoice.engine.offline import prepare_backbone


def add_prepare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prepare", default=None, metavar="VARIANTS",
                        help="prepare these backbone variants, comma-separated "
                             f"({', '.join(VARIANTS)}), beside the model (or in "
                             "--prepared-dir); nothing else is done")
    parser.add_argument("--prepared-dir", type=Path, default=None,
                        help="store prepared backbones here instead of MODEL_DIR/prepared")


def run_prepare(args: argparse.Namespace) -> int:
    """Prepare every variant named by ``--prepare``; prints where each one is."""
    variants = [v.strip() for v in str(args.prepare).split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        raise SystemExit(f"--prepare {args.prepare}: use one or more of {', '.join(VARIANTS)}")
    for variant in variants:
        start = time.perf_counter()
        prepared = prepare_backbone(args.model_dir, variant, root=args.prepared_dir)
        print(f"{variant}: {prepared.path} ({time.perf_counter() - start:.1f} s; "
              f"weights in {prepared.weights_dir})")
    return 0
