"""``python -m wyoming_omnivoice.convert --prepare fp32,int8 MODEL_DIR``: prepare backbones.

The server prepares the variant it needs at its first start; this builds them ahead of time
(for an image, or to see the cost). See :mod:`.engine.offline.prepare`. The flags become a
typed, frozen :class:`PrepareConfig` at the parser (:meth:`PrepareConfig.from_flags`).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class PrepareConfig:
    """``--prepare``: the variants to prepare, in order, for ``model_dir``."""

    model_dir: Path
    variants: tuple[str, ...]
    prepared_dir: Path | None = None

    @classmethod
    def from_flags(cls, args: argparse.Namespace) -> PrepareConfig:
        """The parsed flags, checked once (``SystemExit`` naming the variants to use)."""
        variants = tuple(v.strip() for v in str(args.prepare).split(",") if v.strip())
        unknown = [v for v in variants if v not in VARIANTS]
        if unknown or not variants:
            raise SystemExit(f"--prepare {args.prepare}: use one or more of "
                             f"{', '.join(VARIANTS)}")
        return cls(model_dir=args.model_dir, variants=variants, prepared_dir=args.prepared_dir)


def run_prepare(config: PrepareConfig) -> int:
    """Prepare every variant of ``config``; prints where each one is."""
    for variant in config.variants:
        start = time.perf_counter()
        prepared = prepare_backbone(config.model_dir, variant, root=config.prepared_dir)
        print(f"{variant}: {prepared.path} ({time.perf_counter() - start:.1f} s; "
              f"weights in {prepared.weights_dir})")
    return 0
