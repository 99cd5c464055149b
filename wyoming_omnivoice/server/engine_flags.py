"""The server's engine flags: backbone precision, diffusion steps, TF32; defaults per device.

``--precision auto`` and an omitted ``--num-steps`` take the defaults of the device the
engine really runs on (:mod:`wyoming_omnivoice.engine.precision`): on the CPU the int8
backbone and 16 steps, on CUDA fp32 (TF32 off) and 32 steps. ``--precision fp32
--num-steps 32`` is the exact mode on every device.
"""

from __future__ import annotations

import argparse
import logging

from wyoming_omnivoice.engine import (
    PRECISIONS,
    default_num_steps,
    default_precision,
)

MIN_STEPS, MAX_STEPS = 1, 128
_LOGGER = logging.getLogger("wyoming_omnivoice")


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--precision``, ``--num-steps`` and ``--allow-tf32``."""
    parser.add_argument(
        "--precision", choices=PRECISIONS, default="auto",
        help="backbone: fp32 (exact), int8 (CPU, about 3x faster, close), fp16 (GPU), "
             "published (the file as downloaded), auto: "
             f"{default_precision('cpu')} on the CPU, {default_precision('cuda')} on CUDA "
             "(default: %(default)s). Prepared once beside the model at first start.")
    parser.add_argument(
        "--num-steps", type=int, default=None,
        help=f"diffusion steps per decode, {MIN_STEPS}-{MAX_STEPS} (default: "
             f"{default_num_steps('cpu')} on the CPU, {default_num_steps('cuda')} on CUDA; "
             "32 is upstream's and the exact mode's)")
    parser.add_argument(
        "--allow-tf32", action="store_true",
        help="let CUDA multiply fp32 matrices in TF32 (faster on Ampere and later, no "
             "longer exact; default: off)")


def num_steps_problem(args: argparse.Namespace) -> str | None:
    """The message for a bad ``--num-steps``, or None."""
    steps = args.num_steps
    if steps is not None and not MIN_STEPS <= steps <= MAX_STEPS:
        return f"--num-steps {steps}: use {MIN_STEPS} to {MAX_STEPS}"
    return None


def num_steps_for(args: argparse.Namespace, device: str) -> int:
    """``--num-steps``, or the default of the device the engine runs on."""
    if args.num_steps is not None:
        steps: int = args.num_steps
        _LOGGER.info("Diffusion steps: %d (--num-steps)", steps)
    else:
        steps = default_num_steps(device)
        _LOGGER.info("Diffusion steps: %d (the %s default; --num-steps 32 for upstream's)",
                     steps, device.upper())
    return steps
