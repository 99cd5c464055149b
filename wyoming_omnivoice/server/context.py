"""What every connection shares: fixed settings, live state and policy.

- :class:`ServerSettings`: numbers and switches fixed at start-up (from the command line).
- :class:`LiveState`: what changes while the server runs: the voice catalog (voice folders
  are added), the draining flag, open connections, request slots, requests with work in
  the worker. Touched only on the event loop thread (the worker reads one count).
- :class:`ServerPolicy`: the decisions the handler delegates: how a request for a voice
  becomes an engine request, what to do on ``describe``.

:class:`ServerContext` bundles the three with the inference worker.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wyoming.event import Event

from wyoming_omnivoice.server.connection import ConnectionLimits
from wyoming_omnivoice.server.info import build_info
from wyoming_omnivoice.server.metrics import NoMetrics
from wyoming_omnivoice.server.request_input import TextThread
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

if TYPE_CHECKING:
    from wyoming_omnivoice import SynthesisRequest
    from wyoming_omnivoice.server.connection import Connection

_LOGGER = logging.getLogger(__name__)

#: Builds the engine request for (voice, text); raises ValueError for bad input.
RequestBuilder = Callable[[VoicePreset, str], "SynthesisRequest"]


@dataclass(frozen=True)
class ServerSettings:
    """Fixed at start-up."""

    default_voice: str
    sample_rate: int
    samples_per_chunk: int = 1024
    #: Longest text per request, in characters (--max-text-length).
    max_text_length: int = 5000
    #: Advertise streaming synthesis (streaming events are answered either way).
    streaming: bool = True
    #: Synthesis requests (one-shot or stream) served at once (--max-concurrent).
    max_concurrent: int = 16
    #: A long first sentence is spoken from its first clause (off: --whole-first-sentence).
    first_clause: bool = True
    #: Longest wait of a client with nothing to play, in seconds (--max-gap; 0: off).
    max_gap: float = 2.0
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)


class RequestSlots:
    """Requests in service (one-shot or stream), at most ``limit``; loop thread only."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: set[object] = set()

    @property
    def active(self) -> int:
        return len(self._held)

    def try_acquire(self, request: object) -> bool:
        if request in self._held:
            return True
        if len(self._held) >= self.limit:
            return False
        self._held.add(request)
        return True

    def release(self, request: object) -> None:
        self._held.discard(request)


class Demand:
    """Requests with a piece of text queued or decoding: what the batch window waits for.

    An open stream between sentences has none and is not counted, so a lone request never
    waits for it. Changed on the loop thread; the worker thread reads ``len()``.
    """

    def __init__(self) -> None:
        self._pieces: dict[object, int] = {}

    def __len__(self) -> int:
        return len(self._pieces)

    def enter(self, request: object) -> None:
        self._pieces[request] = self._pieces.get(request, 0) + 1

    def leave(self, request: object) -> None:
        left = self._pieces.get(request, 0) - 1
        if left > 0:
            self._pieces[request] = left
        else:
            self._pieces.pop(request, None)


@dataclass
class LiveState:
    """Changes while the server runs (event loop thread)."""

    catalog: VoiceCatalog
    slots: RequestSlots
    #: Where text is prepared and normalised, off the event loop.
    text: TextThread = field(default_factory=TextThread)
    demand: Demand = field(default_factory=Demand)
    #: Set on SIGTERM/SIGINT: in-flight requests finish, new ones are refused.
    draining: bool = False
    #: Open connections (for the connection cap and a graceful shutdown).
    connections: set[Connection] = field(default_factory=set)


@dataclass(frozen=True)
class ServerPolicy:
    """Decisions the handler delegates."""

    make_request: RequestBuilder
    #: Called on every describe (non-blocking): picks up voice folders added meanwhile.
    on_describe: Callable[[], None] | None = None


@dataclass
class ServerContext:
    """Everything the handlers share (built once at start-up)."""

    settings: ServerSettings
    state: LiveState
    policy: ServerPolicy
    worker: InferenceWorker
    #: Prometheus hooks (no-ops without --metrics-uri).
    metrics: NoMetrics = field(default_factory=NoMetrics)
    _info: tuple[VoiceCatalog, bool, Event] | None = field(default=None, init=False,
                                                          repr=False)

    def describe(self) -> Event:
        """The ``info`` event; first gives the voice watcher a chance to look for voices.

        Built once per catalog and health state and shared: every connection's queued
        answers point at the same event, however many describes are waiting.
        """
        if self.policy.on_describe is not None:
            try:
                self.policy.on_describe()
            except Exception:
                _LOGGER.exception("Looking for new voices failed")
        catalog, healthy = self.state.catalog, self.worker.alive
        if self._info is None or self._info[0] is not catalog or self._info[1] != healthy:
            info = build_info(catalog, streaming=self.settings.streaming, healthy=healthy)
            self._info = (catalog, healthy, info.event())
        return self._info[2]
