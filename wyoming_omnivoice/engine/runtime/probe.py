"""The bidirectionality probe: OmniVoice's decode needs a backbone that attends both ways.

Used when a model folder is loaded (:mod:`.graphs`) and before a backbone is prepared
(:mod:`.offline.prepare`), so a causal export is refused with the fix, not decoded into noise.
"""

from __future__ import annotations

import numpy as np

from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph
from wyoming_omnivoice.engine.store.model_files import CAUSAL_DECODER_HELP, ModelError


def check_bidirectional(backbone: Graph, hidden_size: int) -> None:
    """Refuse a causal backbone: changing the last position must move earlier states."""
    rng = np.random.default_rng(0)
    length = 8
    embeds = rng.standard_normal((1, length, hidden_size)).astype(np.float32)
    mask = np.ones((1, 1, length, length), dtype=bool)
    feeds = {"inputs_embeds": embeds, "attention_mask": mask}
    (before,) = backbone.run(feeds, ["hidden_states"])
    embeds[0, -1] = rng.standard_normal(hidden_size).astype(np.float32) * 4
    (after,) = backbone.run(feeds, ["hidden_states"])
    earlier = np.abs(after[0, :-1].astype(np.float32) - before[0, :-1].astype(np.float32))
    if not np.all(np.isfinite(after)) or float(earlier.max()) <= 1e-6:
        raise ModelError(
            f"{backbone.path} is causal: changing the last position left earlier hidden "
            f"states unchanged. OmniVoice needs bidirectional attention. {CAUSAL_DECODER_HELP}"
        )
