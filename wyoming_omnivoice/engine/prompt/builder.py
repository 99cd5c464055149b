"""The conditional prompt: style tokens, text tokens, reference codes and MASK targets.

Follows upstream ``_prepare_inference_inputs``: the style string (optional ``<|denoise|>``,
language, instruct) is tokenized in one call, the text (``combine_text`` of the reference
and target text, wrapped in ``<|text_start|>``/``<|text_end|>``) is tokenized piece by piece
around non-verbal tags, token ids are repeated over the 8 codebook rows, reference codes fill
their rows, and the target frames start as MASK.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.prompt.text_rules import combine_text, split_nonverbal
from wyoming_omnivoice.engine.store.model_files import ModelError

SPECIAL_TOKENS = (
    "<|denoise|>",
    "<|lang_start|>",
    "<|lang_end|>",
    "<|instruct_start|>",
    "<|instruct_end|>",
    "<|text_start|>",
    "<|text_end|>",
)


@dataclass(frozen=True)
class Prompt:
    """One conditional row: ``ids`` int64 ``[8, S]`` where the last ``num_target`` columns
    are the target frames and ``audio_start`` is the first audio (reference or target)
    column, from which ``audio_mask`` is True."""

    ids: np.ndarray
    audio_start: int
    num_target: int

    @property
    def length(self) -> int:
        return int(self.ids.shape[1])

    @property
    def audio_mask(self) -> np.ndarray:
        mask = np.zeros(self.length, dtype=bool)
        mask[self.audio_start:] = True
        return mask


class PromptBuilder:
    """Turns text, language, instruct and reference codes into a :class:`Prompt`."""

    def __init__(self, tokenizer_path: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as err:
            raise ModelError(
                f"Could not read {tokenizer_path}: {err}. Download tokenizer.json from "
                "onnx-community/OmniVoice-Onnx again."
            ) from err
        missing = [t for t in SPECIAL_TOKENS if self.tokenizer.token_to_id(t) is None]
        if missing:
            raise ModelError(
                f"{tokenizer_path} lacks the OmniVoice special tokens {missing}; it is not the "
                "OmniVoice tokenizer (use tokenizer.json from onnx-community/OmniVoice-Onnx)."
            )
        self.special_ids = {t: self.tokenizer.token_to_id(t) for t in SPECIAL_TOKENS}

    def style_ids(self, *, language: str | None, instruct: str | None,
                  denoise: bool) -> list[int]:
        style = "<|denoise|>" if denoise else ""
        style += f"<|lang_start|>{language or 'None'}<|lang_end|>"
        style += f"<|instruct_start|>{instruct or 'None'}<|instruct_end|>"
        return list(self.tokenizer.encode(style).ids)

    def text_ids(self, text: str, ref_text: str | None) -> list[int]:
        wrapped = f"<|text_start|>{combine_text(text, ref_text)}<|text_end|>"
        ids: list[int] = []
        for piece in split_nonverbal(wrapped):
            ids.extend(self.tokenizer.encode(piece, add_special_tokens=False).ids)
        return ids

    def build(
        self,
        text: str,
        *,
        num_target: int,
        language: str | None,
        instruct: str | None,
        ref_text: str | None = None,
        ref_codes: np.ndarray | None = None,
        denoise: bool = True,
    ) -> Prompt:
        """``language``/``instruct`` must already be resolved/normalised."""
        token_ids = self.style_ids(language=language, instruct=instruct,
                                   denoise=denoise and ref_codes is not None)
        token_ids += self.text_ids(text, ref_text)
        num_ref = int(ref_codes.shape[1]) if ref_codes is not None else 0
        length = len(token_ids) + num_ref + num_target
        ids = np.full((NUM_CODEBOOKS, length), MASK_ID, dtype=np.int64)
        ids[:, : len(token_ids)] = np.asarray(token_ids, dtype=np.int64)[None, :]
        if ref_codes is not None:
            ids[:, len(token_ids): len(token_ids) + num_ref] = ref_codes
        return Prompt(ids=ids, audio_start=len(token_ids), num_target=num_target)
