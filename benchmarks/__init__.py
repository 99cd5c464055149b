"""Benchmark scripts: each prints its figures side by side in one run.

Run from the repository root as ``python -m benchmarks.NAME --help``; they import each
other as ``benchmarks.NAME`` and never edit ``sys.path``. Not shipped in the wheel.
"""
