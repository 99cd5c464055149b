"""Prometheus metrics on their own HTTP port (``--metrics-uri``; off by default).

The Wyoming port stays Wyoming-only: the metrics are served by prometheus-client's own HTTP
server on ``--metrics-uri http://HOST:PORT`` (path ``/metrics``, as Prometheus expects).

What is measured, and where it comes from (the server's hooks are one line each):

- requests by outcome and error code, first-audio latency and audio seconds produced: from
  the events a connection receives and sends (:meth:`ServerMetrics.received`,
  :meth:`ServerMetrics.sent`, :meth:`ServerMetrics.closed`). Requests on one connection are
  answered in order, so a FIFO per connection pairs each ending with its request;
- batch size, decode time and real-time factor: from the inference worker after each batch
  (:meth:`ServerMetrics.batch_done`);
- requests in flight, jobs queued for the worker and open connections: gauges read at
  scrape time;
- model, device and precision as an info metric (``precision_fallback``: why the published
  backbone runs in place of the one ``--precision auto`` chose, empty when it does not);
  GPU memory (NVML, from the ``nvidia-ml-py`` package of the ``[gpu]`` extra) only when the
  engine runs on CUDA.

:class:`NoMetrics` has the same hooks doing nothing: what the server uses without
``--metrics-uri``.
"""

from __future__ import annotations

import functools
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ParamSpec
from urllib.parse import urlparse

from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.wyoming_protocol.metrics_hooks import NoMetrics

if TYPE_CHECKING:
    from prometheus_client.core import Metric
    from wyoming.event import Event

    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.speech import InferenceWorker

_LOGGER = logging.getLogger(__name__)
P = ParamSpec("P")

PREFIX = "omnivoice"
#: Seconds buckets that fit a voice assistant: 50 ms (a short reply on a GPU) to 30 s.
SECONDS_BUCKETS = (0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0,
                   7.5, 10.0, 15.0, 20.0, 30.0)
#: Real-time factor (decode seconds per audio second): below 1 is faster than real time.
RTF_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)

#: Request outcomes (label ``outcome``): ``ok``, ``error`` (an ``error`` event was sent;
#: ``code`` says which), ``disconnected`` (the client left before the ending).
OK, ERROR, DISCONNECTED = "ok", "error", "disconnected"


def parse_metrics_uri(uri: str) -> tuple[str, int]:
    """``http://HOST:PORT`` -> (host, port); StartupError naming the fix otherwise."""
    example = "e.g. --metrics-uri http://0.0.0.0:9464"
    parsed = urlparse(uri)
    if parsed.scheme != "http":
        raise StartupError(f"--metrics-uri {uri!r}: use http://HOST:PORT ({example})")
    try:
        port = parsed.port
    except ValueError:
        port = None
    if not parsed.hostname or port is None or port == 0:
        raise StartupError(f"--metrics-uri {uri!r}: needs a host and a port ({example})")
    if parsed.path not in ("", "/", "/metrics") or parsed.query:
        raise StartupError(f"--metrics-uri {uri!r}: metrics are always served on /metrics; "
                           f"give only the address ({example})")
    return parsed.hostname, port


@dataclass
class _Pending:
    """A request waiting for its ending."""

    started: float
    stream: bool
    code: str | None = None
    audio_seen: bool = False


@dataclass
class _ConnectionTrack:
    """What the metrics follow on one connection: requests waiting for their ending."""

    pending: deque[_Pending] = field(default_factory=deque)
    in_stream: bool = False


@dataclass(frozen=True)
class Gauges:
    """Live counts read at scrape time (called on the metrics server's thread)."""

    in_flight: Callable[[], int]
    queued: Callable[[], int]
    connections: Callable[[], int]


def _never_raises(hook: Callable[P, None]) -> Callable[P, None]:
    """A metrics bug must never cost a request, a connection or the worker thread."""
    @functools.wraps(hook)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            hook(*args, **kwargs)
        except Exception:
            _LOGGER.exception("Metrics hook %s failed", hook.__name__)

    return guarded


