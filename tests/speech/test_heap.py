"""Returning the free C heap to the system (speech/heap.py) with the real C library."""

from __future__ import annotations

import platform
import sys

import numpy as np
import pytest

from wyoming_omnivoice.speech import heap


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_glibc_hands_freed_memory_back() -> None:
    """Many freed blocks below the mmap threshold stay in the heap until trimmed; after
    :func:`release_free_heap` the process's resident memory is lower than before it."""

    def rss_kib() -> int:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

    blocks = [np.ones(8192, dtype=np.float64) for _ in range(6000)]  # 64 KiB each, 375 MiB
    keep = blocks[-1]
    del blocks
    before = rss_kib()
    assert heap.release_free_heap() is True
    after = rss_kib()
    assert after < before - 200 * 1024, (before, after)  # at least 200 MiB returned
    assert keep.sum() == 8192  # the block still in use is untouched


def test_no_malloc_trim_means_nothing_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.release_free_heap() is False
