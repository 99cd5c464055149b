"""Prometheus metrics (--metrics-uri), --deterministic and --download-only on a real server.

The metrics are scraped over HTTP from a real server subprocess and parsed with
prometheus-client's own text-format parser; values must move after a real synthesis.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from conftest import (
    REPO_ROOT,
    TINY_MODEL,
    free_port,
    pcm_bytes,
    synthesize,
)
from prometheus_client.parser import text_string_to_metric_families
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.tts import Synthesize, SynthesizeStart, SynthesizeStop, SynthesizeStopped

from wyoming_omnivoice.app.metrics import Gauges, ServerMetrics, parse_metrics_uri
from wyoming_omnivoice.wyoming_protocol.errors import StartupError

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int) -> tuple[Samples, set[str]]:
    """Every sample (name, sorted labels) -> value, and the metric family names."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode("utf-8")
    samples: Samples = {}
    families: set[str] = set()
    for family in text_string_to_metric_families(text):
        families.add(family.name)
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples, families


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_metrics_scraped_over_http_move_after_synthesis(server_factory) -> None:
    metrics_port = free_port()
    server = server_factory("--metrics-uri", f"http://127.0.0.1:{metrics_port}")
    before, families = scrape(metrics_port)
    for name in ("omnivoice_requests", "omnivoice_requests_in_flight", "omnivoice_queue_depth",
                 "omnivoice_batch_size", "omnivoice_first_audio_seconds",
                 "omnivoice_decode_seconds", "omnivoice_real_time_factor",
                 "omnivoice_audio_seconds", "omnivoice_silence_seconds",
                 "omnivoice_connections_open", "omnivoice_model_info"):
        assert name in families, name
    assert not any("gpu" in name for name in families)  # CPU: no GPU memory metric
    assert not any(name.endswith("_created") for name in families)
    info = [labels for (name, labels) in before if name == "omnivoice_model_info"]
    assert len(info) == 1
    assert dict(info[0])["device"] == "cpu"
    assert dict(info[0])["precision"] == "int8"  # --precision auto on the CPU
    assert dict(info[0])["precision_fallback"] == ""  # int8 was prepared: no fallback
    # warm-up runs before the worker: nothing counted yet
    assert value(before, "omnivoice_requests_total", outcome="ok", code="") == 0

    events = await synthesize(server.uri, "Hello there. How are you today?")
    assert pcm_bytes(events)
    errors = await synthesize(server.uri, "x" * 6000)  # over --max-text-length
    assert any(event.type == "error" for event in errors)

    after, _ = scrape(metrics_port)
    assert value(after, "omnivoice_requests_total", outcome="ok", code="") == 1
    assert value(after, "omnivoice_requests_total", outcome="error", code="text-too-long") == 1
    assert value(after, "omnivoice_first_audio_seconds_count") == 1
    assert value(after, "omnivoice_first_audio_seconds_sum") > 0
    assert value(after, "omnivoice_batch_size_count") >= 1
    assert value(after, "omnivoice_decode_seconds_count") >= 1
    assert value(after, "omnivoice_real_time_factor_count") >= 1
    # What the client got: the speech, and the gap guard's silence when a decode ran late
    # (a loaded host), which the metrics count apart.
    audio_seconds = len(pcm_bytes(events)) / 2 / 24000
    speech = value(after, "omnivoice_audio_seconds_total")
    silence = value(after, "omnivoice_silence_seconds_total")
    assert speech > 0 and speech + silence == pytest.approx(audio_seconds)
    assert value(after, "omnivoice_requests_in_flight") == 0
    assert value(after, "omnivoice_queue_depth") == 0


def test_metrics_uri_validated() -> None:
    assert parse_metrics_uri("http://0.0.0.0:9464") == ("0.0.0.0", 9464)
    assert parse_metrics_uri("http://[::1]:9464/metrics") == ("::1", 9464)
    for bad in ("tcp://0.0.0.0:9464", "http://0.0.0.0", "http://:9464", "http://h:1/x",
                "9464"):
        with pytest.raises(StartupError, match="--metrics-uri"):
            parse_metrics_uri(bad)


def test_bad_metrics_uri_stops_start_with_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", "--model-dir", str(TINY_MODEL),
         "--data-dir", str(tmp_path), "--metrics-uri", "0.0.0.0:9464"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "--metrics-uri '0.0.0.0:9464': use http://HOST:PORT" in result.stderr


