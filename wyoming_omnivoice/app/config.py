"""The server's configuration: the parsed flags as one typed, frozen value.

:func:`parse_config` turns the command line (:mod:`.flags` declares every flag) into a
:class:`Config` once; :func:`validate` checks every value (the one place flags are checked)
and tries the ``--uri`` address, so a taken port fails before the model loads. Everything
past the CLI takes the ``Config`` (or the values it needs), never an
``argparse.Namespace``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from wyoming_omnivoice.anchors.lazy import DEFAULT_PRELOAD
from wyoming_omnivoice.app.flags import (
    BOUNDS,
    DEFAULT_URI,
    DEFAULT_VOICE,
    SHUTDOWN_TIMEOUT_S,
    build_parser,
    default_data_dir,
)
from wyoming_omnivoice.app.listen_address import check_listen_address, zeroconf_loopback_warning
from wyoming_omnivoice.app.metrics import parse_metrics_uri
from wyoming_omnivoice.engine import default_num_steps
from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.model.data_dir import prepare_data_dir
from wyoming_omnivoice.web.options import INGRESS_PROXY, web_options
from wyoming_omnivoice.wyoming_protocol.gap_guard import DEFAULT_LEAD_IN_MS

_LOGGER = logging.getLogger("wyoming_omnivoice")


@dataclass(frozen=True)
class Config:
    """Every flag of the server (the field names are the flags' ``dest`` names)."""

    uri: str = DEFAULT_URI
    data_dir: Path | None = None
    model_dir: Path | None = None
    manifest: Path | None = None
    device: str = "auto"
    precision: str = "auto"
    num_steps: int | None = None
    prefix_cache: int = 0
    allow_tf32: bool = False
    voice: str = DEFAULT_VOICE
    voices_file: Path | None = None
    guidance_scale: float = 2.0
    samples_per_chunk: int = 1024
    max_text_length: int = 5000
    max_concurrent: int = 16
    max_batch_size: int = 8
    batch_window_ms: float = 5.0
    normalize_text: bool = True
    read_timeout: float = 30.0
    write_timeout: float = 30.0
    idle_timeout: float = 300.0
    max_connections: int = 64
    #: None: the device's default (:data:`.flags.SHUTDOWN_TIMEOUT_S`), set at start-up.
    shutdown_timeout: float | None = None
    whole_first_sentence: bool = False
    max_gap: float = 2.0
    lead_in_ms: int = DEFAULT_LEAD_IN_MS
    no_streaming: bool = False
    zeroconf: str | None = None
    list_voices: bool = False
    check_model: bool = False
    preload_languages: tuple[str, ...] = DEFAULT_PRELOAD
    canonical_anchors: str = "auto"
    debug: bool = False
    log_format: str = logging.BASIC_FORMAT
    metrics_uri: str | None = None
    deterministic: bool = False
    download_only: bool = False
    web_uri: str | None = None
    web_token: str | None = None
    web_ingress: bool = False
    web_ingress_proxy: str = INGRESS_PROXY

    @property
    def data_path(self) -> Path:
        """The data dir (``--data-dir``, else the XDG default)."""
        return self.data_dir or default_data_dir()

    def num_steps_on(self, device: str) -> int:
        """``--num-steps``, or the default of the device the engine runs on."""
        return num_steps_for(self.num_steps, device)

    def shutdown_timeout_on(self, device: str) -> float:
        """``--shutdown-timeout``, or the drain default of the device the engine runs on."""
        if self.shutdown_timeout is not None:
            return self.shutdown_timeout
        timeout = SHUTDOWN_TIMEOUT_S.get(device, SHUTDOWN_TIMEOUT_S["cpu"])
        _LOGGER.info("Shutdown drain: up to %g s for requests in progress (the %s default; "
                     "--shutdown-timeout to change)", timeout, device.upper())
        return timeout


def num_steps_problem(steps: int | None) -> str | None:
    """The message for a bad ``--num-steps``, or None."""
    return BOUNDS["--num-steps"].problem("--num-steps", steps)


def num_steps_for(steps: int | None, device: str) -> int:
    """``--num-steps``, or the default of the device the engine runs on (logged)."""
    if steps is not None:
        _LOGGER.info("Diffusion steps: %d (--num-steps)", steps)
        return steps
    chosen = default_num_steps(device)
    _LOGGER.info("Diffusion steps: %d (the %s default; --num-steps 32 for upstream's)",
                 chosen, device.upper())
    return chosen


def parse_config(argv: Sequence[str] | None = None) -> Config:
    """The command line as a :class:`Config` (argparse exits on a malformed flag)."""
    namespace = build_parser().parse_args(argv)
    return Config(**vars(namespace))


def validate(args: Config) -> Config:
    """Check every flag; the config with its data dir made; :class:`StartupError` naming
    the bad value."""
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
    for flag, bounds in BOUNDS.items():  # the numeric flags
        problem = bounds.problem(flag, getattr(args, flag[2:].replace("-", "_")))
        if problem is not None:
            raise StartupError(problem)
    if args.voices_file is not None and not args.voices_file.is_file():
        raise StartupError(f"--voices-file {args.voices_file}: no such file")
    if args.model_dir is not None and not args.model_dir.is_dir():
        raise StartupError(f"--model-dir {args.model_dir}: no such folder")
    if args.manifest is not None and not args.manifest.is_file():
        raise StartupError(f"--manifest {args.manifest}: no such file")
    if args.metrics_uri is not None:
        parse_metrics_uri(args.metrics_uri)
    web_options(args)  # the web server's flags (web/options.py)
    args = dataclasses.replace(args, data_dir=prepare_data_dir(args.data_dir or default_data_dir()))
    check_listen_address(args.uri)  # before the model loads: a taken port fails in seconds
    if args.zeroconf is not None and (warning := zeroconf_loopback_warning(args.uri)):
        _LOGGER.warning("%s", warning)
    return args
