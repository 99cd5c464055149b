"""Backbone inputs that look like real decodes, for the fp16 calibration.

Short and long prompts (a Home Assistant reply, a paragraph, a voice-designed and a
non-verbal one) in the packed and split row layouts the decoder uses, each turned into
``inputs_embeds`` by the published embeddings graph, with the decoder's own attention masks.
"""

from __future__ import annotations

import numpy as np

from .decoder import _Batch
from .duration import estimate_num_frames
from .model_files import ModelPaths
from .prompt import PromptBuilder
from .sessions import Graph, choose_providers

CALIBRATION_TEXTS = (
    ("The living room lights are now turned on.", None),
    ("Good morning. Today will be mostly sunny with a high of twenty four degrees. Your "
     "first meeting starts at nine thirty in the small conference room, and the recycling "
     "goes out tonight.", None),
    ("Warning! The front door has been open for ten minutes.", "male, low pitch"),
    ("[laughter] That is a very good question, let me think about it.", "female"),
)


def calibration_feeds(paths: ModelPaths) -> list[dict[str, np.ndarray]]:
    """Backbone feeds (``inputs_embeds`` fp32, ``attention_mask`` bool) for calibration."""
    prompts = PromptBuilder(paths.tokenizer)
    embeddings = Graph(paths.embeddings, choose_providers("cpu"))
    built = [prompts.build(text, num_target=estimate_num_frames(text, None, None, 1.0),
                           language=None, instruct=instruct)
             for text, instruct in CALIBRATION_TEXTS]
    feeds = []
    for layout, group in (("packed", built[:2]), ("split", built[2:]), ("packed", built[2:3]),
                          ("split", built[:1])):
        batch = _Batch(list(group), layout)
        for grid in batch.grids:
            (embeds,) = embeddings.run({"input_ids": grid.ids, "audio_mask": grid.audio_mask},
                                       ["inputs_embeds"])
            feeds.append({"inputs_embeds": embeds.astype(np.float32),
                          "attention_mask": grid.mask.copy()})
    return feeds
