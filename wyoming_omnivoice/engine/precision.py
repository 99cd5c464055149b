"""Backbone precisions and the defaults per device.

``precision`` names which backbone graph an engine runs:

* ``fp32``: the prepared fp32 backbone (:mod:`.prepare`): the published graph with its
  rotary embedding read from a table and its softmax NaN guards removed. Exact: hidden
  states within 1e-5 of the published graph, the same codes on every golden case.
* ``int8``: the prepared backbone with its weight matrix products in dynamic int8
  (per channel weights, activations quantized at run time). About a third of the fp32
  forward time on a CPU; not exact (see docs/performance.md, "Speed").
* ``fp16``: the prepared backbone with matrix products and attention in fp16 and
  norms, softmax, residual stream and I/O in fp32, kept in fp32 wherever calibration
  prompts come near fp16's range (GPU only: the CPU provider computes fp16 in fp32).
* ``published``: the published file as it is (only its NaN guards removed in memory).
* ``auto``: the device default below.

Defaults per device (docs/performance.md, "Speed", has the measured costs): on the CPU
``int8`` and 16 diffusion steps (the fastpath study found int8 costs about one WER point
and 12-16 steps stay within noise of 32); on CUDA ``fp32`` with TF32 off and 32 steps until fp16 is
verified on a GPU. ``--precision fp32 --num-steps 32`` is the exact mode everywhere.
"""

from __future__ import annotations

#: Backbones built by :mod:`.prepare`.
VARIANTS = ("fp32", "int8", "fp16")
#: Every value ``Engine.load(precision=...)`` accepts.
PRECISIONS = ("auto", *VARIANTS, "published")
#: Diffusion steps of the exact mode (upstream's default).
EXACT_STEPS = 32
_DEFAULTS = {
    # device: (precision, num_steps)
    "cpu": ("int8", 16),
    "cuda": ("fp32", EXACT_STEPS),
}


def check_precision(precision: str) -> str:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                         f"not {precision!r}")
    return precision


def default_precision(device: str) -> str:
    """The backbone a device runs when ``--precision auto`` (``cpu`` or ``cuda``)."""
    return _DEFAULTS.get(device, _DEFAULTS["cpu"])[0]


def default_num_steps(device: str) -> int:
    """Diffusion steps per decode when ``--num-steps`` is not given."""
    return _DEFAULTS.get(device, _DEFAULTS["cpu"])[1]


def resolve_precision(precision: str, device: str) -> str:
    """``auto`` made concrete for ``device``; other values as given (checked)."""
    check_precision(precision)
    return default_precision(device) if precision == "auto" else precision
