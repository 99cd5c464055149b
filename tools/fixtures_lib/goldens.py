"""Run upstream OmniVoice (torch, CPU, fp32) through its own code path and record goldens.

Each case goes through ``OmniVoice._preprocess_all`` (language resolution, instruct
normalisation, duration estimate) and ``OmniVoice._generate_iterative`` (prompt building,
batch layout, CFG, schedule, unmasking) exactly as ``generate`` calls them for short
texts, in deterministic mode (``position_temperature=0``, ``class_temperature=0``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from .unmask_observer import UnmaskObserver

logger = logging.getLogger(__name__)

FRAME_RATE = 25


@dataclass(frozen=True)
class Prompt:
    """One synthesis request as the engine API would receive it."""

    name: str
    text: str
    language: str | None = None
    instruct: str | None = None
    ref_text: str | None = None
    #: (frames, seed) of a random reference code grid, or None without cloning.
    ref_codes: tuple[int, int] | None = None
    num_frames: int | None = None
    speed: float | None = None
    #: Per-prompt option overrides on top of the config (e.g. denoise=False).
    overrides: dict[str, Any] = field(default_factory=dict)


PROMPTS: tuple[Prompt, ...] = (
    Prompt("auto", "hello world"),
    Prompt("lang_id", "The quick brown fox jumps over the lazy dog.", language="en"),
    Prompt("lang_name", "Good morning, how are you today?", language="English"),
    Prompt(
        "voice_design",
        "Please turn off the kitchen lights.",
        language="en",
        instruct="Female, Young Adult, High Pitch, British Accent",
    ),
    Prompt("zh_en_instruct", "你好，世界！这是一个测试。", language="zh",
           instruct="female, low pitch"),
    Prompt("nonverbal", "That was funny [laughter] okay, back to work. [sigh]", language="en"),
    Prompt(
        "clone",
        "Tomorrow will be sunny and warm.",
        language="en",
        ref_text="Nice to meet you.",
        ref_codes=(30, 11),
    ),
    Prompt(
        "clone_instruct",
        "This is cloned speech with a style.",
        ref_text="这是参考音频。",
        ref_codes=(22, 12),
        instruct="male, whisper",
    ),
    Prompt(
        "clone_no_denoise",
        "Denoise is off for this one.",
        language="en",
        ref_text="A short reference.",
        ref_codes=(18, 13),
        overrides={"denoise": False},
    ),
    Prompt("fixed_frames", "Short fixed length.", language="en", num_frames=40),
    Prompt("speed", "hello world", speed=1.5),
    Prompt("combine_text", "Hello  world.\nHow are\tyou?（测试） ok", language="Chinese"),
    Prompt("unknown_lang", "Language EN is not an id.", language="EN"),
)

CONFIGS: tuple[dict[str, Any], ...] = (
    {"num_step": 32, "guidance_scale": 2.0, "t_shift": 0.1, "layer_penalty_factor": 5.0},
    {"num_step": 12, "guidance_scale": 3.0, "t_shift": 0.3, "layer_penalty_factor": 2.0},
    {"num_step": 8, "guidance_scale": 0.0, "t_shift": 0.5, "layer_penalty_factor": 5.0},
)

DETERMINISTIC = {"position_temperature": 0.0, "class_temperature": 0.0, "denoise": True}

#: Batched runs: (config index, prompt names). Items of one batch must be all-clone or
#: all-no-clone (upstream takes the reference list from the first item).
BATCHES: tuple[tuple[int, tuple[str, ...]], ...] = (
    (0, ("auto", "voice_design", "zh_en_instruct", "nonverbal")),
    (1, ("clone", "clone_instruct")),
)


def ref_code_grid(frames: int, seed: int) -> list[list[int]]:
    """A reproducible random reference code grid [8, frames] in 0..1023."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.integers(0, 1024, size=(8, frames)).tolist()


def _options(config: dict[str, Any], prompt: Prompt) -> dict[str, Any]:
    options = dict(DETERMINISTIC)
    options.update(config)
    options.update(prompt.overrides)
    return options


