"""Try a voice from a shell: ``python -m wyoming_omnivoice.synthesize --text ... -o out.wav``.

The voice comes from the same catalogue as the server (``--voice NAME``: built-in presets,
``--voices-file``, the voice folders under ``<data-dir>/voices``; ``--list-voices`` prints
them) and is spoken as the server speaks it: a designed voice with its cached anchor, a
cloned voice with its cached clone prompt, the voice's language, speed and text
normalisation. ``--ref-audio FILE --ref-text TEXT`` clones a recording; ``--instruct``
designs a voice on the spot. The output path is checked before the model loads. The flags
become one typed, frozen :class:`SynthesizeConfig` at the parser (like the server's
``Config``); the WAV holds the samples the server sends for the same audio (its PCM
conversion, :func:`wyoming_omnivoice.speech.audio_to_pcm`).

Exit codes: 0 written, 2 a bad flag, file or voice (one ``error:`` line), 1 synthesis failed.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import wave
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wyoming_omnivoice.app.config import num_steps_for
from wyoming_omnivoice.app.flags import BOUNDS, build_synthesize_parser, default_data_dir
from wyoming_omnivoice.engine import DecodeOptions, Engine, ModelError, SynthesisRequest
from wyoming_omnivoice.errors import StartupError, one_line
from wyoming_omnivoice.speech import CHANNELS, SAMPLE_WIDTH, audio_to_pcm

if TYPE_CHECKING:
    from wyoming_omnivoice.voices.catalog import VoicePreset


@dataclass(frozen=True)
class SynthesizeConfig:
    """Every flag of the synthesize CLI (the field names are the flags' ``dest`` names)."""

    text: str | None = None
    output: Path | None = None
    voice: str | None = None
    list_voices: bool = False
    voices_file: Path | None = None
    data_dir: Path = field(default_factory=default_data_dir)
    model_dir: Path | None = None
    device: str = "auto"
    language: str | None = None
    instruct: str | None = None
    ref_audio: Path | None = None
    ref_codes: Path | None = None
    ref_text: str | None = None
    speed: float | None = None
    duration: float | None = None
    normalize_text: bool = True
    precision: str = "auto"
    num_steps: int | None = None
    prefix_cache: int = 0
    allow_tf32: bool = False
    guidance_scale: float = 2.0
    seed: int | None = None
    debug: bool = False


def parse_synthesize_config(argv: Sequence[str] | None = None) -> SynthesizeConfig:
    """The command line as a :class:`SynthesizeConfig` (argparse exits on a malformed
    flag)."""
    return config_of(build_synthesize_parser().parse_args(argv))


def config_of(namespace: argparse.Namespace) -> SynthesizeConfig:
    """The parsed flags as the typed config; nothing past here sees the namespace."""
    return SynthesizeConfig(**vars(namespace))


def write_wav(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    """Write float audio as 16-bit mono PCM: the samples the server sends (rounded)."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(CHANNELS)
        out.setsampwidth(SAMPLE_WIDTH)
        out.setframerate(sample_rate)
        out.writeframes(audio_to_pcm(audio))


def check_args(args: SynthesizeConfig) -> None:
    """Every flag checked before the model loads; StartupError naming the fix."""
    if args.text is None or args.output is None:
        raise StartupError("--text and --output are needed (or --list-voices)")
    check_output_path(args.output)
    for flag in ("--num-steps", "--prefix-cache"):
        problem = BOUNDS[flag].problem(flag, getattr(args, flag[2:].replace("-", "_")))
        if problem is not None:
            raise StartupError(problem)
    sources = [flag for flag, value in (("--voice", args.voice), ("--ref-audio", args.ref_audio),
                                        ("--ref-codes", args.ref_codes)) if value is not None]
    if len(sources) > 1:
        raise StartupError(f"{' and '.join(sources)}: pick one voice source")
    if args.voice is not None and args.instruct is not None:
        raise StartupError("--voice and --instruct: a preset has its own design; pass one")
    for flag, path in (("--ref-audio", args.ref_audio), ("--ref-codes", args.ref_codes),
                       ("--voices-file", args.voices_file), ("--model-dir", args.model_dir)):
        if path is not None and not path.exists():
            raise StartupError(f"{flag} {path}: no such file or folder")
    if (args.ref_audio or args.ref_codes) is not None and not (args.ref_text or "").strip():
        raise StartupError("--ref-text: give the words spoken in the reference recording")


def check_output_path(path: Path) -> None:
    """The WAV can be written: its folder exists and is writable, it is not a folder."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise StartupError(f"--output {path} is a folder; give a file name, e.g. {path}/out.wav")
    if not folder.is_dir():
        raise StartupError(f"--output {path}: the folder {folder} does not exist; create it "
                           f"(mkdir -p {folder}) or write elsewhere")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists()
                                                     and not os.access(path, os.W_OK)):
        raise StartupError(f"--output {path}: not writable by this user; write elsewhere")


def main(argv: list[str] | None = None) -> int:
    args = parse_synthesize_config(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    if args.list_voices:
        from wyoming_omnivoice.voices.listing import list_voices

        return list_voices(args.data_dir, args.voices_file)
    try:
        check_args(args)
        assert args.text is not None and args.output is not None
        preset = None
        if args.voice is not None:
            from wyoming_omnivoice.voices.gather import gather_voices

            catalog, problems, _folders = gather_voices(args.data_dir, args.voices_file)
            preset = catalog.get(args.voice)
            if preset is None:
                own = [p.message for p in problems if p.name == args.voice]
                raise StartupError(f"--voice {args.voice!r}: " + (
                    one_line(own[0]) if own else
                    f"not a known voice; available: {', '.join(catalog.names)}"))
        engine, model_dir = _load_engine(args, cloning=args.ref_audio is not None
                                         or (preset is not None and preset.is_cloned))
        options = DecodeOptions(num_step=num_steps_for(args.num_steps, engine.device),
                                guidance_scale=args.guidance_scale)
        request = _build_request(args, args.text, engine, model_dir, preset, options)
        started = time.perf_counter()
        audio = engine.synthesize_batch(
            [request], options=replace(options, prefix_cache=args.prefix_cache))[0]
        elapsed = time.perf_counter() - started
        write_wav(args.output, audio, engine.sample_rate)
    except StartupError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (ModelError, ValueError, OSError) as err:
        print(f"error: {one_line(str(err))}", file=sys.stderr)
        return 1
    seconds = len(audio) / engine.sample_rate
    print(f"wrote {args.output}: {seconds:.2f} s of audio in {elapsed:.2f} s "
          f"(RTF {elapsed / max(seconds, 1e-9):.3f}) on {engine.device}")
    return 0


def _load_engine(args: SynthesizeConfig, *, cloning: bool) -> tuple[Engine, Path]:
    """The engine, and the model folder it loaded (the anchor maker's fp32 engine loads
    the same one)."""
    from wyoming_omnivoice.app import startup

    if args.model_dir is None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    model_dir = startup.resolve_model_dir(args.model_dir, args.data_dir, None,
                                          include_cloning=cloning)
    engine = startup.load_engine(model_dir, args.device, args.precision,
                                 allow_tf32=args.allow_tf32, cache_dir=args.data_dir,
                                 prefix_cache=args.prefix_cache)
    return engine, model_dir


def _build_request(args: SynthesizeConfig, text: str, engine: Engine, model_dir: Path,
                   preset: VoicePreset | None, options: DecodeOptions) -> SynthesisRequest:
    """The request: a catalogue voice as the server builds it, or the flags as given."""
    num_frames = None if args.duration is None else max(1, int(args.duration * 25))
    if preset is not None:
        from wyoming_omnivoice.anchors.plan import anchor_maker
        from wyoming_omnivoice.speech import make_request_factory
        from wyoming_omnivoice.voices.assets import prepare_voices
        from wyoming_omnivoice.voices.catalog import VoiceCatalog
        from wyoming_omnivoice.voices.library import VoiceLibrary

        # The server's own preparation: the same anchor cache (same key, canonical where
        # there is room) and clone prompts; anchors exact.
        maker = anchor_maker("auto", engine, options, model_dir, args.data_dir,
                             allow_tf32=args.allow_tf32)
        served, assets = prepare_voices(engine, VoiceCatalog([preset]), preset.name,
                                        args.data_dir, options, batch_size=1, maker=maker)
        voices = VoiceLibrary(served, preset.name, assets)
        request = make_request_factory(voices, args.normalize_text)(preset, text)
        return replace(request, num_frames=num_frames, seed=args.seed,
                       speed=args.speed if args.speed is not None else request.speed,
                       language=args.language or request.language)
    ref_codes = ref_rms = None
    ref_text = args.ref_text
    if args.ref_audio is not None:
        from wyoming_omnivoice.voices import cloned as cloned_voices
        from wyoming_omnivoice.voices.assets import CLONE_PROMPT_CACHE
        from wyoming_omnivoice.voices.reference import CloneReference

        reference = CloneReference(args.ref_audio, args.ref_text)
        spec = cloned_voices.ClonedVoiceSpec(name="synthesize-ref", reference=reference)
        prompt = cloned_voices.load_clone_prompt(engine, spec,
                                                 args.data_dir / CLONE_PROMPT_CACHE)
        ref_codes, ref_text, ref_rms = prompt.codes, prompt.text, prompt.rms
    elif args.ref_codes is not None:
        ref_codes = np.load(args.ref_codes)
    return SynthesisRequest(text=text, language=args.language, instruct=args.instruct,
                            ref_text=ref_text, ref_codes=ref_codes, ref_rms=ref_rms,
                            speed=args.speed, num_frames=num_frames, seed=args.seed)


if __name__ == "__main__":
    sys.exit(main())