class ServerMetrics(NoMetrics):
    """The server's metrics on their own registry."""

    def __init__(self, sample_rate: int, gauges: Gauges, *, device: str, precision: str,
                 fingerprint: str, version: str, num_steps: int,
                 precision_fallback: str | None = None) -> None:
        from prometheus_client import (
            CollectorRegistry,
            Counter,
            Gauge,
            Histogram,
            Info,
            disable_created_metrics,
        )

        disable_created_metrics()  # type: ignore[no-untyped-call]  # no *_created series
        self.sample_rate = sample_rate
        self.registry = CollectorRegistry()
        reg = self.registry
        self.requests = Counter(f"{PREFIX}_requests", "Synthesis requests by outcome and "
                                "error code", ["outcome", "code"], registry=reg)
        self.first_audio = Histogram(f"{PREFIX}_first_audio_seconds", "Time from a request "
                                     "to its first audio chunk", buckets=SECONDS_BUCKETS,
                                     registry=reg)
        self.audio = Counter(f"{PREFIX}_audio_seconds", "Seconds of audio sent to clients",
                             registry=reg)
        self.silence = Counter(f"{PREFIX}_silence_seconds", "Seconds of silence the gap "
                               "guard sent while a piece decoded (--max-gap; not in "
                               "audio_seconds or first_audio_seconds)", registry=reg)
        self.batch_size = Histogram(f"{PREFIX}_batch_size", "Requests decoded together",
                                    buckets=BATCH_BUCKETS, registry=reg)
        self.decode = Histogram(f"{PREFIX}_decode_seconds", "Time to decode one batch",
                                buckets=SECONDS_BUCKETS, registry=reg)
        self.rtf = Histogram(f"{PREFIX}_real_time_factor", "Decode seconds per second of "
                             "audio, per request of a batch", buckets=RTF_BUCKETS,
                             registry=reg)
        Gauge(f"{PREFIX}_requests_in_flight", "Requests being served",
              registry=reg).set_function(gauges.in_flight)
        Gauge(f"{PREFIX}_queue_depth", "Synthesis jobs waiting for the worker",
              registry=reg).set_function(gauges.queued)
        Gauge(f"{PREFIX}_connections_open", "Open client connections",
              registry=reg).set_function(gauges.connections)
        Info(f"{PREFIX}_model", "Model fingerprint, device and precision in use",
             registry=reg).info({"fingerprint": fingerprint, "device": device,
                                 "precision": precision, "version": version,
                                 "num_steps": str(num_steps),
                                 "precision_fallback": precision_fallback or ""})
        if device == "cuda":
            collector = GpuMemoryCollector.create()
            if collector is not None:
                reg.register(collector)
        self._tracks: weakref.WeakKeyDictionary[object, _ConnectionTrack] = \
            weakref.WeakKeyDictionary()

    def serve(self, uri: str) -> None:
        """Start the HTTP server (a daemon thread) on ``http://HOST:PORT``."""
        from prometheus_client import start_http_server

        host, port = parse_metrics_uri(uri)
        try:
            start_http_server(port, addr=host, registry=self.registry)
        except OSError as err:
            raise StartupError(f"--metrics-uri {uri}: cannot listen there ({err.strerror or err})"
                               ) from None
        _LOGGER.info("Metrics on http://%s:%d/metrics", host, port)

    # ---- connection hooks (event loop thread) ----------------------------------------

    def _track(self, connection: object) -> _ConnectionTrack:
        track = self._tracks.get(connection)
        if track is None:
            track = self._tracks[connection] = _ConnectionTrack()
        return track

    @_never_raises
    def received(self, connection: object, event: Event) -> None:
        track = self._track(connection)
        if event.type == "synthesize-start":
            if track.in_stream:  # a new start ends the open stream (the handler does too)
                return
            track.in_stream = True
            track.pending.append(_Pending(time.monotonic(), stream=True))
        elif event.type == "synthesize-stop":
            track.in_stream = False
        elif event.type == "synthesize" and not track.in_stream:
            track.pending.append(_Pending(time.monotonic(), stream=False))

    @_never_raises
    def sent(self, connection: object, event: Event) -> None:
        track = self._track(connection)
        head = track.pending[0] if track.pending else None
        if event.type == "audio-chunk":
            self.audio.inc(len(event.payload or b"") / (2 * self.sample_rate))
            if head is not None and not head.audio_seen:
                head.audio_seen = True
                self.first_audio.observe(time.monotonic() - head.started)
        elif event.type == "error":
            code = str(event.data.get("code") or "unknown")
            if head is None:  # refused outside any request (e.g. too many connections)
                self.requests.labels(ERROR, code).inc()
            elif head.code is None:
                head.code = code
        elif head is not None and (event.type == "synthesize-stopped"
                                   or (event.type == "audio-stop" and not head.stream)):
            track.pending.popleft()
            self.requests.labels(ERROR if head.code else OK, head.code or "").inc()

    @_never_raises
    def closed(self, connection: object) -> None:
        track = self._tracks.pop(connection, None)
        if track is not None:
            for item in track.pending:
                self.requests.labels(ERROR if item.code else DISCONNECTED,
                                     item.code or "").inc()

    @_never_raises
    def silence_sent(self, seconds: float) -> None:
        self.silence.inc(seconds)

    # ---- worker hook (worker thread) -------------------------------------------------

    @_never_raises
    def batch_done(self, size: int, seconds: float, samples: Sequence[int]) -> None:
        self.batch_size.observe(size)
        self.decode.observe(seconds)
        for count in samples:
            if count > 0:
                self.rtf.observe(seconds / (count / self.sample_rate))


