"""Try the engine from a shell: ``python -m wyoming_omnivoice.synthesize --text ... -o out.wav``."""

from __future__ import annotations

import argparse
import logging
import sys
import time
import wave
from pathlib import Path

import numpy as np

from .engine.core import Engine
from .engine.decoder import DecodeOptions
from .engine.model_files import ModelError


def write_wav(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    """Write float audio as 16-bit mono PCM."""
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.tobytes())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_omnivoice.synthesize",
        description="Synthesize one text with OmniVoice on onnxruntime and write a WAV file.",
    )
    parser.add_argument("--model-dir", required=True, type=Path, help="model directory")
    parser.add_argument("--text", required=True, help="text to speak")
    parser.add_argument("--output", "-o", required=True, type=Path, help="WAV file to write")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"])
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16"])
    parser.add_argument("--language", help="language id or name (e.g. en, English, zh)")
    parser.add_argument("--instruct",
                        help="voice design, e.g. 'female, young adult, british accent'")
    parser.add_argument("--ref-codes", type=Path, help=".npy file of reference codes [8, T]")
    parser.add_argument("--ref-text", help="transcript of the reference codes")
    parser.add_argument("--speed", type=float, help="speaking speed factor (1.0 = normal)")
    parser.add_argument("--duration", type=float, help="fixed output duration in seconds")
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--guidance-scale", type=float, default=2.0)
    parser.add_argument("--seed", type=int, help="random seed (default: random)")
    parser.add_argument("--debug", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        engine = Engine.load(args.model_dir, device=args.device, precision=args.precision)
        ref_codes = np.load(args.ref_codes) if args.ref_codes else None
        options = DecodeOptions(num_step=args.num_steps, guidance_scale=args.guidance_scale)
        started = time.perf_counter()
        num_frames = None if args.duration is None else max(1, int(args.duration * 25))
        audio = engine.synthesize(
            args.text, language=args.language, instruct=args.instruct,
            ref_text=args.ref_text, ref_codes=ref_codes, speed=args.speed,
            num_frames=num_frames, options=options, seed=args.seed,
        )
        elapsed = time.perf_counter() - started
    except (ModelError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    write_wav(args.output, audio, engine.sample_rate)
    seconds = len(audio) / engine.sample_rate
    print(f"wrote {args.output}: {seconds:.2f} s of audio in {elapsed:.2f} s "
          f"(RTF {elapsed / max(seconds, 1e-9):.3f}) on {engine.device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
