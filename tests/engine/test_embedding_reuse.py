"""Each decode step embeds only the target positions (the rest of the row never changes):
the embeddings are the same as the whole grid's, and so are the codes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.decoding.decoder import _PlainStep
from wyoming_omnivoice.engine.forward.layouts import Batch
from wyoming_omnivoice.engine.graphs.scoring import CONF, PRED

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "tiny"


@pytest.mark.parametrize("layout", ["packed", "rows", "split"])
def test_target_embeddings_written_into_the_first_steps_equal_the_whole_grids(
        layout: str, tiny_model: Path) -> None:
    engine = Engine.load(tiny_model, device="cpu", layout=layout)
    ref = engine.generate_codes("Nice to meet you.", num_frames=30,
                                options=DecodeOptions(num_step=2))
    prompts = [engine.prompts.build("Hello there.", num_target=41, language="en",
                                    instruct=None, ref_text="Nice to meet you.",
                                    ref_codes=ref),
               engine.prompts.build("Done.", num_target=40, language=None, instruct=None)]
    batch = Batch(prompts, layout)
    step = _PlainStep(engine.decoder, batch, engine.decoder.scorer,
                      np.array(2.0, dtype=np.float32), [PRED, CONF])
    for index, grid in enumerate(batch.grids):
        step._embed(index, grid)  # the first step: the whole grid
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 1024, size=(2, 8, 41))
    batch.put_all(tokens)  # a later step: new target tokens
    for index, grid in enumerate(batch.grids):
        reused = step._embed(index, grid).copy()
        (whole,) = engine.decoder.embeddings.session.run(
            ["inputs_embeds"], {"input_ids": grid.ids, "audio_mask": grid.audio_mask})
        np.testing.assert_array_equal(reused, whole)


def test_codes_match_the_upstream_golden_with_reused_embeddings() -> None:
    """One token-exact golden case (the whole set runs in test_engine_parity, slow)."""
    import json

    golden = json.loads((TINY.parents[1] / "golden" / "upstream_codes.json").read_text())
    case = next(c for c in golden["cases"] if c["name"] == "clone" and c["config"] == 0)
    engine = Engine.load(TINY, device="cpu", min_canvas_frames=0)
    inputs = {k: v for k, v in case["inputs"].items() if v is not None}
    inputs["ref_codes"] = np.asarray(inputs["ref_codes"], dtype=np.int64)
    codes = engine.generate_codes(**inputs, options=DecodeOptions(**case["options"]))
    np.testing.assert_array_equal(codes, np.asarray(case["codes"], dtype=np.int64))
