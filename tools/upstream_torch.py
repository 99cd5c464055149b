"""Upstream OmniVoice in torch on a model directory's saved upstream weights, with timing hooks
on the backbone: the side by side of ``benchmarks/bench_engine.py`` and the GPU check
(``tools/gpu/upstream.py``). Dev-only: needs torch and upstream ``omnivoice``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions

#: What the first (untimed) decode says: first calls pay one-off costs.
WARM_UP_TEXT = "The living room lights are on and it is 21 degrees inside."


class Upstream:
    """Upstream OmniVoice in torch, with timing hooks on the backbone."""

    def __init__(self, upstream_dir: Path, device: str, threads: int | None) -> None:
        import torch

        from tools.fixtures_lib.upstream import import_upstream

        self.torch = torch
        if threads:
            torch.set_num_threads(threads)
        self.ov = import_upstream()
        logging.getLogger("transformers").setLevel(logging.ERROR)
        self.model = self.ov.OmniVoice.from_pretrained(str(upstream_dir)).float().eval()
        self.device = "cuda" if device == "cuda" and torch.cuda.is_available() else "cpu"
        self.model.to(self.device)
        self.backbone_s = 0.0
        self._start = 0.0

        def pre(*_a: Any, **_k: Any) -> None:
            self._sync()
            self._start = time.perf_counter()

        def post(*_a: Any, **_k: Any) -> None:
            self._sync()
            self.backbone_s += time.perf_counter() - self._start

        self.model.llm.register_forward_pre_hook(pre)
        self.model.llm.register_forward_hook(post)
        # First calls pay one-off costs (allocator, kernels): warm before timing.
        self.codes([WARM_UP_TEXT], DecodeOptions(num_step=2))

    def _sync(self) -> None:
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def config(self, options: DecodeOptions) -> Any:
        return self.ov.OmniVoiceGenerationConfig(
            num_step=options.num_step, guidance_scale=options.guidance_scale,
            t_shift=options.t_shift, layer_penalty_factor=options.layer_penalty_factor,
            position_temperature=options.position_temperature,
            class_temperature=options.class_temperature, denoise=options.denoise,
        )

    def codes(self, texts: list[str], options: DecodeOptions, seed: int = 0
              ) -> tuple[list[np.ndarray], float, float]:
        """``_generate_iterative`` on a batch: codes, seconds, backbone seconds."""
        torch = self.torch
        with torch.inference_mode():
            task = self.model._preprocess_all(
                text=texts, language=[None] * len(texts), voice_clone_prompt=None,
                instruct=[None] * len(texts), preprocess_prompt=True, speed=None,
                duration=None,
            )
            torch.manual_seed(seed)
            self.backbone_s = 0.0
            start = time.perf_counter()
            codes = self.model._generate_iterative(task, self.config(options))
            self._sync()
            took = time.perf_counter() - start
        return [c.cpu().numpy() for c in codes], took, self.backbone_s

    def generate(self, text: str, options: DecodeOptions) -> tuple[np.ndarray, float]:
        with self.torch.inference_mode():
            start = time.perf_counter()
            audio = self.model.generate(text=text, generation_config=self.config(options))
            self._sync()
            return np.asarray(audio[0]).reshape(-1), time.perf_counter() - start

    def backbone_forward(self, batch: int, length: int, hidden: int) -> float:
        torch = self.torch
        embeds = torch.randn(batch, length, hidden, device=self.device)
        mask = torch.ones(batch, 1, length, length, dtype=torch.bool, device=self.device)
        with torch.inference_mode():
            self._sync()
            start = time.perf_counter()
            self.model.llm(inputs_embeds=embeds, attention_mask=mask)
            self._sync()
        return time.perf_counter() - start
