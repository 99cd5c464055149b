"""The metrics hooks the Wyoming side calls (events in and out, connections closed, the gap
guard's silence) and the worker's batch hook: :class:`NoMetrics` does nothing (no
``--metrics-uri``); the start-up shell's Prometheus metrics (``app/metrics.py``) fill them in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyoming.event import Event


class NoMetrics:
    """The hooks, doing nothing (no ``--metrics-uri``)."""

    def received(self, connection: object, event: Event) -> None:
        """An event read from a client."""

    def sent(self, connection: object, event: Event) -> None:
        """An event written to a client."""

    def closed(self, connection: object) -> None:
        """A connection ended."""

    def batch_done(self, size: int, seconds: float, samples: Sequence[int]) -> None:
        """The worker decoded a batch of ``size`` in ``seconds``; samples per item."""

    def silence_sent(self, seconds: float) -> None:
        """The gap guard sent ``seconds`` of silence while a piece decoded."""
