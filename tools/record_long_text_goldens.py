#!/usr/bin/env python3
"""Record upstream ``OmniVoice.generate`` on texts long enough to be chunked.

Dev tool (torch, transformers and upstream ``omnivoice`` in the dev venv; the tests only
read the JSON). It rebuilds the seeded tiny torch model behind the committed fixtures
(``fixtures_lib/torch_models.py``), checks that it is that model (one parity golden and the
vocoder golden reproduce), then calls upstream's public ``generate`` exactly as a user
would, with its default generation config except the two temperatures, which are set to
0: ``position_temperature=0`` drops the Gumbel noise on positions and
``class_temperature=0`` takes the argmax token, upstream's own deterministic mode. The
duration estimate is upstream's rule estimator (deterministic); one case passes a fixed
duration instead.

While ``generate`` runs, ``fixtures_lib/unmask_observer.py`` watches each
``_generate_iterative`` call (one per chunk round) from outside and records its items'
chunk text, reference text, target length, prompt row 0, per-step unmask counts and codes.
The returned audio is stored as length, peak, RMS, an RMS envelope (40 ms windows) and five
20 ms clips of real samples. Written to ``tests/fixtures/golden/upstream_long_text.json``.

    python tools/record_long_text_goldens.py
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures_lib.goldens import (  # noqa: E402
    CONFIGS,
    PROMPTS,
    ref_code_grid,
    run_case,
)
from fixtures_lib.torch_models import build_torch_models  # noqa: E402
from fixtures_lib.unmask_observer import UnmaskObserver  # noqa: E402

GOLDEN_DIR = ROOT / "tests" / "fixtures" / "golden"
OUT = GOLDEN_DIR / "upstream_long_text.json"
logger = logging.getLogger("record_long_text_goldens")

#: Upstream's deterministic mode; every other generation option keeps its default.
DETERMINISTIC = {"position_temperature": 0.0, "class_temperature": 0.0}
#: Window of the stored RMS envelope and length of each stored clip, in samples.
ENVELOPE_WINDOW = 960
CLIP_SAMPLES = 240

TEXT_HOME = (
    "Good evening. The front door is locked, the garage door is closed and the alarm is set "
    "for the night. Dr. Smith called at half past six to move tomorrow's appointment to ten "
    "o'clock; she asked you to bring the blood test results with you. The dishwasher has "
    "finished, but the washing machine still needs about twenty minutes. It will be cold "
    "tonight, around two degrees, so the heating in the bedroom will stay on until midnight. "
    "Your parcel was delivered to the neighbour at number twelve! Would you like me to remind "
    "you about it in the morning? Finally, the living room lamp is still on, and the kitchen "
    "window is open a little."
)
TEXT_STORY = (
    "Once upon a time, in a small village by the sea, there lived an old fisherman and his "
    "cat. Every morning they walked down to the harbour before the sun came up, and every "
    "evening they came back with a basket of fish, some for the market and some for "
    "themselves. One stormy night, a stranger knocked at their door and asked for shelter. "
    "The fisherman gave him dry clothes, a bowl of hot soup and a place by the fire. In the "
    "morning the stranger was gone, but on the table he had left a small wooden box. Inside "
    "it was a map of the coast, with a red cross drawn on a rock that nobody in the village "
    "had ever noticed. The cat looked at the map, then at the fisherman, and then at the door."
)
TEXT_NEWS = (
    "Here is the news. The city council met this afternoon and agreed to open two new parks "
    "next spring. Trains on the northern line will run every ten minutes from Monday. In "
    "sport, the home team won their match three to one, and the coach said the players had "
    "worked hard all season. The weather tomorrow will be dry and bright, with a light wind "
    "from the west."
)


def long_cases() -> list[dict[str, Any]]:
    """Each case is the keyword arguments of one ``generate`` call (one item).

    All are chunked (estimate or fixed length over 30 s) except the 750-frame case.
    """
    return [
        {"name": "no_reference", "text": TEXT_HOME, "language": "en"},
        {"name": "clone", "text": TEXT_STORY, "ref_text": "Nice to meet you, my friend.",
         "ref_codes": (40, 41), "ref_rms": 0.05},
        {"name": "instruct_fixed_duration", "text": TEXT_NEWS, "language": "English",
         "instruct": "female, low pitch", "duration": 36.0},
        # The threshold itself: 750 frames (30 s) stay whole, 751 frames are chunked.
        {"name": "threshold_750_frames", "text": TEXT_NEWS, "language": "en", "duration": 30.0},
        {"name": "threshold_751_frames", "text": TEXT_NEWS, "language": "en", "duration": 30.04},
    ]


#: Items generated together in one upstream call (uncloned: chunk 0 is each one's voice).
BATCH = ("no_reference", "instruct_fixed_duration")


def _clone_prompt(ov, case: dict[str, Any]):
    import torch

    if case.get("ref_codes") is None:
        return None
    return ov.VoiceClonePrompt(
        ref_audio_tokens=torch.tensor(ref_code_grid(*case["ref_codes"]), dtype=torch.long),
        ref_text=case["ref_text"], ref_rms=case["ref_rms"],
    )


def generate(model, cases: list[dict[str, Any]]) -> tuple[list[np.ndarray], list]:
    """One upstream ``generate`` call for ``cases``; returns audio and the observed runs."""
    import torch

    ov = __import__("omnivoice.models.omnivoice", fromlist=["VoiceClonePrompt"])
    prompts = [_clone_prompt(ov, case) for case in cases]
    durations = [case.get("duration") for case in cases]
    with torch.inference_mode(), UnmaskObserver(model) as seen:
        audio = model.generate(
            text=[case["text"] for case in cases],
            language=[case.get("language") for case in cases],
            instruct=[case.get("instruct") for case in cases],
            voice_clone_prompt=prompts if all(p is not None for p in prompts) else None,
            duration=durations if any(d is not None for d in durations) else None,
            **DETERMINISTIC,
        )
    return audio, seen.runs


def _round(values: Any, digits: int) -> list[float]:
    return [float(f"{float(v):.{digits}g}") for v in values]


def audio_summary(audio: np.ndarray) -> dict[str, Any]:
    """Length, level, RMS envelope and a few clips of real samples of a long output."""
    audio = np.asarray(audio, dtype=np.float32)
    n = audio.size
    windows = n // ENVELOPE_WINDOW
    frames = audio[: windows * ENVELOPE_WINDOW].astype(np.float64).reshape(windows, -1)
    pad = 2400  # upstream's 100 ms of zeros on each side
    starts = [pad, *(int(n * q) for q in (0.25, 0.5, 0.75)), n - pad - CLIP_SAMPLES]
    return {
        "num_samples": int(n),
        "peak": float(np.abs(audio).max()),
        "rms": float(np.sqrt(np.mean(audio.astype(np.float64) ** 2))),
        "envelope_window": ENVELOPE_WINDOW,
        "envelope": _round(np.sqrt(np.mean(frames**2, axis=1)), 5),
        "clips": [[s, _round(audio[s : s + CLIP_SAMPLES], 6)] for s in starts],
    }


def run_chunks(runs: list, item: int, batch_items: list[list[int]]) -> list[dict[str, Any]]:
    """The chunks of batch item ``item``: one entry per ``_generate_iterative`` call it was in.

    ``batch_items[r]`` lists which items run ``r`` decoded, in row order.
    """
    chunks = []
    for run, items in zip(runs, batch_items, strict=True):
        if item not in items:
            continue
        row = items.index(item)
        chunks.append({
            "text": run.texts[row],
            "ref_text": run.ref_texts[row],
            "num_frames": run.target_lens[row],
            "prompt_ids": run.prompt_ids[row],
            "audio_start": run.audio_starts[row],
            "schedule": run.counts[row],
            "codes": run.codes[row],
        })
    return chunks


def rows_per_run(runs: list, chunk_counts: list[int]) -> list[list[int]]:
    """Which items each run decoded: upstream runs chunk ``c`` of every item that has one."""
    rows = [[i for i, count in enumerate(chunk_counts) if count > c] for c in range(len(runs))]
    for run, items in zip(runs, rows, strict=True):
        if len(run.texts) != len(items):
            raise AssertionError(f"run sizes {len(run.texts)} vs expected items {items}")
    return rows


def check_same_model(model, codec) -> None:
    """The rebuilt torch model is the committed fixtures' one (goldens reproduce)."""
    import torch

    codes = json.loads((GOLDEN_DIR / "upstream_codes.json").read_text())["cases"]
    want = next(c for c in codes if c["name"] == PROMPTS[0].name and c["config"] == 0)
    got = run_case(model, PROMPTS[0], CONFIGS[0])
    if got["codes"] != want["codes"]:
        raise RuntimeError("rebuilt model does not reproduce upstream_codes.json; rebuild "
                           "the fixtures with tools/build_fixtures.py first")
    vocoder = json.loads((GOLDEN_DIR / "upstream_codec.json").read_text())["vocoder"]
    with torch.no_grad():
        wave = codec.decode(torch.tensor([vocoder["codes"]])).audio_values[0, 0].numpy()
    if float(np.abs(wave - np.asarray(vocoder["waveform"])).max()) > 1e-6:
        raise RuntimeError("rebuilt codec does not reproduce upstream_codec.json")


