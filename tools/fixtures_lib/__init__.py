"""Helpers for tools/build_fixtures.py: tiny upstream models, ONNX export, goldens.

Dev-only code: it imports torch, transformers and upstream omnivoice, which the runtime
package and the test suite never do.
"""

from .upstream import install_torchaudio_stub

# Before anything imports transformers: its torchaudio check is evaluated once.
install_torchaudio_stub()
