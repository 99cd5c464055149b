"""What every Wyoming connection shares: fixed protocol settings, the speech service, the
open connections, the metrics hooks and the ``info`` answer.

The speech service (:mod:`wyoming_omnivoice.speech.service`) owns everything about making
audio; this is only what the Wyoming side adds to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wyoming.event import Event

from wyoming_omnivoice.speech import SpeechService
from wyoming_omnivoice.voices import VoiceCatalog
from wyoming_omnivoice.wyoming_protocol.connection import ConnectionLimits
from wyoming_omnivoice.wyoming_protocol.gap_guard import DEFAULT_LEAD_IN_MS
from wyoming_omnivoice.wyoming_protocol.info import build_info
from wyoming_omnivoice.wyoming_protocol.metrics_hooks import NoMetrics

if TYPE_CHECKING:
    from wyoming_omnivoice.wyoming_protocol.connection import Connection


@dataclass(frozen=True)
class WyomingSettings:
    """Fixed at start-up."""

    samples_per_chunk: int = 1024
    #: Advertise streaming synthesis (streaming events are answered either way).
    streaming: bool = True
    #: Longest wait of a client with nothing to play, in seconds (--max-gap; 0: off).
    max_gap: float = 2.0
    #: Silence before each reply's first audio, in milliseconds (--lead-in-ms; 0: none).
    lead_in_ms: int = DEFAULT_LEAD_IN_MS
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)


@dataclass
class WyomingContext:
    """Everything the connections share (built once at start-up)."""

    service: SpeechService
    settings: WyomingSettings = field(default_factory=WyomingSettings)
    #: Prometheus hooks (no-ops without --metrics-uri).
    metrics: NoMetrics = field(default_factory=NoMetrics)
    #: Open connections (for the connection cap and a graceful shutdown).
    connections: set[Connection] = field(default_factory=set)
    _info: tuple[VoiceCatalog, bool, Event] | None = field(default=None, init=False,
                                                          repr=False)

    @property
    def sample_rate(self) -> int:
        return self.service.sample_rate

    def describe(self) -> Event:
        """The ``info`` event; first gives the voice watcher a chance to look for voices.

        Built once per catalog and health state and shared: every connection's queued
        answers point at the same event, however many describes are waiting.
        """
        self.service.look_for_voices()
        catalog, healthy = self.service.catalog, self.service.healthy
        if self._info is None or self._info[0] is not catalog or self._info[1] != healthy:
            info = build_info(catalog, streaming=self.settings.streaming, healthy=healthy)
            self._info = (catalog, healthy, info.event())
        return self._info[2]
