"""Command line, startup validation and the server's main loop.

Startup order: parse and check every flag -> voices (built-in, folder voices, --voices-file)
-> model files (check --model-dir, or download into --data-dir) -> load the engine -> build
or load the voice anchors and clone prompts -> one warm-up synthesis -> start the worker and
the Wyoming server -> log "ready". Any problem stops the start with one clear message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from wyoming_omnivoice import __version__

from .anchors import Anchor, AnchorCache
from .handler import OmniVoiceEventHandler, RequestLimiter, ServerContext
from .voice_watch import FolderVoiceWatcher, NewVoice
from .voices import VoiceCatalog, VoiceConfigError, VoicePreset, build_catalog
from .worker import InferenceWorker

_LOGGER = logging.getLogger("wyoming_omnivoice")

DEFAULT_URI = "tcp://0.0.0.0:10200"
DEFAULT_VOICE = "en-female-young"
WARMUP_TEXT = "Ready."
#: A reply-sized sentence (about Home Assistant's 60-character one-shot limit) for the
#: batch warm-up.
BURST_WARMUP_TEXT = "The living room lights are on and it is warm and cozy inside."
WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


class StartupError(Exception):
    """A bad flag, file or model: the message is shown as is and the process exits."""


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
                             "and caches (default: $XDG_DATA_HOME/wyoming-omnivoice)")
    parser.add_argument("--model-dir", type=Path, default=None,
                        help="use this pre-downloaded model folder as is (no download)")
    parser.add_argument("--manifest", type=Path, default=None,
                        help="model manifest JSON to download from instead of the built-in one")
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                        help="inference device (default: %(default)s: CUDA when usable)")
    parser.add_argument("--precision", choices=("fp32", "fp16"), default="fp32",
                        help="backbone precision: fp16 uses llm_backbone_fp16.onnx made by "
                             "'python -m wyoming_omnivoice.convert --fp16 MODEL_DIR' (GPU; "
                             "default: %(default)s)")
    parser.add_argument("--voice", default=DEFAULT_VOICE,
                        help="default voice when a request names none (default: %(default)s)")
    parser.add_argument("--voices-file", type=Path, default=None,
                        help="YAML file with your own voice presets (add or override)")
    parser.add_argument("--num-steps", type=int, default=32,
                        help="diffusion steps per decode, 1-128 (default: %(default)s; 16 is "
                             "faster with little quality loss)")
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
    parser.add_argument("--no-streaming", action="store_true",
                        help="do not advertise streaming synthesis (streaming events are "
                             "still answered)")
    parser.add_argument("--zeroconf", nargs="?", const="omnivoice", default=None,
                        metavar="NAME",
                        help="announce the server over mDNS for Home Assistant discovery "
                             "(needs a tcp:// URI; NAME defaults to 'omnivoice')")
    parser.add_argument("--debug", action="store_true", help="log DEBUG messages")
    parser.add_argument("--log-format", default=logging.BASIC_FORMAT,
                        help="Python logging format (default: %(default)s)")
    parser.add_argument("--version", action="version", version=__version__)
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
        (1 <= args.num_steps <= 128, f"--num-steps {args.num_steps}: use 1 to 128"),
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
    data_dir = args.data_dir or default_data_dir()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise StartupError(f"--data-dir {data_dir}: cannot create it ({err})") from None
    if not os.access(data_dir, os.W_OK):
        raise StartupError(f"--data-dir {data_dir}: not writable")
    args.data_dir = data_dir


# --------------------------------------------------------------------------- voices


def load_catalog(args: argparse.Namespace) -> VoiceCatalog:
    """Built-in presets, folder voices under <data-dir>/voices, then --voices-file."""
    from . import cloned_voices

    extra = [_preset_from_spec(spec)
             for spec in cloned_voices.discover_cloned_voices(args.data_dir)]
    try:
        catalog = build_catalog(args.voices_file, extra=extra)
    except VoiceConfigError as err:
        raise StartupError(str(err)) from None
    if args.voice not in catalog:
        raise StartupError(
            f"--voice {args.voice!r} is not a known voice. Available: {', '.join(catalog.names)}"
        )
    return catalog


def folder_voice_watcher(engine: Any, args: argparse.Namespace, context: ServerContext,
                         assets: VoiceAssets) -> FolderVoiceWatcher:
    """Adds voice folders created under <data-dir>/voices while the server runs."""
    from . import cloned_voices

    def to_preset(spec: Any) -> VoicePreset:
        try:
            return _preset_from_spec(spec)
        except StartupError as err:
            raise ValueError(str(err)) from None

    def add(found: list[NewVoice]) -> None:  # on the event loop
        for voice in found:
            assets.prompts[voice.preset.name] = voice.prompt
        context.catalog = context.catalog.merged(voice.preset for voice in found)

    return FolderVoiceWatcher(
        cloned_voices.voices_dir(args.data_dir),
        discover=lambda: cloned_voices.discover_cloned_voices(args.data_dir),
        to_preset=to_preset,
        load_prompt=lambda preset: _load_clone_prompt(engine, preset, args.data_dir),
        on_found=add,
    )


def _preset_from_spec(spec: Any) -> VoicePreset:
    from wyoming_omnivoice.engine.languages import strict_language

    language = getattr(spec, "language", None) or "en"
    try:
        resolved = strict_language(str(language)) or "en"
    except ValueError as err:
        raise StartupError(f"Cloned voice {spec.name!r}: {err}") from None
    return VoicePreset(
        name=spec.name,
        description=getattr(spec, "description", None) or f"{spec.name} (cloned voice)",
        languages=(resolved,),
        anchor=False,
        normalize_text=getattr(spec, "normalize_text", None),
        reference_audio=Path(spec.audio_path),
        source=f"voice folder {Path(spec.audio_path).parent}",
        clone_spec=spec,
    )


# --------------------------------------------------------------------------- model + voices


def resolve_model_dir(args: argparse.Namespace, include_cloning: bool) -> Path:
    from wyoming_omnivoice.engine.model_files import ModelError

    from . import download

    try:
        if args.model_dir is not None:
            download.check_model_dir(args.model_dir, include_cloning=include_cloning)
            return args.model_dir
        return download.ensure_model(args.data_dir, include_cloning=include_cloning,
                                     manifest=args.manifest)
    except ModelError as err:
        raise StartupError(str(err)) from None


@dataclass
class VoiceAssets:
    """Per-voice references the requests use: anchors and clone prompts."""

    anchors: dict[str, Anchor] = field(default_factory=dict)
    prompts: dict[str, Any] = field(default_factory=dict)


def prepare_voices(engine: Any, catalog: VoiceCatalog, args: argparse.Namespace,
                   options: Any) -> VoiceAssets:
    assets = VoiceAssets()
    cache = AnchorCache(args.data_dir / "anchors", engine.fingerprint,
                        settings={"num_step": args.num_steps,
                                  "guidance_scale": args.guidance_scale})
    anchored = [preset for preset in catalog if preset.uses_anchor]
    try:
        assets.anchors = cache.ensure_all(anchored, engine, options,
                                          batch_size=args.max_batch_size)
    except ValueError:
        # Find the preset the engine refuses, to name it.
        for preset in anchored:
            try:
                assets.anchors[preset.name] = cache.get_or_create(preset, engine, options)
            except ValueError as err:
                raise StartupError(f"Voice {preset.name!r} ({preset.source}): {err}") from None
    for preset in catalog:
        if not preset.is_cloned:
            continue
        try:
            assets.prompts[preset.name] = _load_clone_prompt(engine, preset, args.data_dir)
        except ValueError as err:
            raise StartupError(f"Voice {preset.name!r} ({preset.source}): {err}") from None
    return assets


def warm_up(engine: Any, catalog: VoiceCatalog, default: VoicePreset,
            make_request: Callable[[VoicePreset, str], Any], options: Any,
            max_batch: int = 1) -> None:
    """Make the first request as fast as the next: sessions, shapes, normaliser imports.

    Besides one full synthesis, one forward of a full batch (``max_batch`` reply-sized
    requests) runs, so the allocations a burst of concurrent requests needs are made at
    startup: the first burst is not slowed by them and resident memory stays flat after
    "ready" instead of stepping up at the first busy moment.
    """
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    engine.warm_up()
    for language in sorted({lang for preset in catalog for lang in preset.languages}):
        if supports_language(language):
            normalize_text("It is 21.5 degrees at 10:30.", language)
    try:
        engine.synthesize_batch([make_request(default, WARMUP_TEXT)], options=options)
        if max_batch > 1:
            one_step = replace(options, num_step=1) if options is not None else None
            burst = [make_request(default, BURST_WARMUP_TEXT)] * max_batch
            engine.generate_codes_batch(burst, options=one_step)
    except ValueError as err:
        raise StartupError(f"Warm-up synthesis with voice {default.name!r} failed: {err}"
                           ) from None


def _load_clone_prompt(engine: Any, preset: VoicePreset, data_dir: Path) -> Any:
    from . import cloned_voices

    spec = preset.clone_spec
    if spec is None:
        spec = cloned_voices.ClonedVoiceSpec(
            name=preset.name, audio_path=preset.reference_audio,
            transcript=preset.reference_text, language=preset.language,
            description=preset.description,
        )
    return cloned_voices.load_clone_prompt(engine, spec, data_dir / "cache" / "clone_prompts")


def make_request_factory(assets: VoiceAssets, normalize_default: bool
                         ) -> Callable[[VoicePreset, str], Any]:
    """Build engine requests for (voice, text): language, normalisation, reference.

    Normalisation follows the voice's own switch when it has one; otherwise it is on when
    ``--normalize-text`` is on and the language has a full rule set (others are spoken as
    written, as upstream does by default).
    """
    from wyoming_omnivoice import SynthesisRequest
    from wyoming_omnivoice.text.normalize import normalize_text, supports_language

    def make_request(voice: VoicePreset, text: str) -> Any:
        language = voice.language_for(text)
        if voice.normalize_text is not None:
            normalize = voice.normalize_text
        else:
            normalize = normalize_default and supports_language(language)
        if normalize:
            text = normalize_text(text, language)
        reference: dict[str, Any] = {}
        prompt = assets.prompts.get(voice.name)
        anchor = assets.anchors.get(voice.name)
        if prompt is not None:
            reference = {"ref_codes": prompt.codes, "ref_text": prompt.text,
                         "ref_rms": prompt.rms}
        elif anchor is not None:
            reference = {"ref_codes": anchor.codes, "ref_text": anchor.text}
        return SynthesisRequest(text=text, language=language, instruct=voice.instruct,
                                speed=voice.speed, **reference)

    return make_request


# --------------------------------------------------------------------------- serving


def zeroconf_host(host: str | None) -> str | None:
    """The address to announce: None (auto-detect the LAN IP) for wildcard binds."""
    if host is None or host in WILDCARD_HOSTS:
        return None
    return host


async def serve(args: argparse.Namespace, context: ServerContext,
                worker: InferenceWorker) -> int:
    from wyoming.server import AsyncServer, AsyncStdioServer

    server = AsyncServer.from_uri(args.uri)
    factory = partial(OmniVoiceEventHandler, context=context)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    exit_code = 0

    def on_worker_death(_err: BaseException) -> None:
        nonlocal exit_code
        exit_code = 1
        loop.call_soon_threadsafe(stop.set)

    worker.on_death = on_worker_death

    if isinstance(server, AsyncStdioServer):
        _LOGGER.info("Ready (stdio)")
        await server.run(factory)
        return exit_code

    await server.start(factory)
    if args.zeroconf is not None:
        await _start_zeroconf(args)
    signals = 0

    def on_signal(signum: int) -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            _LOGGER.warning("Second %s: stopping without waiting",
                            signal.Signals(signum).name)
            context.draining = True
            drained.set()
        stop.set()

    drained = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    _LOGGER.info("Ready: listening on %s with %d voice(s), default %r, %s", args.uri,
                 len(context.catalog), context.default_voice,
                 "streaming" if context.streaming else "no streaming")
    await stop.wait()
    _LOGGER.info("Stopping")
    await drain(server, context, args.shutdown_timeout, drained)
    await server.stop()
    await _wait_closed(context, 2.0)
    return exit_code


async def _wait_closed(context: ServerContext, timeout: float) -> None:
    """Give closing connections a moment to flush what was already written to them."""
    async def closed() -> None:
        while context.handlers:
            await asyncio.sleep(0.02)

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(closed(), timeout)


async def drain(server: Any, context: ServerContext, timeout: float,
                abort: asyncio.Event | None = None) -> None:
    """Stop listening, refuse new requests, wait (bounded) for requests in progress."""
    listener = getattr(server, "_server", None)  # wyoming's asyncio.Server, if any
    if listener is not None:
        listener.close()
    context.draining = True
    if context.limiter.active == 0:
        return
    _LOGGER.info("Waiting up to %g s for %d request(s) in progress", timeout,
                 context.limiter.active)

    async def finished() -> None:
        while context.limiter.active > 0 and not (abort is not None and abort.is_set()):
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(finished(), timeout)
    except TimeoutError:
        _LOGGER.warning("%d request(s) still in progress after %g s; closing them",
                        context.limiter.active, timeout)


async def _start_zeroconf(args: argparse.Namespace) -> None:
    try:
        from wyoming.zeroconf import HomeAssistantZeroconf
    except ImportError:
        raise StartupError(
            "--zeroconf needs the zeroconf package: pip install 'wyoming-omnivoice[zeroconf]'"
        ) from None
    uri = urlparse(args.uri)
    announcer = HomeAssistantZeroconf(port=uri.port, name=args.zeroconf,
                                      host=zeroconf_host(uri.hostname))
    await announcer.register_server()
    _LOGGER.info("Announced over zeroconf as %r at %s:%s", args.zeroconf, announcer.host,
                 uri.port)


def load_engine(model_dir: Path, device: str, precision: str = "fp32") -> Any:
    """Load the engine; with ``--device auto`` a GPU that fails falls back to the CPU, loudly.

    onnxruntime itself falls back to the CPU when the CUDA provider cannot start (missing
    CUDA/cuDNN libraries, no usable GPU) and only prints a notice; so the device the engine
    really uses is checked. ``--device cuda`` never falls back: the user asked for the GPU,
    so its failure stops the start with the reason.
    """
    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.engine import core
    from wyoming_omnivoice.engine.model_files import ModelError

    wanted_gpu = device == "cuda" or (device == "auto"
                                      and core.choose_providers("auto").device == "cuda")
    try:
        engine = Engine.load(model_dir, device=device, precision=precision)
    except ValueError as err:
        raise StartupError(str(err)) from None
    except (ModelError, RuntimeError) as err:
        if device != "auto" or not wanted_gpu:
            raise StartupError(str(err)) from None
        reason = str(err)
    else:
        if not wanted_gpu or engine.device == "cuda":
            return engine
        reason = "the CUDA execution provider did not start (see the onnxruntime messages above)"
        if device == "cuda":
            raise StartupError(f"--device cuda: {reason}. Check the CUDA 13 and cuDNN 9 "
                               "libraries and the GPU, or use --device auto to allow the CPU.")
        _LOGGER.error(_CPU_FALLBACK, reason)
        return engine
    _LOGGER.error(_CPU_FALLBACK, reason)
    try:
        return Engine.load(model_dir, device="cpu", precision=precision)
    except (ModelError, ValueError, RuntimeError) as err:
        raise StartupError(str(err)) from None


_CPU_FALLBACK = ("Loading the model on the GPU failed: %s. --device auto: FALLING BACK TO THE "
                 "CPU, synthesis will be much slower. Fix the GPU setup, or pass --device cpu "
                 "to silence this.")


def start(args: argparse.Namespace) -> int:
    """Blocking startup then serving; returns the process exit code."""
    from wyoming_omnivoice import DecodeOptions

    validate_args(args)
    catalog = load_catalog(args)
    include_cloning = any(preset.is_cloned for preset in catalog)
    model_dir = resolve_model_dir(args, include_cloning)
    engine = load_engine(model_dir, args.device, args.precision)
    options = DecodeOptions(num_step=args.num_steps, guidance_scale=args.guidance_scale)
    assets = prepare_voices(engine, catalog, args, options)
    make_request = make_request_factory(assets, args.normalize_text)
    default = catalog.get(args.voice)
    if default is None:  # validated in load_catalog
        raise StartupError(f"--voice {args.voice!r} is not a known voice")
    warm_up(engine, catalog, default, make_request, options, max_batch=args.max_batch_size)
    _LOGGER.info("Model loaded on %s and warmed up", engine.device.upper())

    limiter = RequestLimiter(args.max_concurrent)
    worker = InferenceWorker(
        engine, options=options, max_queued=2 * args.max_concurrent + args.max_batch_size,
        max_batch=args.max_batch_size, batch_window_s=args.batch_window_ms / 1000.0,
        in_flight=lambda: limiter.active,
    )
    context = ServerContext(
        catalog=catalog, default_voice=args.voice, worker=worker, limiter=limiter,
        sample_rate=engine.sample_rate, make_request=make_request,
        samples_per_chunk=args.samples_per_chunk, max_text_length=args.max_text_length,
        streaming=not args.no_streaming, read_timeout=args.read_timeout,
        write_timeout=args.write_timeout, idle_timeout=args.idle_timeout,
        max_connections=args.max_connections,
    )
    watcher = folder_voice_watcher(engine, args, context, assets)
    context.on_describe = lambda: watcher.poll(set(context.catalog.names))
    worker.start()
    code = 1
    try:
        code = asyncio.run(serve(args, context, worker))
    finally:
        watcher.close()
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
    try:
        code = start(args)
    except StartupError as err:
        sys.stderr.write(f"wyoming-omnivoice: error: {err}\n")
        sys.exit(2)
    except KeyboardInterrupt:
        code = 0
    sys.exit(code)
