"""Command line: parse -> validate -> wire the server together, then serve.

Start-up order: parse every flag into a typed :class:`.config.Config` and check it
(:func:`.config.validate`, the one place flags are checked; it also tries the --uri
address, so a taken port fails before the model loads)
-> voices (built-in, folder voices, --voices-file) -> model files (check --model-dir, or
download into --data-dir) -> load the engine -> build or load the voice
anchors and clone prompts -> the default voice's request checked -> start the worker, queue
the warm-up synthesis on it, start the Wyoming server -> log "ready" (the other voices'
normalisers, the language identification and the background anchors follow). A problem
that stops the start is one clear message (exit 2); a bad voice that is not the default is
logged and skipped. One line gives each phase's time (:mod:`.startup_timing`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from wyoming_omnivoice.anchors.plan import anchor_maker
from wyoming_omnivoice.app import startup
from wyoming_omnivoice.app.config import Config, parse_config, validate
from wyoming_omnivoice.app.metrics import Gauges, start_metrics
from wyoming_omnivoice.app.serve import serve
from wyoming_omnivoice.app.startup_page import StartupPage
from wyoming_omnivoice.app.startup_status import StartupStatus
from wyoming_omnivoice.app.startup_timing import StartupTiming
from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.speech import (
    Demand,
    InferenceWorker,
    SpeechService,
    SpeechSettings,
    check_default_voice,
    make_request_factory,
    warm_up_after_ready,
)
from wyoming_omnivoice.voices.assets import WorkerEncoder, prepare_voices
from wyoming_omnivoice.voices.household import household_file
from wyoming_omnivoice.voices.library import VoiceLibrary
from wyoming_omnivoice.voices.listing import list_voices
from wyoming_omnivoice.web.options import WebOptions, web_options
from wyoming_omnivoice.wyoming_protocol.connection import ConnectionLimits
from wyoming_omnivoice.wyoming_protocol.context import WyomingContext, WyomingSettings

_LOGGER = logging.getLogger("wyoming_omnivoice")

# --------------------------------------------------------------------------- wiring


#: A development switch, not a flag (benchmarks/concurrency.py sets it): the worker's
#: scheduling, ``auto`` (the default: step on CUDA, gated on the CPU), ``step``, ``gated``
#: or ``batch`` (whole batches decoded to the end, to compare the schedulings).
SCHEDULING_ENV = "WYOMING_OMNIVOICE_SCHEDULING"


def scheduling_choice(deterministic: bool = False) -> str:
    """The worker's scheduling from :data:`SCHEDULING_ENV`; unset: ``auto``, or ``gated``
    with ``--deterministic``: a piece then never joins the decode of its request's previous
    piece, whose companions would change its codes where a batch's rows share their
    quantization scales (int8), so a request sounds the same on every replica."""
    from wyoming_omnivoice.speech import SCHEDULING

    value = os.environ.get(SCHEDULING_ENV, "gated" if deterministic else "auto")
    if value not in SCHEDULING:
        raise StartupError(f"{SCHEDULING_ENV}={value!r}: use one of {', '.join(SCHEDULING)}")
    if value != "auto":
        _LOGGER.info("Worker scheduling: %s", value)
    return value


def start(config: Config) -> int:
    """Blocking start-up then serving; returns the process exit code."""
    timing = StartupTiming()
    from wyoming_omnivoice import DecodeOptions  # noqa: F401  (the imports' time, next)

    timing.mark("imports")
    args = validate(config)
    status = StartupStatus()
    web = web_options(args)
    page = StartupPage(web, status) if web is not None else None
    if page is not None:
        page.start()  # the studio page says what the first start does, from now on
    try:
        return _start(args, timing, status, web, page)
    finally:
        if page is not None:
            page.stop()


def _start(args: Config, timing: StartupTiming, status: StartupStatus, web: WebOptions | None,
           page: StartupPage | None) -> int:
    """The start after the flags: each phase told to ``status``; then serving."""
    from wyoming_omnivoice import DecodeOptions

    data_dir = args.data_path
    catalog, failed_folders = startup.load_catalog(args)
    timing.mark("voices")
    status.enter("model")
    include_cloning = any(preset.is_cloned for preset in catalog)
    model_dir = startup.resolve_model_dir(args.model_dir, args.data_path, args.manifest,
                                          include_cloning=include_cloning)
    timing.mark("model files")
    status.enter("engine")
    if args.download_only:
        _LOGGER.info("Model ready in %s (--download-only: not serving)", model_dir)
        return 0
    engine = startup.load_engine(model_dir, args.device, args.precision,
                                 allow_tf32=args.allow_tf32, cache_dir=data_dir,
                                 prefix_cache=args.prefix_cache)
    timing.mark("engine", engine.load_seconds)
    status.model_notes = model_notes(engine)
    status.enter("voices")
    options = DecodeOptions(num_step=args.num_steps_on(engine.device),
                            guidance_scale=args.guidance_scale)
    maker = anchor_maker(args.canonical_anchors, engine, options, model_dir, data_dir,
                         allow_tf32=args.allow_tf32)
    served, assets = prepare_voices(engine, catalog, args.voice, data_dir, options,
                                    batch_size=args.max_batch_size, preload=args.preload_languages,
                                    maker=maker)
    timing.mark("anchors")
    failed_folders |= set(catalog.names) - set(served.names)
    # The one owner of the voices served, with the household's voice per language.
    voices = VoiceLibrary(served, args.voice, assets, household=household_file(data_dir))
    make_request = make_request_factory(voices, args.normalize_text, args.deterministic)
    default = voices.default()
    warm_request = check_default_voice(default, make_request)
    timing.mark("default voice checked")
    status.enter("worker")
    _LOGGER.info("Model loaded on %s", engine.device.upper())
    args = dataclasses.replace(args, shutdown_timeout=args.shutdown_timeout_on(engine.device))

    demand = Demand()
    # Anchors, the studio and the warm-up decode exactly; requests with --prefix-cache.
    if args.prefix_cache >= 2:
        _LOGGER.warning("--prefix-cache %d: requests reuse the prefix's keys and values "
                        "between refreshes every %d steps (faster, not exact; its effect on "
                        "the sound is not known; docs/performance.md, \"Prefix cache\")",
                        args.prefix_cache, args.prefix_cache)
    worker = InferenceWorker(
        engine, options=dataclasses.replace(options, prefix_cache=args.prefix_cache),
        max_queued=2 * args.max_concurrent + args.max_batch_size,
        max_batch=args.max_batch_size, batch_window_s=args.batch_window_ms / 1000.0,
        in_flight=lambda: len(demand), scheduling=scheduling_choice(args.deterministic),
    )
    voices.attach(worker)
    voices.watch_folders(WorkerEncoder(worker, engine.fingerprint), data_dir, failed_folders)
    service = SpeechService(
        worker, voices, make_request,
        SpeechSettings(sample_rate=engine.sample_rate,
                       max_text_length=args.max_text_length,
                       max_concurrent=args.max_concurrent,
                       first_clause=not args.whole_first_sentence,
                       model_notes=model_notes(engine)),
        demand=demand)
    context = WyomingContext(
        service=service,
        settings=WyomingSettings(
            samples_per_chunk=args.samples_per_chunk, streaming=not args.no_streaming,
            max_gap=args.max_gap, lead_in_ms=args.lead_in_ms,
            limits=ConnectionLimits(read_timeout=args.read_timeout,
                                    write_timeout=args.write_timeout,
                                    idle_timeout=args.idle_timeout,
                                    max_connections=args.max_connections)),
    )
    gauges = Gauges(in_flight=lambda: service.active, queued=lambda: worker.queued,
                    connections=lambda: len(context.connections))
    context.metrics = start_metrics(
        args.metrics_uri, engine, gauges,
        worker, options.num_step)
    worker.start()
    warm_up_after_ready(worker, warm_request, options, voices.catalog, default,
                        idle=lambda: service.active == 0, prefix_cache=args.prefix_cache)
    voices.start_background()
    timing.mark("worker")
    side = None
    if web is not None:
        from wyoming_omnivoice.web.wiring import web_starter

        start_studio = web_starter(web, service, options, engine.fingerprint, data_dir, status)

        async def side_with_studio() -> Callable[[], Awaitable[None]]:
            if page is not None:  # the start-up page gives the address to the studio
                await asyncio.to_thread(page.stop)
            return await start_studio()

        side = side_with_studio

    def on_ready() -> None:
        status.ready()
        timing.report()

    code = 1
    try:
        code = asyncio.run(serve(args, context, side, on_ready=on_ready))
    finally:
        voices.close()
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


def model_notes(engine: Any) -> tuple[str, ...]:
    """How the engine runs other than intended, one line each (the studio's /api/info)."""
    notes = []
    fallback = getattr(engine, "precision_fallback", None)
    if fallback:
        notes.append(f"backbone: published, {fallback}")
    rows = getattr(engine, "row_check", None)
    if rows is not None and not rows.ok:
        notes.append(f"backbone: one row per forward, {rows.reason}")
    return tuple(notes)


def check_model_files(config: Config) -> int:
    """``--check-model``: the exit code of :func:`wyoming_omnivoice.engine.check_model`
    (2 when the model folder cannot be had)."""
    from wyoming_omnivoice.engine import check_model

    try:
        args = validate(config)
        model_dir = startup.resolve_model_dir(args.model_dir, args.data_path, args.manifest,
                                              include_cloning=False)
    except StartupError as err:
        sys.stderr.write(f"wyoming-omnivoice: error: {err}\n")
        return 2
    code: int = check_model(model_dir, device=args.device, precision=args.precision,
                            cache_dir=args.data_path)
    return code


def run(argv: Sequence[str] | None = None) -> None:
    """Console entry point (``wyoming-omnivoice`` and ``python -m wyoming_omnivoice``)."""
    # onnxruntime otherwise writes a telemetry device id under ~/.cache/Microsoft; the server
    # writes nothing outside --data-dir (set it to 0 in the environment to opt back in).
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    config = parse_config(argv)
    logging.basicConfig(level=logging.DEBUG if config.debug else logging.INFO,
                        format=config.log_format)
    _LOGGER.debug("Configuration: %s", config)
    if config.list_voices:  # no model, no server: the catalogue a start would serve
        sys.exit(list_voices(config.data_path, config.voices_file, config.voice))
    if config.check_model:  # the model files as the engine would use them; no server
        sys.exit(check_model_files(config))
    try:
        code = start(config)
    except StartupError as err:
        sys.stderr.write(f"wyoming-omnivoice: error: {err}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
