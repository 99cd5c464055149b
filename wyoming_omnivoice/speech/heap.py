"""Hand the C heap's free memory back to the system when the worker goes idle.

A decode allocates and frees arrays of many sizes (batch shapes differ from request to
request) from several threads. glibc keeps what is freed in its arenas for reuse and raises
its mmap threshold as large blocks are freed, so after a burst of mixed requests an idle
server holds tens of megabytes of free heap, and how much depends on the order the requests
came in (measured with the short soak: from +18 % to +110 % of the warmed-up resident size
after 60 requests on the tiny model). ``malloc_trim(0)`` returns every arena's free pages.
The worker calls :func:`release_free_heap` once each time it runs out of work, on its own
thread, so it never delays a request that is already waiting; a request that arrives during
it waits for it (milliseconds: ``python -m benchmarks.soak`` logs nothing of it, the debug
log says how long each took).

Where the C library has no ``malloc_trim`` (musl, macOS), this does nothing.
"""

from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Callable
from functools import cache

_LOGGER = logging.getLogger(__name__)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None)
    except OSError:  # no C library reachable this way (not a POSIX process)
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    function: Callable[[int], int] = trim
    return function


def release_free_heap() -> bool:
    """Return the heap's free pages to the system; whether any were (False where the C
    library cannot)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    started = time.perf_counter()
    released = bool(trim(0))
    _LOGGER.debug("Idle: returned the free heap to the system in %.1f ms (%s)",
                  (time.perf_counter() - started) * 1000,
                  "some released" if released else "nothing to release")
    return released
