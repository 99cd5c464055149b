"""Text preparation (cleanup, sentences, normalisation) off the event loop, on one thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

#: Text at least this long is prepared on a thread, off the event loop.
OFF_LOOP_CHARS = 256


class TextThread:
    """One thread for text work, so the event loop keeps serving other connections.

    Every step of text preparation is linear (:mod:`.text.prepare`), but a long crafted
    text still costs tens of milliseconds, and normalisation rules are many. Short text is
    prepared inline (a thread hop would cost more than the work); the rest here. One thread
    is enough (the work holds the GIL) and keeps the server's thread count fixed.
    """

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="omnivoice-text")
        self._executor.submit(int).result()  # start the thread now, not at the first request

    async def run(self, work: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``work(*args, **kwargs)`` on the text thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(work, *args, **kwargs))

    async def prepare(self, size: int, work: Callable[..., T], *args: Any, **kwargs: Any
                      ) -> T:
        """Text preparation of ``size`` characters: inline when short, else on the thread."""
        if size < OFF_LOOP_CHARS:
            return work(*args, **kwargs)
        return await self.run(work, *args, **kwargs)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
