"""The Wyoming protocol on a connection: framing, events to speech requests and back, the
``info`` answer. Knows nothing of ONNX, and nothing of the start-up shell
(:mod:`wyoming_omnivoice.app`)."""
