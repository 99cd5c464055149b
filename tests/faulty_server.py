"""Test-only entry point: the real server, whose engine fails when the text says so.

``python tests/faulty_server.py ARGS...`` runs ``wyoming_omnivoice`` exactly as
``python -m wyoming_omnivoice ARGS...`` does, except that the loaded engine is wrapped: a
request whose text contains

- ``faultengine`` raises an onnxruntime-style ``RuntimeError``,
- ``faultmemory`` raises ``MemoryError``,
- ``faultvalue`` raises ``ValueError`` (what the engine raises for a bad request),
- ``faultdeath`` raises a ``BaseException`` that kills the inference worker thread,
- ``faultslow`` decodes :data:`SLOW_DECODE_S` seconds late (a host slower than real time).

Everything else (server, worker, engine, client) is real. Production code knows nothing
of this: it only sees an engine whose ``synthesize_batch`` fails.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from wyoming_omnivoice.app import cli, startup

#: How late a ``faultslow`` request's audio comes.
SLOW_DECODE_S = 3.0


class InjectedWorkerDeath(BaseException):
    """Kills the worker thread (what a fatal runtime failure would do)."""


def check_faults(requests: Sequence[Any]) -> None:
    for request in requests:
        text = str(getattr(request, "text", "")).lower()
        if "faultengine" in text:
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : injected fault")
        if "faultmemory" in text:
            raise MemoryError("injected out-of-memory")
        if "faultvalue" in text:
            raise ValueError("injected bad request: the engine refuses this text")
        if "faultdeath" in text:
            raise InjectedWorkerDeath("injected worker death")
        if "faultslow" in text:
            time.sleep(SLOW_DECODE_S)


class FaultyEngine:
    """The real engine, failing on cue (see the module docstring)."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def synthesize_batch(self, requests: Sequence[Any], **kwargs: Any) -> Any:
        check_faults(requests)
        return self._engine.synthesize_batch(requests, **kwargs)

    def open_session(self, *args: Any, **kwargs: Any) -> Any:
        """The worker's step-level session (step scheduling), failing on cue as a request
        joins it."""
        return FaultySession(self._engine.open_session(*args, **kwargs))


class FaultySession:
    """The real session; a request with a fault word fails when it is added."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def add(self, request: Any, **kwargs: Any) -> Any:
        check_faults([request])
        return self._session.add(request, **kwargs)


def main() -> None:
    load_engine = startup.load_engine

    def load_faulty(*args: Any, **kwargs: Any) -> Any:
        return FaultyEngine(load_engine(*args, **kwargs))

    startup.load_engine = load_faulty  # type: ignore[assignment]
    cli.run()


if __name__ == "__main__":
    main()
