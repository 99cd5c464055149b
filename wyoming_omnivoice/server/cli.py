"""Command line: parse -> validate -> wire the server together, then serve.

Start-up order: parse and check every flag (:func:`validate_args`, the one place flags are
checked; it also tries the --uri address, so a taken port fails before the model loads)
-> voices (built-in, folder voices, --voices-file) -> model files (check --model-dir, or
download into --data-dir) -> load the engine -> build or load the voice
anchors and clone prompts -> one warm-up synthesis -> start the worker and the Wyoming
server -> log "ready". A problem that stops the start is one clear message (exit 2); a bad
voice that is not the default is logged and skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlparse

from wyoming_omnivoice import __version__
from wyoming_omnivoice.model.data_dir import prepare_data_dir
from wyoming_omnivoice.server import startup
from wyoming_omnivoice.server.connection import ConnectionLimits
from wyoming_omnivoice.server.context import WyomingContext, WyomingSettings
from wyoming_omnivoice.server.engine_flags import (
    add_engine_arguments,
    num_steps_for,
    num_steps_problem,
)
from wyoming_omnivoice.server.errors import StartupError
from wyoming_omnivoice.server.gap_guard import add_gap_arguments
from wyoming_omnivoice.server.listen_address import check_listen_address, zeroconf_loopback_warning
from wyoming_omnivoice.server.metrics import (
    Gauges,
    add_metrics_arguments,
    start_metrics,
    validate_metrics_args,
)
from wyoming_omnivoice.server.serve import serve
from wyoming_omnivoice.speech.admission import Demand
from wyoming_omnivoice.speech.determinism import deterministic_requests
from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.speech.service import SpeechService, SpeechSettings
from wyoming_omnivoice.speech.warmup import warm_up
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.voices.assets import WorkerEncoder, folder_voice_watcher, prepare_voices
from wyoming_omnivoice.voices.lazy_anchors import add_language_arguments
from wyoming_omnivoice.voices.listing import add_list_voices_argument, list_voices

_LOGGER = logging.getLogger("wyoming_omnivoice")

DEFAULT_URI = "tcp://0.0.0.0:10200"
DEFAULT_VOICE = "en-female-young"


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "wyoming-omnivoice"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wyoming-omnivoice",
        description="Wyoming text-to-speech server running OmniVoice on onnxruntime.",
    )
    parser.add_argument("--uri", default=DEFAULT_URI,
                        help="tcp://HOST:PORT, unix://PATH or stdio:// (default: %(default)s)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="folder for the downloaded model, voice anchors, cloned voices "
                             "and caches (default: $XDG_DATA_HOME/wyoming-omnivoice, i.e. "
                             "~/.local/share/wyoming-omnivoice when XDG_DATA_HOME is unset)")
    parser.add_argument("--model-dir", type=Path, default=None,
                        help="use this pre-downloaded model folder as is (no download)")
    parser.add_argument("--manifest", type=Path, default=None,
                        help="model manifest JSON to download from instead of the built-in one")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                        help="inference device (default: %(default)s: CUDA when usable)")
    add_engine_arguments(parser)  # --precision, --num-steps, --allow-tf32
    parser.add_argument("--voice", default=DEFAULT_VOICE,
                        help="default voice when a request names none (default: %(default)s)")
    parser.add_argument("--voices-file", type=Path, default=None,
                        help="YAML file with your own voice presets (add or override)")
    parser.add_argument("--guidance-scale", type=float, default=2.0,
                        help="classifier-free guidance scale, 0-10 (default: %(default)s)")
    parser.add_argument("--samples-per-chunk", type=int, default=1024,
                        help="audio samples per audio-chunk event (default: %(default)s)")
    parser.add_argument("--max-text-length", type=int, default=5000,
                        help="longest text accepted per request, in characters "
                             "(default: %(default)s)")
    parser.add_argument("--max-concurrent", type=int, default=16,
                        help="synthesis requests served at once; more get a 'busy' error "
                             "(default: %(default)s)")
    parser.add_argument("--max-batch-size", type=int, default=8,
                        help="most requests decoded together in one batch (default: "
                             "%(default)s)")
    parser.add_argument("--batch-window-ms", type=float, default=5.0,
                        help="how long the worker waits for requests known to be in flight "
                             "to join a batch, 0-10 ms (a lone request never waits; "
                             "default: %(default)s)")
    parser.add_argument("--normalize-text", action=argparse.BooleanOptionalAction,
                        default=True,
                        help="read numbers, dates, times and units as words (a voice can "
                             "override it; default: on)")
    parser.add_argument("--read-timeout", type=float, default=30.0,
                        help="seconds a client may take to finish sending an event it has "
                             "started; a stalled client is disconnected (default: "
                             "%(default)s)")
    parser.add_argument("--write-timeout", type=float, default=30.0,
                        help="seconds a client may go without reading the audio sent to it "
                             "before it is disconnected (default: %(default)s)")
    parser.add_argument("--idle-timeout", type=float, default=300.0,
                        help="seconds a connection with nothing in progress may stay silent "
                             "before it is closed; 0 keeps idle connections open (default: "
                             "%(default)s)")
    parser.add_argument("--max-connections", type=int, default=64,
                        help="most client connections open at once; more are refused with "
                             "an error event (default: %(default)s)")
    parser.add_argument("--shutdown-timeout", type=float, default=8.0,
                        help="on SIGTERM/SIGINT, seconds to let requests in progress finish "
                             "before exiting (default: %(default)s)")
    parser.add_argument(
        "--whole-first-sentence", action="store_true",
        help="decode a long first sentence whole instead of starting the audio with its "
             "first clause (slower first audio, the first sentence's prosody unbroken)")
    parser.add_argument("--no-streaming", action="store_true",
                        help="do not advertise streaming synthesis (streaming events are "
                             "still answered)")
    parser.add_argument("--zeroconf", nargs="?", const="omnivoice", default=None,
                        metavar="NAME",
                        help="announce the server over mDNS for Home Assistant discovery "
                             "(needs a tcp:// URI; NAME defaults to 'omnivoice')")
    add_list_voices_argument(parser)
    add_language_arguments(parser)
    add_gap_arguments(parser)
    parser.add_argument("--debug", action="store_true", help="log DEBUG messages")
    parser.add_argument("--log-format", default=logging.BASIC_FORMAT,
                        help="Python logging format (default: %(default)s)")
    parser.add_argument("--version", action="version", version=__version__)
    add_metrics_arguments(parser)
    return parser


def validate_args(args: argparse.Namespace) -> None:
    """Check every flag; raise :class:`StartupError` naming the bad value."""
    uri = urlparse(args.uri)
    if uri.scheme not in ("tcp", "unix", "stdio"):
        raise StartupError(f"--uri {args.uri!r}: use tcp://HOST:PORT, unix://PATH or stdio://")
    if uri.scheme == "tcp":
        try:
            port = uri.port
        except ValueError:
            port = None
        if not uri.hostname or port is None:
            raise StartupError(f"--uri {args.uri!r}: a tcp URI needs a host and a port, "
                               "e.g. tcp://0.0.0.0:10200")
    if uri.scheme == "unix" and not uri.path:
        raise StartupError(f"--uri {args.uri!r}: a unix URI needs a socket path")
    if args.zeroconf is not None and uri.scheme != "tcp":
        raise StartupError("--zeroconf needs a tcp:// URI")
    checks: list[tuple[bool, str]] = [
        (num_steps_problem(args) is None, str(num_steps_problem(args))),
        (0.0 <= args.guidance_scale <= 10.0,
         f"--guidance-scale {args.guidance_scale}: use 0 to 10"),
        (64 <= args.samples_per_chunk <= 48000,
         f"--samples-per-chunk {args.samples_per_chunk}: use 64 to 48000"),
        (args.max_text_length >= 1, f"--max-text-length {args.max_text_length}: must be >= 1"),
        (args.max_concurrent >= 1, f"--max-concurrent {args.max_concurrent}: must be >= 1"),
        (1 <= args.max_batch_size <= 64,
         f"--max-batch-size {args.max_batch_size}: use 1 to 64"),
        (0.0 <= args.batch_window_ms <= 10.0,
         f"--batch-window-ms {args.batch_window_ms}: use 0 to 10"),
        (0.1 <= args.read_timeout <= 3600, f"--read-timeout {args.read_timeout}: use 0.1 to 3600"),
        (0.1 <= args.write_timeout <= 3600,
         f"--write-timeout {args.write_timeout}: use 0.1 to 3600"),
        (0.0 <= args.idle_timeout <= 86400,
         f"--idle-timeout {args.idle_timeout}: use 0 (never) to 86400"),
        (1 <= args.max_connections <= 10000,
         f"--max-connections {args.max_connections}: use 1 to 10000"),
        (0.0 <= args.shutdown_timeout <= 3600,
         f"--shutdown-timeout {args.shutdown_timeout}: use 0 to 3600"),
    ]
    for ok, message in checks:
        if not ok:
            raise StartupError(message)
    if args.voices_file is not None and not args.voices_file.is_file():
        raise StartupError(f"--voices-file {args.voices_file}: no such file")
    if args.model_dir is not None and not args.model_dir.is_dir():
        raise StartupError(f"--model-dir {args.model_dir}: no such folder")
    if args.manifest is not None and not args.manifest.is_file():
        raise StartupError(f"--manifest {args.manifest}: no such file")
    validate_metrics_args(args)
    args.data_dir = prepare_data_dir(args.data_dir or default_data_dir())
    check_listen_address(args.uri)  # before the model loads: a taken port fails in seconds
    if args.zeroconf is not None and (warning := zeroconf_loopback_warning(args.uri)):
        _LOGGER.warning("%s", warning)


# --------------------------------------------------------------------------- wiring


def start(args: argparse.Namespace) -> int:
    """Blocking start-up then serving; returns the process exit code."""
    from wyoming_omnivoice import DecodeOptions

    validate_args(args)
    catalog, failed_folders = startup.load_catalog(args)
    include_cloning = any(preset.is_cloned for preset in catalog)
    model_dir = startup.resolve_model_dir(args, include_cloning)
    if args.download_only:
        _LOGGER.info("Model ready in %s (--download-only: not serving)", model_dir)
        return 0
    engine = startup.load_engine(model_dir, args.device, args.precision,
                                 allow_tf32=args.allow_tf32, cache_dir=args.data_dir)
    options = DecodeOptions(num_step=num_steps_for(args, engine.device),
                            guidance_scale=args.guidance_scale)
    served, assets = prepare_voices(engine, catalog, args.voice, args.data_dir, options,
                                    batch_size=args.max_batch_size, preload=args.preload_languages)
    failed_folders |= set(catalog.names) - set(served.names)
    make_request = deterministic_requests(make_request_factory(assets, args.normalize_text),
                                          args.deterministic)
    default = served.route(args.voice).preset
    warm_up(engine, served, default, make_request, options, max_batch=args.max_batch_size)
    _LOGGER.info("Model loaded on %s and warmed up", engine.device.upper())

    demand = Demand()
    worker = InferenceWorker(
        engine, options=options, max_queued=2 * args.max_concurrent + args.max_batch_size,
        max_batch=args.max_batch_size, batch_window_s=args.batch_window_ms / 1000.0,
        in_flight=lambda: len(demand),
    )
    assets.attach(worker)
    watcher = folder_voice_watcher(WorkerEncoder(worker, engine.fingerprint), args.data_dir,
                                   lambda found: service.add_voices(found, assets.prompts))
    watcher.remember_failed(failed_folders)
    service = SpeechService(
        worker, served, make_request,
        SpeechSettings(default_voice=args.voice, sample_rate=engine.sample_rate,
                       max_text_length=args.max_text_length,
                       max_concurrent=args.max_concurrent,
                       first_clause=not args.whole_first_sentence),
        demand=demand, look_for_voices=watcher.poll)
    context = WyomingContext(
        service=service,
        settings=WyomingSettings(
            samples_per_chunk=args.samples_per_chunk, streaming=not args.no_streaming,
            max_gap=args.max_gap,
            limits=ConnectionLimits(read_timeout=args.read_timeout,
                                    write_timeout=args.write_timeout,
                                    idle_timeout=args.idle_timeout,
                                    max_connections=args.max_connections)),
    )
    context.metrics = start_metrics(
        args, engine, Gauges(in_flight=lambda: service.active, queued=lambda: worker.queued,
                             connections=lambda: len(context.connections)),
        worker, options.num_step)
    worker.start()
    code = 1
    try:
        code = asyncio.run(serve(args, context))
    finally:
        watcher.close()
        service.close()
        worker.stop(timeout=10.0)
        if worker.thread_running:
            # A long decode is still inside onnxruntime: normal interpreter shutdown would
            # abort ("terminate called ...") under it. Flush the logs and leave right away.
            _LOGGER.warning("A decode is still running; exiting without waiting for it")
            logging.shutdown()
            sys.stdout.flush()
            os._exit(code)
    return code


def run(argv: Sequence[str] | None = None) -> None:
    """Console entry point (``wyoming-omnivoice`` and ``python -m wyoming_omnivoice``)."""
    # onnxruntime otherwise writes a telemetry device id under ~/.cache/Microsoft; the server
    # writes nothing outside --data-dir (set it to 0 in the environment to opt back in).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format=args.log_format)
    _LOGGER.debug("Arguments: %s", args)
    if args.list_voices:  # no model, no server: the catalogue a start would serve
        sys.exit(list_voices(args.data_dir or default_data_dir(), args.voices_file, args.voice))
    try:
        code = start(args)
    except StartupError as err:
        sys.stderr.write(f"wyoming-omnivoice: error: {err}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
