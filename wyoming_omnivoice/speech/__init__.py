"""The speech service's public interface: the protocols (Wyoming, HTTP) and the start-up
shell import these names from here, never the modules of this package
(``tests/speech/test_speech_interface.py``).

The service (:class:`SpeechService`) stands between the protocols and the engine: it owns
the synthesis worker (queue, batching), text preparation and admission, and asks the one
voice library for voices. A protocol hands it a one-shot text
(:meth:`SpeechService.one_shot`) or opens a stream (:meth:`SpeechService.open_stream`) and
writes the audio of the :class:`AudioPiece` s that the returned :class:`Speech` makes. The
text formats a request may name (``TEXT_FORMATS``, ``text_format_of``) are the service's
text preparation's.
"""

from __future__ import annotations

from wyoming_omnivoice.speech.admission import Demand, WaitingLine
from wyoming_omnivoice.speech.errors import (
    BUSY,
    INTERNAL_ERROR,
    INVALID_EVENT,
    INVALID_REQUEST,
    SHUTTING_DOWN,
    SYNTHESIS_FAILED,
    TEXT_INVALID,
    TEXT_TOO_LONG,
    UNSUPPORTED_TEXT_FORMAT,
    WORKER_STOPPED,
    RequestError,
    checked_text,
    request_error_for,
)
from wyoming_omnivoice.speech.pacing import PlayClock
from wyoming_omnivoice.speech.pcm import CHANNELS, SAMPLE_WIDTH, Audio, audio_to_pcm
from wyoming_omnivoice.speech.pieces import AudioPiece, Speech
from wyoming_omnivoice.speech.request_builder import RequestBuilder, make_request_factory
from wyoming_omnivoice.speech.requests import Override, SpeechSettings, VoiceWish
from wyoming_omnivoice.speech.service import OneShotSpeech, SpeechService
from wyoming_omnivoice.speech.warmup import check_default_voice, warm_up_after_ready
from wyoming_omnivoice.speech.worker import (
    SCHEDULING,
    BusyError,
    InferenceWorker,
    WorkerStoppedError,
)
from wyoming_omnivoice.text.prepare import TEXT_FORMATS, text_format_of

__all__ = [
    "BUSY",
    "CHANNELS",
    "INTERNAL_ERROR",
    "INVALID_EVENT",
    "INVALID_REQUEST",
    "SAMPLE_WIDTH",
    "SCHEDULING",
    "SHUTTING_DOWN",
    "SYNTHESIS_FAILED",
    "TEXT_FORMATS",
    "TEXT_INVALID",
    "TEXT_TOO_LONG",
    "UNSUPPORTED_TEXT_FORMAT",
    "WORKER_STOPPED",
    "Audio",
    "AudioPiece",
    "BusyError",
    "Demand",
    "InferenceWorker",
    "OneShotSpeech",
    "Override",
    "PlayClock",
    "RequestBuilder",
    "RequestError",
    "Speech",
    "SpeechService",
    "SpeechSettings",
    "VoiceWish",
    "WaitingLine",
    "WorkerStoppedError",
    "audio_to_pcm",
    "check_default_voice",
    "checked_text",
    "make_request_factory",
    "request_error_for",
    "text_format_of",
    "warm_up_after_ready",
]
