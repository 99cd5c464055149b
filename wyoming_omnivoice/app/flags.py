"""Every command-line flag, of the server and of the synthesize CLI, declared here only.

:func:`build_parser` is the server's parser; :func:`add_engine_arguments` is shared with the
synthesize CLI (the same engine flags and defaults, so its anchors match the server's
cache). The parsed flags become a typed, frozen :class:`.config.Config` once
(:func:`.config.parse_config`); nothing past the CLI sees the ``argparse.Namespace``.
The values' own parsers (``--max-gap``, ``--lead-in-ms``, ``--preload-languages``) raise
``ValueError``; :func:`flag_type` turns that into argparse's error here, at the flag layer.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from wyoming_omnivoice import __version__
from wyoming_omnivoice.anchors.lazy import DEFAULT_PRELOAD, preload_languages
from wyoming_omnivoice.engine import PRECISIONS, default_num_steps, default_precision
from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.web.options import INGRESS_PROXY, TOKEN_ENV
from wyoming_omnivoice.wyoming_protocol.gap_guard import (
    DEFAULT_LEAD_IN_MS,
    DEFAULT_MAX_GAP_S,
    parse_lead_in_ms,
    parse_max_gap,
)

T = TypeVar("T")


def flag_type(parse: Callable[[str], T], name: str) -> Callable[[str], T]:
    """``parse`` as an argparse ``type``: its ValueError becomes argparse's error (the
    message on one line; ``name`` is what argparse calls the value otherwise)."""
    def parse_flag(value: str) -> T:
        try:
            return parse(value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(one_line(str(err))) from None

    parse_flag.__name__ = name
    return parse_flag


#: ``--max-gap``, ``--lead-in-ms`` and ``--preload-languages`` as argparse reads them.
max_gap_seconds = flag_type(parse_max_gap, "max_gap_seconds")
lead_in_ms = flag_type(parse_lead_in_ms, "lead_in_ms")
preload_languages_flag = flag_type(preload_languages, "preload_languages")

DEFAULT_URI = "tcp://0.0.0.0:10200"
DEFAULT_VOICE = "en-female-young"
#: The default drain on SIGTERM per device: a long reply at the real model size takes 15-60 s
#: on a CPU and a few seconds on a GPU. The deployments' stop timeouts are set above these
#: (Docker and compose: 75 s on the CPU, 30 s on the GPU; the add-on 75 s; Kubernetes: the
#: grace period), so a container stop lets every request in progress finish.
SHUTDOWN_TIMEOUT_S = {"cpu": 60.0, "cuda": 15.0}
MIN_STEPS, MAX_STEPS = 1, 128


@dataclass(frozen=True)
class Bounds:
    """The values a numeric flag takes: ``low`` to ``high`` (None: no upper bound)."""

    low: float
    high: float | None = None
    #: What the low end means, said in the message ("use 0 (never) to 86400").
    low_means: str | None = None

    def problem(self, flag: str, value: float | None) -> str | None:
        """The message for ``value`` out of bounds; None when unset or within them."""
        if value is None:
            return None
        if self.high is None:
            return None if value >= self.low else f"{flag} {value}: must be >= {self.low:g}"
        if self.low <= value <= self.high:
            return None
        low = f"{self.low:g}" + (f" ({self.low_means})" if self.low_means else "")
        return f"{flag} {value}: use {low} to {self.high:g}"


#: Every numeric server flag's bounds, checked once by :func:`.config.validate` in this
#: order (the first value out of bounds is the one reported).
BOUNDS: dict[str, Bounds] = {
    "--num-steps": Bounds(MIN_STEPS, MAX_STEPS),
    "--prefix-cache": Bounds(0, MAX_STEPS, low_means="off, exact"),
    "--guidance-scale": Bounds(0, 10),
    "--samples-per-chunk": Bounds(64, 48000),
    "--max-text-length": Bounds(1),
    "--max-concurrent": Bounds(1),
    "--max-batch-size": Bounds(1, 64),
    "--batch-window-ms": Bounds(0, 10),
    "--read-timeout": Bounds(0.1, 3600),
    "--write-timeout": Bounds(0.1, 3600),
    "--idle-timeout": Bounds(0, 86400, low_means="never"),
    "--max-connections": Bounds(1, 10000),
    "--shutdown-timeout": Bounds(0, 3600),
}


def add_number(parser: argparse.ArgumentParser, flag: str, kind: type[int] | type[float],
               default: float, help: str) -> None:
    """A numeric flag with :data:`BOUNDS` of its own; its help ends with the default."""
    if flag not in BOUNDS:
        raise KeyError(f"{flag}: a numeric flag needs its bounds in BOUNDS")
    parser.add_argument(flag, type=kind, default=default,
                        help=f"{help} (default: %(default)s)")


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
    add_number(parser, "--guidance-scale", float, 2.0,
               "classifier-free guidance scale, 0-10")
    add_number(parser, "--samples-per-chunk", int, 1024,
               "audio samples per audio-chunk event")
    add_number(parser, "--max-text-length", int, 5000,
               "longest text accepted per request, in characters")
    add_number(parser, "--max-concurrent", int, 16,
               "synthesis requests served at once; more get a 'busy' error")
    add_number(parser, "--max-batch-size", int, 8,
               "most requests decoded together in one batch")
    parser.add_argument("--batch-window-ms", type=float, default=5.0,
                        help="how long the worker waits for requests known to be in flight "
                             "to join a batch, 0-10 ms (a lone request never waits; "
                             "default: %(default)s)")
    parser.add_argument("--normalize-text", action=argparse.BooleanOptionalAction,
                        default=True,
                        help="read numbers, dates, times and units as words (a voice can "
                             "override it; default: on)")
    add_number(parser, "--read-timeout", float, 30.0,
               "seconds a client may take to finish sending an event it has started; a "
               "stalled client is disconnected")
    add_number(parser, "--write-timeout", float, 30.0,
               "seconds a client may go without reading the audio sent to it before it is "
               "disconnected")
    add_number(parser, "--idle-timeout", float, 300.0,
               "seconds a connection with nothing in progress may stay silent before it is "
               "closed; 0 keeps idle connections open")
    add_number(parser, "--max-connections", int, 64,
               "most client connections open at once; more are refused with an error event")
    parser.add_argument("--shutdown-timeout", type=float, default=None,
                        help="on SIGTERM/SIGINT, seconds to let requests in progress finish; "
                             "requests still running then get a shutting-down error "
                             "(default: what a long reply takes on the device: "
                             + ", ".join(f"{s:g} on {d.upper()}"
                                         for d, s in SHUTDOWN_TIMEOUT_S.items()) + ")")
    parser.add_argument(
        "--max-gap", type=max_gap_seconds, default=DEFAULT_MAX_GAP_S, metavar="SECONDS",
        help="longest a client waits with nothing to play: while a piece of a reply is "
             "still decoding, short silences are sent inside the audio cycle (satellites "
             f"drop or wedge after 5 s); 0 turns this off (default: {DEFAULT_MAX_GAP_S:g})")
    parser.add_argument(
        "--lead-in-ms", type=lead_in_ms, default=DEFAULT_LEAD_IN_MS, metavar="MS",
        help="silence before each reply's first audio (a stream's: its first sentence's "
             "only), for satellites whose speaker wakes late and clips the first word; 0 "
             f"turns it off (default: {DEFAULT_LEAD_IN_MS})")
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
    parser.add_argument(
        "--check-model", action="store_true",
        help="check the model files (--model-dir, else the one in --data-dir) as the engine "
             "would use them, then exit: each graph's inputs and outputs, the backbone's "
             "patterns, the variant of --precision prepared, the multi-row checks, one "
             "step timed; exit code 1 on any problem (attach its output to a bug report)")
    add_language_arguments(parser)
    parser.add_argument("--debug", action="store_true", help="log DEBUG messages")
    parser.add_argument("--log-format", default=logging.BASIC_FORMAT,
                        help="Python logging format (default: %(default)s)")
    parser.add_argument("--version", action="version", version=__version__)
    add_metrics_arguments(parser)
    add_web_arguments(parser)  # --web-uri, --web-token, --web-ingress (the voice studio)
    return parser


def build_synthesize_parser() -> argparse.ArgumentParser:
    """``python -m wyoming_omnivoice.synthesize``: the server's voice and engine flags and
    its own (text, output, voice design, cloning)."""
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_omnivoice.synthesize",
        description="Synthesize one text with OmniVoice on onnxruntime and write a WAV file.",
    )
    parser.add_argument("--text", help="text to speak")
    parser.add_argument("--output", "-o", type=Path, help="WAV file to write")
    parser.add_argument("--voice", help="a voice of the server's catalogue (see --list-voices)")
    parser.add_argument("--list-voices", action="store_true",
                        help="print the voices (name, languages, description) and exit")
    parser.add_argument("--voices-file", type=Path, help="YAML file with your own presets")
    parser.add_argument("--data-dir", type=Path, default=default_data_dir(),
                        help="the server's data dir: voice folders, anchors, downloaded model "
                             "(default: %(default)s)")
    parser.add_argument("--model-dir", type=Path,
                        help="model folder (default: the model downloaded into --data-dir)")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    parser.add_argument("--language", help="language id or name (e.g. en, English, zh)")
    parser.add_argument("--instruct",
                        help="voice design, e.g. 'female, young adult, british accent'")
    parser.add_argument("--ref-audio", type=Path, help="recording to clone (WAV, FLAC, OGG)")
    parser.add_argument("--ref-codes", type=Path, help=".npy file of reference codes [8, T]")
    parser.add_argument("--ref-text", help="transcript of --ref-audio or --ref-codes")
    parser.add_argument("--speed", type=float, help="speaking speed factor (1.0 = normal)")
    parser.add_argument("--duration", type=float, help="fixed output duration in seconds")
    parser.add_argument("--normalize-text", action=argparse.BooleanOptionalAction,
                        default=True, help="read numbers, dates and units as words, as the "
                                           "server does (default: on)")
    add_engine_arguments(parser)  # --precision, --num-steps, --allow-tf32: the server's
    parser.add_argument("--guidance-scale", type=float, default=2.0)
    parser.add_argument("--seed", type=int, help="random seed (default: random)")
    parser.add_argument("--debug", action="store_true")
    return parser


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """``--precision``, ``--num-steps``, ``--prefix-cache`` and ``--allow-tf32``."""
    parser.add_argument(
        "--precision", choices=PRECISIONS, default="auto",
        help="backbone: fp32 (exact), int8 (CPU, about 3x faster, close), fp16 (GPU), "
             "published (the file as downloaded), auto: "
             f"{default_precision('cpu')} on the CPU, {default_precision('cuda')} on CUDA "
             "(default: %(default)s). Prepared once beside the model at first start.")
    parser.add_argument(
        "--num-steps", type=int, default=None,
        help=f"diffusion steps per decode, {MIN_STEPS}-{MAX_STEPS} (default: "
             f"{default_num_steps('cpu')} on the CPU, {default_num_steps('cuda')} on CUDA; "
             "32 is upstream's and the exact mode's)")
    parser.add_argument(
        "--prefix-cache", type=int, default=0, metavar="N",
        help="experimental, not exact: reuse the text and voice prefix's keys and values "
             "between decode steps, refreshed every N steps (2-128; CPU, int8 or fp32). "
             "Faster; its effect on the sound is not known (docs/performance.md, "
             "\"Prefix cache\"). "
             "0 or 1: the exact decode (default: 0)")
    parser.add_argument(
        "--allow-tf32", action="store_true",
        help="let CUDA multiply fp32 matrices in TF32 (faster on Ampere and later, no "
             "longer exact; default: off)")


def add_language_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--preload-languages", type=preload_languages_flag, default=DEFAULT_PRELOAD,
        metavar="LANGS",
        help="build the voice anchors of these languages before the server is ready "
             "(comma-separated ids such as en,de, 'all' or 'none'); other voices get theirs "
             "on first use (tens of seconds on a CPU) (default: en)")
    parser.add_argument(
        "--canonical-anchors", choices=("auto", "never"), default="auto",
        help="auto: designed voices' anchors are made once in the canonical mode (fp32 "
             "backbone, 32 steps), so every replica and precision speaks the same person; "
             "where memory is short, and with never, they are made at this server's "
             "precision and steps, marked as such (a canonical anchor in the data dir "
             "always wins) (default: %(default)s)")


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    """The metrics and scaling flags."""
    parser.add_argument("--metrics-uri", default=None, metavar="http://HOST:PORT",
                        help="serve Prometheus metrics on this HTTP address, e.g. "
                             "http://0.0.0.0:9464 (path /metrics; default: off)")
    parser.add_argument("--deterministic", action="store_true",
                        help="same request, same audio: each request's random seed comes "
                             "from its voice and text, so every replica answers alike")
    parser.add_argument("--download-only", action="store_true",
                        help="download and verify the model into --data-dir, then exit "
                             "(an init step that fills a shared model volume)")


def add_list_voices_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list-voices", action="store_true",
                        help="print the voices (name, languages, description) from the "
                             "built-in presets, --voices-file and the data dir's voice "
                             "folders, then exit; the model is not loaded")


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """The voice studio and HTTP API flags (checked in ``web/options.py``)."""
    parser.add_argument("--web-uri", default=None, metavar="http://HOST:PORT",
                        help="serve the voice studio page and the HTTP API (studio JSON, "
                             "OpenAI-compatible /v1/audio/speech) on this address, e.g. "
                             "http://127.0.0.1:8099 (default: off; any address other than "
                             "loopback needs --web-token or --web-ingress)")
    parser.add_argument("--web-token", default=None, metavar="TOKEN",
                        help="require this token (Authorization: Bearer TOKEN, or a login in "
                             "the page); needed to bind --web-uri beyond loopback (default: "
                             f"${TOKEN_ENV})")
    parser.add_argument("--web-ingress", action="store_true",
                        help="behind Home Assistant ingress (the add-on): accept only the "
                             "ingress proxy and serve under its X-Ingress-Path")
    parser.add_argument("--web-ingress-proxy", default=INGRESS_PROXY, metavar="ADDRESS",
                        help="the address of the ingress proxy (default: %(default)s, Home "
                             "Assistant's Supervisor)")