def test_download_only_exits_after_the_model_check(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wyoming_omnivoice", "--model-dir", str(TINY_MODEL),
         "--data-dir", str(tmp_path), "--download-only", "--device", "cpu"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "--download-only" in result.stderr
    assert "Ready" not in result.stderr


async def test_deterministic_replicas_give_identical_audio(server_factory,
                                                           tmp_path: Path) -> None:
    """Two servers, each with its own data dir (own anchors): the same audio."""
    # --max-gap 0: byte for byte, without the gap guard's keep-alive silence, whose place
    # depends on each server's decode time (--deterministic fixes the speech; README)
    servers = [server_factory("--deterministic", "--max-gap", "0",
                              data_dir=tmp_path / f"replica-{index}")
               for index in range(2)]
    text = "The kitchen lights are on. It is twenty degrees."
    first = [pcm_bytes(await synthesize(server.uri, text)) for server in servers]
    again = pcm_bytes(await synthesize(servers[0].uri, text))
    assert first[0]
    assert first[0] == first[1] == again


class FakeConnection:
    """Stands for a handler (the metrics key their state by the connection object)."""


def make_metrics() -> ServerMetrics:
    return ServerMetrics(24000, Gauges(in_flight=lambda: 0, queued=lambda: 0,
                                       connections=lambda: 0),
                         device="cpu", precision="fp32", fingerprint="f", version="v",
                         num_steps=32)


def count(metrics: ServerMetrics, outcome: str, code: str = "") -> float:
    got = metrics.registry.get_sample_value("omnivoice_requests_total",
                                            {"outcome": outcome, "code": code})
    return got or 0.0


def test_request_outcomes_follow_the_events_of_each_connection() -> None:
    """One-shot, a stream of two sentences (one request), a refusal, a client that left."""
    metrics = make_metrics()
    chunk = AudioChunk(rate=24000, width=2, channels=1, audio=b"\0\0" * 2400).event()
    one_shot, stream, gone = FakeConnection(), FakeConnection(), FakeConnection()
    metrics.received(one_shot, Synthesize(text="Hi.").event())
    for event in (AudioStart(rate=24000, width=2, channels=1).event(), chunk,
                  AudioStop().event()):
        metrics.sent(one_shot, event)
    metrics.received(stream, SynthesizeStart().event())
    metrics.received(stream, Synthesize(text="compat copy, not a request").event())
    metrics.received(stream, SynthesizeStop().event())
    for _ in range(2):  # one audio cycle per sentence; the stream ends with stopped
        for event in (AudioStart(rate=24000, width=2, channels=1).event(), chunk,
                      AudioStop().event()):
            metrics.sent(stream, event)
    assert count(metrics, "ok") == 1
    metrics.sent(stream, SynthesizeStopped().event())
    assert count(metrics, "ok") == 2
    metrics.received(one_shot, Synthesize(text="x").event())
    metrics.sent(one_shot, Error(text="busy", code="busy").event())
    metrics.sent(one_shot, AudioStart(rate=24000, width=2, channels=1).event())
    metrics.sent(one_shot, AudioStop().event())
    metrics.received(gone, Synthesize(text="Bye.").event())
    metrics.closed(gone)
    assert count(metrics, "error", "busy") == 1
    assert count(metrics, "disconnected") == 1
    assert metrics.registry.get_sample_value("omnivoice_first_audio_seconds_count") == 2
    assert metrics.registry.get_sample_value("omnivoice_audio_seconds_total") == \
        pytest.approx(0.3)


def test_a_failing_metrics_hook_never_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = make_metrics()

    def broken(*_args: object) -> None:
        raise RuntimeError("metrics bug")

    monkeypatch.setattr(metrics.batch_size, "observe", broken)
    metrics.batch_done(2, 0.5, [24000, 12000])  # logged, not raised
    monkeypatch.setattr(metrics.audio, "inc", broken)
    connection = FakeConnection()
    metrics.received(connection, Synthesize(text="x").event())
    assert metrics.registry.get_sample_value("omnivoice_batch_size_count") == 0
    metrics.sent(connection, AudioChunk(rate=24000, width=2, channels=1, audio=b"\0\0").event())
