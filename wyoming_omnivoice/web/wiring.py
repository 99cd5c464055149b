"""The web server's parts from the running server's: one function for ``app/cli.py``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_omnivoice.speech import SpeechService
from wyoming_omnivoice.voices import SavedVoices
from wyoming_omnivoice.web.health import StartupState
from wyoming_omnivoice.web.options import WebOptions
from wyoming_omnivoice.web.speech import StudioSpeech
from wyoming_omnivoice.web.studio import Studio

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions


def web_starter(options: WebOptions, service: SpeechService, decode_options: DecodeOptions,
                fingerprint: str, data_dir: Path, health: StartupState | None = None
                ) -> Callable[[], Awaitable[Callable[[], Awaitable[None]]]]:
    """Starts the web server in the running loop; returns its stop."""
    speech = StudioSpeech(service, options=decode_options, fingerprint=fingerprint,
                          data_dir=data_dir, limits=options.limits)
    studio = Studio(speech, SavedVoices(data_dir), options.limits)

    async def start() -> Callable[[], Awaitable[None]]:
        from wyoming_omnivoice.web.app import start_web

        runner = await start_web(options, studio, health)
        return runner.cleanup

    return start
