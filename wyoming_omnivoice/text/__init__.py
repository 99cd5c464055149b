"""Server-side text work, before the engine sees a request.

- `prepare`: a request's text to the pieces spoken (format, cleanup, sentence groups).
- `cleanup`: markdown, URLs, HTML and emoji stripped; non-verbal tags kept.
- `sentences`: sentence splitting, incremental for streamed text.
- `normalize`: numbers, dates, times, units and currency read as words, per language.

Nothing here imports onnxruntime or the engine's graphs.
"""
