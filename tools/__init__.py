"""Development tools: fixture builders, goldens recorders, the GPU check (never shipped).

A package so that ``python -m tools.gpu.figures`` and ``from tools.fixtures_lib import ...``
work from the repository root; the fixture scripts still run as ``python tools/NAME.py``.
"""