class GpuMemoryCollector:
    """GPU memory used and total per device, through NVML (``nvidia-ml-py``)."""

    def __init__(self, nvml: Any, handles: list[Any]) -> None:
        self._nvml = nvml
        self._handles = handles

    @classmethod
    def create(cls) -> GpuMemoryCollector | None:
        try:
            import pynvml
        except ImportError:
            _LOGGER.warning("GPU memory metrics need nvidia-ml-py (pip install nvidia-ml-py); "
                            "they are left out")
            return None
        try:
            pynvml.nvmlInit()
            handles = [pynvml.nvmlDeviceGetHandleByIndex(index)
                       for index in range(pynvml.nvmlDeviceGetCount())]
        except Exception as err:  # NVML errors are its own exception classes
            _LOGGER.warning("GPU memory metrics left out: NVML failed (%s)", err)
            return None
        return cls(pynvml, handles)

    def collect(self) -> Iterable[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        used = GaugeMetricFamily(f"{PREFIX}_gpu_memory_used_bytes", "GPU memory in use",
                                 labels=["gpu"])
        total = GaugeMetricFamily(f"{PREFIX}_gpu_memory_total_bytes", "GPU memory",
                                  labels=["gpu"])
        for index, handle in enumerate(self._handles):
            try:
                memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
            except Exception:  # a GPU that went away: skip it in this scrape
                continue
            used.add_metric([str(index)], float(memory.used))
            total.add_metric([str(index)], float(memory.total))
        return [used, total]


def start_metrics(uri: str | None, engine: Engine, gauges: Gauges,
                  worker: InferenceWorker, num_steps: int) -> NoMetrics:
    """Serve the metrics when ``--metrics-uri`` is given (hooking the worker); else no-ops.

    The info metric shows what runs: the engine's backbone variant (``--precision auto``
    resolved) and the steps in use (``--num-steps`` or the device's default)."""
    if uri is None:
        return NoMetrics()
    from wyoming_omnivoice import __version__

    metrics = ServerMetrics(
        engine.sample_rate,
        gauges,
        device=engine.device, precision=engine.precision,
        precision_fallback=getattr(engine, "precision_fallback", None),
        fingerprint=engine.fingerprint, version=__version__,
        num_steps=num_steps)
    worker.on_batch = metrics.batch_done
    metrics.serve(uri)
    return metrics
