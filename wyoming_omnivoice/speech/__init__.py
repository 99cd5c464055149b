"""The speech service between the protocols (Wyoming, HTTP) and the engine.

It owns the synthesis worker (queue, batching), text preparation, voice routing, anchors
and clone prompts; protocols hand it typed requests and get audio back.
"""
