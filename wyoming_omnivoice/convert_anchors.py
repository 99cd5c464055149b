"""``python -m wyoming_omnivoice.convert MODEL_DIR --anchors LANGS --data-dir DIR``:
canonical voice anchors made ahead of time.

A server makes canonical anchors itself where it has the memory for the fp32 backbone; a
small host makes serving-precision ones instead (:mod:`.anchors.plan`). This makes
the canonical anchors of the designed voices of ``LANGS`` (comma-separated language ids,
``all``, or voice names) on a machine that has the memory, into ``DIR/anchors/``, in the
cache format every server reads: copy that folder's files into each replica's
``<data-dir>/anchors/`` (or share the data dir), and they are loaded instead of made,
replacing serving-precision anchors of the same voices (at start-up, and while running
within seconds of a ``describe``). The voices are read like the server reads them
(built-in, ``DIR``'s studio voices and voice folders, ``--voices-file``). The flags become
a typed, frozen :class:`AnchorsConfig` at the parser (:meth:`AnchorsConfig.from_flags`).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.templates import ALL


def add_anchor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--anchors", default=None, metavar="LANGS",
                        help="make the canonical anchors (fp32, 32 steps) of the designed "
                             "voices of these languages (comma-separated ids, 'all', or "
                             "voice names) into DATA_DIR/anchors; nothing else is done")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="with --anchors: the data dir to write anchors/ into (and to "
                             "read studio voices and voice folders from)")
    parser.add_argument("--voices-file", type=Path, default=None,
                        help="with --anchors: the servers' --voices-file")
    parser.add_argument("--batch-size", type=int, default=8,
                        help="with --anchors: anchors decoded at once (default 8)")


@dataclass(frozen=True)
class AnchorsConfig:
    """``--anchors``: what to make (``wanted``: languages, ``all`` or voice names), where
    (``data_dir``), from which model, on which device, how many at once."""

    model_dir: Path
    wanted: str
    data_dir: Path
    voices_file: Path | None = None
    batch_size: int = 8
    device: str = "cpu"

    @classmethod
    def from_flags(cls, args: argparse.Namespace) -> AnchorsConfig:
        """The parsed flags, checked once (``SystemExit`` naming the flag to give)."""
        if args.data_dir is None:
            raise SystemExit("--anchors needs --data-dir DIR (the anchors go to DIR/anchors)")
        return cls(model_dir=args.model_dir, wanted=str(args.anchors),
                   data_dir=Path(args.data_dir), voices_file=args.voices_file,
                   batch_size=args.batch_size, device=args.device)


def chosen_voices(catalog: list[VoicePreset], wanted: str) -> list[VoicePreset]:
    """The designed voices (with a made anchor: not pinned) that ``wanted`` names."""
    from wyoming_omnivoice.engine import strict_language
    items = [item.strip() for item in wanted.split(",") if item.strip()]
    names = {preset.name for preset in catalog}
    languages: set[str] = set()
    voices: set[str] = set()
    for item in items:
        if item.casefold() == ALL:
            languages.add(ALL)
        elif item in names:
            voices.add(item)
        else:
            try:
                language = strict_language(item)
            except ValueError as err:
                raise SystemExit(f"--anchors {wanted}: {err}") from None
            if language is None:
                raise SystemExit(f"--anchors {wanted}: {item!r} is no language or voice")
            languages.add(language)
    return [preset for preset in catalog
            if preset.uses_anchor and preset.anchor_file is None
            and (ALL in languages or preset.language in languages or preset.name in voices)]


def run_anchors(config: AnchorsConfig) -> int:
    """Make the canonical anchors ``--anchors`` names; prints where they are."""
    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.anchors.maker import canonical_options, serving_maker
    from wyoming_omnivoice.voices.assets import anchor_cache
    from wyoming_omnivoice.voices.gather import gather_voices

    data_dir = config.data_dir
    catalog, problems, _folders = gather_voices(data_dir, config.voices_file)
    for problem in problems:
        print(f"voice skipped: {problem.message}")
    presets = chosen_voices(list(catalog), config.wanted)
    if not presets:
        raise SystemExit(f"--anchors {config.wanted}: no designed voice of these languages")
    engine = Engine.load(config.model_dir, device=config.device, precision="fp32",
                         cache_dir=data_dir)
    options = canonical_options()
    maker = serving_maker(engine, options)
    cache = anchor_cache(engine, data_dir, maker, options)
    began = time.perf_counter()
    anchors = cache.ensure_all(presets, maker.codes_on(engine), batch_size=config.batch_size)
    made = [name for name, anchor in anchors.items() if anchor.kind == "canonical"]
    print(f"{len(made)} canonical anchor(s) in {cache.directory} "
          f"({time.perf_counter() - began:.1f} s on {engine.device}); copy the folder's "
          "files into each server's <data-dir>/anchors/")
    return 0 if len(made) == len(presets) else 1