def _preprocess(model, prompts: list[Prompt], options: dict[str, Any]):
    """Call upstream ``_preprocess_all`` for a list of prompts (one batch)."""
    import torch

    ov = __import__("omnivoice.models.omnivoice", fromlist=["VoiceClonePrompt"])
    clone = [p.ref_codes is not None for p in prompts]
    if any(clone) and not all(clone):
        raise ValueError("a batch must be all-clone or all-no-clone")
    voice_prompts = None
    if all(clone):
        voice_prompts = [
            ov.VoiceClonePrompt(
                ref_audio_tokens=torch.tensor(ref_code_grid(*p.ref_codes), dtype=torch.long),
                ref_text=p.ref_text,
                ref_rms=0.1,
            )
            for p in prompts
        ]
    durations = [
        None if p.num_frames is None else p.num_frames / FRAME_RATE for p in prompts
    ]
    speeds = [p.speed for p in prompts]
    return model._preprocess_all(
        text=[p.text for p in prompts],
        language=[p.language for p in prompts],
        voice_clone_prompt=voice_prompts,
        instruct=[p.instruct for p in prompts],
        preprocess_prompt=True,
        speed=speeds if any(s is not None for s in speeds) else None,
        duration=durations if any(d is not None for d in durations) else None,
    )


def run_case(model, prompt: Prompt, config: dict[str, Any]) -> dict[str, Any]:
    """Run one prompt alone and return its JSON record."""
    import torch

    ov = __import__("omnivoice.models.omnivoice", fromlist=["OmniVoiceGenerationConfig"])
    options = _options(config, prompt)
    gen_config = ov.OmniVoiceGenerationConfig.from_dict(options)
    with torch.inference_mode(), UnmaskObserver(model) as seen:
        task = _preprocess(model, [prompt], options)
        inputs = model._prepare_inference_inputs(
            task.texts[0], task.target_lens[0], task.ref_texts[0],
            task.ref_audio_tokens[0], task.langs[0], task.instructs[0], gen_config.denoise,
        )
        codes = model._generate_iterative(task, gen_config)[0]
    frames = int(task.target_lens[0])
    if prompt.num_frames is not None and frames != prompt.num_frames:
        raise RuntimeError(f"{prompt.name}: upstream gave T={frames}, not {prompt.num_frames}")
    input_ids = inputs["input_ids"][0]
    audio_mask = inputs["audio_mask"][0]
    return {
        "name": prompt.name,
        "inputs": {
            "text": prompt.text,
            "language": prompt.language,
            "instruct": prompt.instruct,
            "ref_text": prompt.ref_text,
            "ref_codes": None if prompt.ref_codes is None else ref_code_grid(*prompt.ref_codes),
            "num_frames": prompt.num_frames,
            "speed": prompt.speed,
        },
        "options": options,
        "resolved_language": task.langs[0],
        "normalized_instruct": task.instructs[0],
        "num_frames": frames,
        # Cells unmasked at each step, observed while upstream's loop ran.
        "schedule": seen.runs[-1].counts[0],
        "input_ids": input_ids[0].tolist(),
        "audio_mask": [int(v) for v in audio_mask.tolist()],
        "codes": codes.tolist(),
        # Sanity facts: rows 1..7 equal row 0 outside the audio span.
        "audio_start": int(audio_mask.int().argmax()),
        "cond_len": int(input_ids.shape[-1]),
    }


def run_batch(model, prompts: list[Prompt], config: dict[str, Any]) -> dict[str, Any]:
    """Run several prompts in one upstream batch (right-padded 2B rows)."""
    import torch

    ov = __import__("omnivoice.models.omnivoice", fromlist=["OmniVoiceGenerationConfig"])
    options = _options(config, prompts[0])
    gen_config = ov.OmniVoiceGenerationConfig.from_dict(options)
    with torch.inference_mode():
        task = _preprocess(model, prompts, options)
        codes = model._generate_iterative(task, gen_config)
    return {
        "names": [p.name for p in prompts],
        "options": options,
        "num_frames": [int(t) for t in task.target_lens],
        "codes": [c.tolist() for c in codes],
    }


