"""Long-text synthesis against upstream ``OmniVoice.generate`` on the tiny fixture model.

``upstream_long_text.json`` (``tools/record_long_text_goldens.py``) holds what upstream's
public ``generate`` did for texts whose estimate exceeds 30 s, in its deterministic mode
(both temperatures 0, every other option at its default): per chunk the text, target
length, prompt row 0 and codes of each ``_generate_iterative`` round, and a summary of the
audio it returned (length, level, RMS envelope, five clips of real samples).

The engine's decoder is watched from outside (``decoder.decode`` wrapped per test) so each
chunk round can be compared with upstream's: the same prompts, hence the same chunk texts,
reference (chunk 0's codes and text for an uncloned voice) and length estimates; then the
same codes; then the same audio, cross-faded and post-processed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

#: Starts server processes (or runs for seconds): not in the fast suite.
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((HERE / "fixtures" / "golden" / "upstream_long_text.json").read_text())
TINY = HERE / "fixtures" / "models" / "tiny"
CASES = GOLDEN["cases"]
#: Upstream's generate() defaults with its two temperatures at 0, as recorded.
OPTIONS = DecodeOptions(**GOLDEN["meta"]["options"])
FRAME_RATE = 25
#: Sample tolerance on the clips and the 40 ms RMS envelope. The codes are equal, so only
#: vocoder arithmetic differs (onnxruntime vs torch, 1e-5 on a 0.5 peak), seen through the
#: 16-bit quantisation of silence removal and the peak normalisation.
MAX_SAMPLE_DIFF = 2e-4
MAX_ENVELOPE_DIFF = 5e-5


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load(TINY, device="cpu")


@pytest.fixture
def rounds(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[Any, Any]]]:
    """(prompt, codes) of every item of every ``decoder.decode`` call, in call order."""
    seen: list[list[tuple[Any, Any]]] = []
    original = engine.decoder.decode

    def decode(items: Sequence[Any], options: DecodeOptions) -> list[np.ndarray]:
        result = original(items, options)
        seen.append([(item.prompt, codes) for item, codes in zip(items, result, strict=True)])
        return result

    monkeypatch.setattr(engine.decoder, "decode", decode)
    return seen


def request_of(case: dict[str, Any]) -> SynthesisRequest:
    inputs = dict(case["inputs"])
    duration = inputs.pop("duration", None)
    if duration is not None:  # upstream: max(1, int(duration * frame_rate)) frames
        inputs["num_frames"] = max(1, int(duration * FRAME_RATE))
    if inputs.get("ref_codes") is not None:
        inputs["ref_codes"] = np.asarray(inputs["ref_codes"], dtype=np.int64)
    return SynthesisRequest(**inputs)


def check_chunk(name: str, index: int, prompt: Any, codes: np.ndarray,
                chunk: dict[str, Any]) -> None:
    where = f"{name} chunk {index} (upstream: {chunk['num_frames']} frames, " \
            f"text {chunk['text'][:40]!r}..., reference text {chunk['ref_text']!r})"
    assert prompt.num_target == chunk["num_frames"], f"{where}: got {prompt.num_target} frames"
    assert prompt.ids[0].tolist() == chunk["prompt_ids"], f"{where}: prompt differs"
    assert prompt.audio_start == chunk["audio_start"], where
    np.testing.assert_array_equal(codes, np.asarray(chunk["codes"]), err_msg=where)


def check_audio(name: str, audio: np.ndarray, want: dict[str, Any]) -> None:
    assert audio.dtype == np.float32
    assert audio.shape == (want["num_samples"],), f"{name}: length differs"
    window = want["envelope_window"]
    frames = audio[: len(want["envelope"]) * window].astype(np.float64).reshape(-1, window)
    envelope = np.sqrt(np.mean(frames**2, axis=1))
    worst = float(np.abs(envelope - np.asarray(want["envelope"])).max())
    assert worst <= MAX_ENVELOPE_DIFF, f"{name}: RMS envelope off by {worst:.3g}"
    for start, samples in want["clips"]:
        clip = audio[start : start + len(samples)]
        worst = float(np.abs(clip - np.asarray(samples, dtype=np.float32)).max())
        assert worst <= MAX_SAMPLE_DIFF, f"{name}: samples at {start} off by {worst:.3g}"
    assert float(np.abs(audio).max()) == pytest.approx(want["peak"], abs=MAX_SAMPLE_DIFF)


def test_goldens_are_chunked_and_meaningful() -> None:
    names = {case["name"] for case in CASES}
    assert {"no_reference", "clone", "instruct_fixed_duration", "threshold_750_frames",
            "threshold_751_frames"} <= names
    for case in CASES:
        chunks = case["chunks"]
        # Upstream chunks above 30 s (750 frames) only: exactly 750 stays whole.
        assert (len(chunks) == 1) == (case["name"] == "threshold_750_frames"), case["name"]
        assert all(len(chunk["codes"]) == 8 for chunk in chunks)
        assert case["audio"]["peak"] > 100 * MAX_SAMPLE_DIFF
        assert len(case["audio"]["clips"]) >= 5
    # Without a reference, chunk 0 is the voice of every later chunk.
    uncloned = next(case for case in CASES if case["name"] == "no_reference")
    first = uncloned["chunks"][0]
    assert first["ref_text"] is None
    assert all(chunk["ref_text"] == first["text"] for chunk in uncloned["chunks"][1:])
    assert GOLDEN["batch"]["equals_single"] == [True] * len(GOLDEN["batch"]["names"])


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_long_text_matches_upstream_generate(
    engine: Engine, rounds: list, case: dict[str, Any]
) -> None:
    (audio,) = engine.synthesize_batch([request_of(case)], options=OPTIONS)
    chunks = case["chunks"]
    assert [len(r) for r in rounds] == [1] * len(chunks), "one decode per chunk"
    for index, ((prompt, codes), chunk) in enumerate(
        zip((r[0] for r in rounds), chunks, strict=True)
    ):
        check_chunk(case["name"], index, prompt, codes, chunk)
    check_audio(case["name"], audio, case["audio"])


def test_batched_long_texts_match_upstream_batch(engine: Engine, rounds: list) -> None:
    batch = GOLDEN["batch"]
    members = [next(case for case in CASES if case["name"] == name) for name in batch["names"]]
    audio = engine.synthesize_batch([request_of(case) for case in members], options=OPTIONS)
    # Upstream decodes chunk c of every item that has one together, round by round.
    assert [len(r) for r in rounds] == batch["rounds"]
    for item, case in enumerate(members):
        mine = [r[item] for r in rounds if len(r) > item]
        assert len(mine) == len(case["chunks"]), case["name"]
        for index, ((prompt, codes), chunk) in enumerate(zip(mine, case["chunks"],
                                                             strict=True)):
            check_chunk(case["name"], index, prompt, codes, chunk)
        check_audio(case["name"], audio[item], case["audio"])
