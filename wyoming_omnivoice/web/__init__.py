"""The voice studio page and the HTTP API (studio JSON, OpenAI-compatible speech) on
aiohttp, served by the server process itself in the Wyoming server's event loop (off
unless ``--web-uri``). See :mod:`.app` for the parts and :mod:`.security` for the rules.
"""
