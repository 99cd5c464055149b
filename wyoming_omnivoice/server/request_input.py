"""What a request asks for, read from its event, and where its text is prepared.

- :func:`voice_wish`: the voice a request names (name and/or language).
- :func:`check_text_format`: ``text`` or ``ssml``, else an ``unsupported-text-format`` error.
- :func:`add_first_clause_argument`: the ``--whole-first-sentence`` opt-out of the
  first-clause cut (:mod:`..text.clauses`).
- :class:`TextThread`: text preparation (cleanup, sentences, normalisation) off the event
  loop, on one thread of its own.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar

from wyoming.event import Event

from wyoming_omnivoice.server import errors
from wyoming_omnivoice.server.errors import RequestError
from wyoming_omnivoice.text.prepare import TEXT_FORMATS, text_format_of

T = TypeVar("T")

#: Text at least this long is prepared on a thread, off the event loop.
OFF_LOOP_CHARS = 256


def add_first_clause_argument(parser: argparse.ArgumentParser) -> None:
    """``--whole-first-sentence``: speak a long first sentence whole (slower first audio)."""
    parser.add_argument(
        "--whole-first-sentence", action="store_true",
        help="decode a long first sentence whole instead of starting the audio with its "
             "first clause (slower first audio, the first sentence's prosody unbroken)")


def check_text_format(value: object) -> str:
    """The request's text format; RequestError for one the server does not take."""
    fmt = text_format_of(value)
    if fmt not in TEXT_FORMATS:
        raise RequestError(f"Unsupported text_format {fmt!r}: use 'text' (or 'ssml', whose "
                           "tags are removed and only the text is spoken)",
                           errors.UNSUPPORTED_TEXT_FORMAT)
    return fmt


@dataclass(frozen=True)
class VoiceWish:
    """The voice a request asks for: a name and/or a language (a speaker is ignored)."""

    name: str | None = None
    language: str | None = None


def voice_wish(event: Event) -> VoiceWish | None:
    """From the event's raw ``voice`` (field types checked by :func:`.wire.check_fields`).

    Read from the data itself because ``SynthesizeVoice.from_dict`` drops the language
    when a name is given, and the language picks the voice for an unknown name.
    """
    voice = event.data.get("voice")
    if not isinstance(voice, dict):
        return None
    name, language = voice.get("name"), voice.get("language")
    return VoiceWish(name if isinstance(name, str) else None,
                     language if isinstance(language, str) else None)


class TextThread:
    """One thread for text work, so the event loop keeps serving other connections.

    Every step of text preparation is linear (:mod:`..text.prepare`), but a long crafted
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
