"""onnxruntime at run time.

``onnx_sessions`` (sessions, providers, dtype casts, I/O contracts, placement, the freed
heap), ``interrupt`` (stopping a background forward), ``cuda_graphs`` (why a capture was
refused), ``probe`` (the bidirectionality probe), ``precision`` (the backbone precisions and
the defaults per device), ``graph_set`` (one model folder's sessions, checked).
"""