def record_codes(model) -> dict[str, Any]:
    """All single cases (PROMPTS x CONFIGS) plus the batched runs."""
    cases = []
    for config_index, config in enumerate(CONFIGS):
        for prompt in PROMPTS:
            record = run_case(model, prompt, config)
            record["config"] = config_index
            cases.append(record)
            logger.info("golden %s/config %d: T=%d", prompt.name, config_index,
                        record["num_frames"])
    by_name = {p.name: p for p in PROMPTS}
    batches = []
    for config_index, names in BATCHES:
        batch = run_batch(model, [by_name[n] for n in names], CONFIGS[config_index])
        batch["config"] = config_index
        solo = {
            c["name"]: c["codes"] for c in cases if c["config"] == config_index
        }
        batch["equals_single"] = [
            batch["codes"][i] == solo[name] for i, name in enumerate(names)
        ]
        batches.append(batch)
        logger.info("golden batch %s: equals single %s", names, batch["equals_single"])
    return {"cases": cases, "batches": batches}


#: Frames of the codec goldens (0.48 s).
CODEC_FRAMES = 12


def synthetic_wave(num_samples: int, sample_rate: int):
    """Deterministic test tone (float32), regenerable in the tests with plain numpy:
    0.3 sin(2 pi 220 t) + 0.15 sin(2 pi 1330 t + 0.5) + 0.05 sin(2 pi 3100 t), t = n / sr."""
    import numpy as np

    t = np.arange(num_samples, dtype=np.float64) / sample_rate
    wave = (
        0.3 * np.sin(2 * np.pi * 220.0 * t)
        + 0.15 * np.sin(2 * np.pi * 1330.0 * t + 0.5)
        + 0.05 * np.sin(2 * np.pi * 3100.0 * t)
    )
    return wave.astype(np.float32)


def _round_list(values) -> list[float]:
    return [float(f"{float(v):.7g}") for v in values]


def record_codec(codec) -> dict[str, Any]:
    """Torch codec goldens: upstream's decode of one code grid, and the encoder chain
    (acoustic, semantic, quantizer modules) on a test tone at 24 kHz / 16 kHz."""
    import numpy as np
    import torch

    from .higgs import HOP, make_export_modules

    codes = ref_code_grid(CODEC_FRAMES, 21)
    with torch.no_grad():
        # Upstream _decode_and_post_process: audio_tokenizer.decode(tokens[None]).audio_values[0]
        audio = codec.decode(torch.tensor([codes], dtype=torch.long)).audio_values[0]
    audio = audio.numpy()
    modules = make_export_modules(codec)
    wave_24k = synthetic_wave(CODEC_FRAMES * HOP, 24000)
    wave_16k = synthetic_wave(CODEC_FRAMES * 640, 16000)
    with torch.no_grad():
        acoustic = modules["acoustic_encoder"](torch.from_numpy(wave_24k)[None, None])
        semantic = modules["semantic_encoder"](torch.from_numpy(wave_16k)[None])
        frames = min(acoustic.shape[-1], semantic.shape[-1])
        enc_codes = modules["quantizer_encoder"](
            acoustic[..., :frames], semantic[..., :frames]
        )
    return {
        "vocoder": {
            "codes": codes,
            "num_samples": int(audio.shape[-1]),
            "peak": float(np.abs(audio).max()),
            "rms": float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))),
            "waveform": _round_list(audio[0]),
        },
        "encoder": {
            "wave": "0.3 sin(2 pi 220 t) + 0.15 sin(2 pi 1330 t + 0.5) + 0.05 sin(2 pi 3100 t)",
            "num_samples_24k": int(wave_24k.shape[0]),
            "num_samples_16k": int(wave_16k.shape[0]),
            "acoustic_shape": list(acoustic.shape),
            "semantic_shape": list(semantic.shape),
            "acoustic_mean_abs": float(acoustic.abs().mean()),
            "semantic_mean_abs": float(semantic.abs().mean()),
            "codes": enc_codes[:, 0, :].tolist(),
        },
    }
