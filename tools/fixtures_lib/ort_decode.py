"""Self-check: replay the recorded upstream cases through the exported ONNX graphs.

A plain numpy port of the reference decode (omnivoice.md B.3) over onnxruntime sessions,
run on each recorded case's prompt rows. It proves the committed graphs and goldens are
consistent with each other, and measures how decisive the tiny model's choices are (the
smallest gap that a float rounding difference would have to cross to change a code).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from .onnx_export import ort_session

logger = logging.getLogger(__name__)

MASK = 1024


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


class GraphRunner:
    """embeddings -> backbone -> heads for one unpadded sequence [8, L]."""

    def __init__(self, model_dir: Path) -> None:
        self.embed = ort_session(model_dir / "audio_embeddings_encoder.onnx")
        self.backbone = ort_session(model_dir / "llm_backbone_fp32.onnx")
        self.heads = ort_session(model_dir / "audio_heads_decoder.onnx")

    def logits(self, ids: np.ndarray, audio_mask: np.ndarray) -> np.ndarray:
        length = ids.shape[-1]
        embeds = self.embed.run(None, {"input_ids": ids[None], "audio_mask": audio_mask[None]})[0]
        mask = np.ones((1, 1, length, length), dtype=bool)
        hidden = self.backbone.run(
            None, {"inputs_embeds": embeds.astype(np.float32), "attention_mask": mask}
        )[0]
        return self.heads.run(None, {"hidden_states": hidden})[0][0].astype(np.float32)


def _prompt_rows(case: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    row0 = np.asarray(case["input_ids"], dtype=np.int64)
    ids = np.repeat(row0[None], 8, axis=0)
    ref = case["inputs"]["ref_codes"]
    if ref is not None:
        start = case["audio_start"]
        ids[:, start : start + len(ref[0])] = np.asarray(ref, dtype=np.int64)
    return ids, np.asarray(case["audio_mask"], dtype=bool)


def decode_case(runner: GraphRunner, case: dict[str, Any]) -> tuple[np.ndarray, float, float]:
    """Return (codes [8,T], smallest argmax gap, smallest top-k boundary gap)."""
    options = case["options"]
    frames = case["num_frames"]
    ids, audio_mask = _prompt_rows(case)
    length = ids.shape[-1]
    tokens = np.full((8, frames), MASK, dtype=np.int64)
    penalty = options["layer_penalty_factor"] * np.arange(8, dtype=np.float32)[:, None]
    guidance = options["guidance_scale"]
    min_argmax_gap = min_topk_gap = np.inf
    for count in case["schedule"]:
        if count <= 0:
            continue
        ids[:, length - frames :] = tokens
        cond = runner.logits(ids, audio_mask)[:, length - frames :, :]
        if guidance != 0:
            uncond = runner.logits(tokens.copy(), np.ones(frames, dtype=bool))
            lc, lu = _log_softmax(cond), _log_softmax(uncond)
            logp = _log_softmax(lc + guidance * (lc - lu))
        else:
            logp = _log_softmax(cond)
        logp[..., MASK] = -np.inf
        pred = logp.argmax(axis=-1)
        top2 = np.sort(logp, axis=-1)[..., -2:]
        conf = top2[..., 1]
        score = conf - penalty
        open_cells = tokens == MASK
        score = np.where(open_cells, score, -np.inf).ravel()
        order = np.argsort(-score, kind="stable")
        chosen = order[:count]
        if count < open_cells.sum():
            min_topk_gap = min(min_topk_gap, float(score[order[count - 1]] - score[order[count]]))
        gaps = (top2[..., 1] - top2[..., 0]).ravel()[chosen]
        min_argmax_gap = min(min_argmax_gap, float(gaps.min()))
        flat = tokens.ravel()
        flat[chosen] = pred.ravel()[chosen]
        tokens = flat.reshape(8, frames)
    return tokens, min_argmax_gap, min_topk_gap


def check_goldens(model_dir: Path, golden: dict[str, Any]) -> dict[str, Any]:
    """Decode every golden case through the graphs; count exact matches."""
    runner = GraphRunner(model_dir)
    matched, mismatched = 0, []
    argmax_gap = topk_gap = np.inf
    cell_agreement = []
    for case in golden["cases"]:
        codes, gap_a, gap_k = decode_case(runner, case)
        expected = np.asarray(case["codes"])
        cell_agreement.append(float((codes == expected).mean()))
        if np.array_equal(codes, expected):
            matched += 1
        else:
            mismatched.append(f"{case['name']}/config{case['config']}")
        argmax_gap, topk_gap = min(argmax_gap, gap_a), min(topk_gap, gap_k)
    summary = {
        "cases": len(golden["cases"]),
        "exact_matches": matched,
        "mismatched": mismatched,
        "min_cell_agreement": min(cell_agreement),
        "mean_cell_agreement": float(np.mean(cell_agreement)),
        "min_argmax_gap": argmax_gap,
        "min_topk_gap": topk_gap,
    }
    logger.info("ORT numpy decode of %s vs upstream goldens: %s", model_dir.name, summary)
    return summary
