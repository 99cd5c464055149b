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
* ``fp32-fused``, ``fp16-fused``: the fused backbone (:mod:`.offline.fused_backbone`): each
  layer as onnxruntime's fused kernels (packed q/k/v and gate/up products,
  ``MultiHeadAttention`` with a bias from the mask, ``RotaryEmbedding``, RMSNorms with their
  residual sums), no shape arithmetic, for CUDA's launch-bound forward. ``fp32-fused`` runs
  anywhere and equals ``fp32`` within float rounding (hidden states within about 1e-6
  relative, the same codes); ``fp16-fused`` keeps the residual stream and its norms in
  fp32 and the rest in fp16 (not calibrated like ``fp16``: its agreement with fp32 is
  measured by the GPU check before it can be a default).
* ``published``: the published file as it is (only its NaN guards removed in memory).
* ``auto``: the device default below.

Defaults per device (docs/performance.md, "Speed", has the measured costs): on the CPU
``int8`` and 16 diffusion steps (the fastpath study found int8 costs about one WER point
and 12-16 steps stay within noise of 32); on CUDA ``fp32`` with TF32 off and 32 steps:
exact, and it makes the canonical voice anchors itself, where an fp16 serving engine needs
a second fp32 engine on the GPU for them (the first GPU run: fp16 answers 1.9x sooner at
98.2 % of codes; docs/gpu.md, "CUDA defaults").
``--precision fp32 --num-steps 32`` is the exact mode everywhere.
"""

from __future__ import annotations

#: Backbones built by :mod:`.prepare`.
VARIANTS = ("fp32", "int8", "fp16", "fp32-fused", "fp16-fused")
#: Variants built by :mod:`.offline.fused_backbone` (their dtype without the suffix).
FUSED = ("fp32-fused", "fp16-fused")
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
