"""Offline graph work: prepared backbones (fp32, int8, fp16), the graph rewrites they are
made of, and the fp16 calibration. Run once per model (at the first start or by
``python -m wyoming_omnivoice.convert``), never per request.

This is the package's public interface (the CLIs and benchmarks import from here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wyoming_omnivoice.lazy_exports import lazy_getattr

__all__ = [
    "DEFAULT_MARGIN",
    "Fp16Report",
    "NotPreparable",
    "calibration_feeds",
    "convert_to_fp16",
    "prepare_backbone",
]

#: Public name -> the module of this package that defines it (imported on first use, so
#: importing this package loads neither numpy nor onnxruntime).
_PUBLIC = {
    "DEFAULT_MARGIN": "fp16_calibrate",
    "Fp16Report": "fp16_calibrate",
    "NotPreparable": "prepare",
    "calibration_feeds": "calibration_prompts",
    "convert_to_fp16": "fp16_calibrate",
    "prepare_backbone": "prepare",
}

if TYPE_CHECKING:  # pragma: no cover
    from wyoming_omnivoice.engine.offline.calibration_prompts import (
        calibration_feeds as calibration_feeds,
    )
    from wyoming_omnivoice.engine.offline.fp16_calibrate import DEFAULT_MARGIN as DEFAULT_MARGIN
    from wyoming_omnivoice.engine.offline.fp16_calibrate import Fp16Report as Fp16Report
    from wyoming_omnivoice.engine.offline.fp16_calibrate import convert_to_fp16 as convert_to_fp16
    from wyoming_omnivoice.engine.offline.prepare import prepare_backbone as prepare_backbone
    from wyoming_omnivoice.engine.store.prepared_store import NotPreparable as NotPreparable


__getattr__ = lazy_getattr(__name__, _PUBLIC, globals())
