"""Start-up steps between the validated flags and a loaded engine: voices, model, engine.

Each step raises :class:`.errors.StartupError` with one clear message when the server
cannot start: a bad default voice, an unusable model, a device that fails. A bad voice that
is not the default costs only itself: one error line, and it is not served.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_omnivoice.errors import StartupError, one_line
from wyoming_omnivoice.model.memory_room import check_start_memory
from wyoming_omnivoice.voices.catalog import VoiceCatalog
from wyoming_omnivoice.voices.config import VoiceProblem
from wyoming_omnivoice.voices.gather import gather_voices

if TYPE_CHECKING:
    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.app.config import Config

_LOGGER = logging.getLogger("wyoming_omnivoice")

_CPU_FALLBACK = ("Loading the model on the GPU failed: %s. --device auto: FALLING BACK TO THE "
                 "CPU, synthesis will be much slower. Fix the GPU setup, or pass --device cpu "
                 "to silence this.")


def load_catalog(config: Config) -> tuple[VoiceCatalog, set[str]]:
    """Built-in presets, folder voices under <data-dir>/voices, then --voices-file.

    Returns the catalog and the names of the voice folders that were skipped (each logged
    once). StartupError when the default voice (--voice) is missing or broken.
    """
    catalog, problems, folder_problems = gather_voices(config.data_path, config.voices_file)
    for problem in problems:
        if problem.name != config.voice:  # the default's own problem is the start-up error
            _LOGGER.error("Voice skipped: %s", one_line(problem.message))
    if config.voice not in catalog:
        raise StartupError(_default_voice_problem(config.voice, catalog, problems))
    return catalog, {folder.name for folder in folder_problems}


def _default_voice_problem(voice: str, catalog: VoiceCatalog,
                           problems: list[VoiceProblem]) -> str:
    own = [problem for problem in problems if problem.name == voice]
    if own:
        return f"The default voice (--voice {voice!r}) cannot be used: {own[0].message}"
    message = f"--voice {voice!r} is not a known voice. Available: {', '.join(catalog.names)}"
    if any(problem.name is None for problem in problems):
        message += " (and voices skipped for the reasons logged above)"
    return message


def resolve_model_dir(model_dir: Path | None, data_dir: Path, manifest: Path | None, *,
                      include_cloning: bool) -> Path:
    """--model-dir checked as is, or the model downloaded and verified into --data-dir."""
    from wyoming_omnivoice.engine import ModelError
    from wyoming_omnivoice.model import download

    try:
        if model_dir is not None:
            download.check_model_dir(model_dir, include_cloning=include_cloning)
            return model_dir
        return download.ensure_model(data_dir, include_cloning=include_cloning,
                                     manifest=manifest)
    except ModelError as err:
        raise StartupError(str(err)) from None
    except OSError as err:  # a disk that fails under the model folder: one line, no trace
        raise StartupError(f"Cannot use the model folder: {err}. Free space or fix the "
                           "disk, then start again.") from None


def load_engine(model_dir: Path, device: str, precision: str = "auto", *,
                allow_tf32: bool = False, cache_dir: Path | None = None,
                prefix_cache: int = 0) -> Engine:
    """Load the engine; with ``--device auto`` a GPU that fails falls back to the CPU, loudly.

    ``precision`` ``auto`` takes the default of the device the engine lands on (so a
    fallback to the CPU runs the CPU's); a missing prepared backbone is prepared first
    (beside the model, or under ``cache_dir`` when the model folder is read-only).

    onnxruntime itself falls back to the CPU when the CUDA provider cannot start (missing
    CUDA/cuDNN libraries, no usable GPU) and only prints a notice; so the device the engine
    really uses is checked. ``--device cuda`` never falls back: the user asked for the GPU,
    so its failure stops the start with the reason.
    """
    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.engine import ModelError, choose_providers, default_precision

    wanted_gpu = device == "cuda" or (device == "auto"
                                      and choose_providers("auto").device == "cuda")
    if not wanted_gpu:  # before the heavy work: one line instead of a kernel kill
        check_start_memory(model_dir, default_precision("cpu") if precision == "auto"
                           else precision)
    try:
        engine = Engine.load(model_dir, device=device, precision=precision,
                             allow_tf32=allow_tf32, cache_dir=cache_dir,
                             prefix_cache=prefix_cache)
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
    check_start_memory(model_dir, default_precision("cpu") if precision == "auto" else precision)
    try:
        return Engine.load(model_dir, device="cpu", precision=precision,
                           cache_dir=cache_dir, prefix_cache=prefix_cache)
    except (ModelError, ValueError, RuntimeError) as err:
        raise StartupError(str(err)) from None
