"""Helpers for tools/build_fixtures.py: tiny upstream models, ONNX export, goldens.

Dev-only code: it imports torch, transformers and upstream omnivoice, which the runtime
package and the test suite never do.
"""

import logging
import warnings

from .upstream import install_torchaudio_stub

# Before anything imports transformers: its torchaudio check is evaluated once.
install_torchaudio_stub()


def setup_logging(verbose: bool) -> None:
    """Log at INFO (DEBUG with ``verbose``) and quiet the exporters' own chatter."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("onnxscript", "onnx_ir", "transformers", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    for name in ("torch", "torch.onnx._internal.exporter._registration"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", message="Couldn't find ffmpeg")
