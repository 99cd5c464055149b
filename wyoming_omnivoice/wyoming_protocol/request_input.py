"""Each Wyoming event a client sends, parsed once at the door into a typed value.

:func:`parse_event` turns an event into one of :class:`OneShot`, :class:`StreamStart`,
:class:`StreamChunk`, :class:`StreamStop` or :class:`DescribeRequest` (``None`` for an
event the server ignores), or raises :class:`RequestError` for a malformed one or an
unsupported ``text_format``. The handler then works on typed values only.
"""

from __future__ import annotations

from dataclasses import dataclass

from wyoming.event import Event
from wyoming.info import Describe
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from wyoming_omnivoice.speech import (
    INVALID_REQUEST,
    TEXT_FORMATS,
    UNSUPPORTED_TEXT_FORMAT,
    RequestError,
    VoiceWish,
    text_format_of,
)


@dataclass(frozen=True)
class DescribeRequest:
    """``describe``: the server answers ``info``."""


@dataclass(frozen=True)
class OneShot:
    """``synthesize``: a whole text (also the compatibility copy sent inside a stream)."""

    text: str
    voice: VoiceWish | None = None
    ssml: bool = False


@dataclass(frozen=True)
class StreamStart:
    """``synthesize-start``: a stream of text follows."""

    voice: VoiceWish | None = None
    ssml: bool = False


@dataclass(frozen=True)
class StreamChunk:
    """``synthesize-chunk``: more text of the open stream."""

    text: str


@dataclass(frozen=True)
class StreamStop:
    """``synthesize-stop``: the stream's text is complete."""


Parsed = DescribeRequest | OneShot | StreamStart | StreamChunk | StreamStop


def check_text_format(value: object) -> bool:
    """Whether the request's text is SSML; RequestError for a format the server does not
    take."""
    fmt = text_format_of(value)
    if fmt not in TEXT_FORMATS:
        raise RequestError(f"Unsupported text_format {fmt!r}: use 'text' (or 'ssml', whose "
                           "tags are removed and only the text is spoken)",
                           UNSUPPORTED_TEXT_FORMAT)
    return fmt == "ssml"


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


def parse_event(event: Event) -> Parsed | None:
    """The typed value of ``event`` (None: an event type the server ignores)."""
    if Describe.is_type(event.type):
        return DescribeRequest()
    try:
        if Synthesize.is_type(event.type):
            synthesize = Synthesize.from_event(event)
            return OneShot(synthesize.text or "", voice_wish(event),
                           check_text_format(synthesize.text_format))
        if SynthesizeStart.is_type(event.type):
            return StreamStart(voice_wish(event), check_text_format(event.data.get("text_format")))
        if SynthesizeChunk.is_type(event.type):
            return StreamChunk(SynthesizeChunk.from_event(event).text or "")
    except (KeyError, TypeError, ValueError) as err:
        raise RequestError(f"Malformed {event.type} event: {err}", INVALID_REQUEST) from None
    if SynthesizeStop.is_type(event.type):
        return StreamStop()
    return None