def record(model) -> dict[str, Any]:
    cases = long_cases()
    records = []
    for case in cases:
        started = time.monotonic()
        (audio,), runs = generate(model, [case])
        if (len(runs) < 2) != case["name"].endswith("_750_frames"):
            raise AssertionError(f"{case['name']}: upstream made {len(runs)} chunk(s)")
        chunks = run_chunks(runs, 0, [[0]] * len(runs))
        inputs = {k: v for k, v in case.items() if k != "name"}
        if case.get("ref_codes") is not None:
            inputs["ref_codes"] = ref_code_grid(*case["ref_codes"])
        records.append({"name": case["name"], "inputs": inputs, "chunks": chunks,
                        "audio": audio_summary(audio), "_audio": audio})
        logger.info("%s: %d chunks of %s frames, %.1f s of audio (%.0f s)", case["name"],
                    len(chunks), [c["num_frames"] for c in chunks], audio.size / 24000,
                    time.monotonic() - started)
    by_name = {r["name"]: r for r in records}
    members = [by_name[name] for name in BATCH]
    audio, runs = generate(model, [next(c for c in cases if c["name"] == n) for n in BATCH])
    rows = rows_per_run(runs, [len(m["chunks"]) for m in members])
    equals_single = []
    for index, member in enumerate(members):
        chunks = run_chunks(runs, index, rows)
        same_codes = [c["codes"] for c in chunks] == [c["codes"] for c in member["chunks"]]
        equals_single.append(bool(same_codes and np.array_equal(audio[index],
                                                                member["_audio"])))
    logger.info("batch %s: equals single runs %s", BATCH, equals_single)
    for r in records:
        del r["_audio"]
    return {
        "meta": {
            "source": "upstream OmniVoice.generate on the tiny fixture model, recorded by "
                      "tools/record_long_text_goldens.py",
            "options": DETERMINISTIC,
            "clip_samples": CLIP_SAMPLES,
        },
        "cases": records,
        "batch": {"names": list(BATCH), "rounds": [len(r) for r in rows],
                  "equals_single": equals_single},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S")
    for noisy in ("transformers", "omnivoice"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    built = build_torch_models("tiny", seed=0)
    check_same_model(built.model, built.codec)
    golden = record(built.model)
    if not all(golden["batch"]["equals_single"]):
        logger.error("upstream's batched run differs from its single runs: %s",
                     golden["batch"]["equals_single"])
        return 1
    args.out.write_text(json.dumps(golden, ensure_ascii=False, separators=(",", ":")) + "\n",
                        encoding="utf-8")
    logger.info("wrote %s (%d bytes)", args.out, args.out.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
