"""The model's fixed numbers, in one place: every part of the engine reads them from here.

They are OmniVoice's and the Higgs audio tokenizer's (``../shared/reference/omnivoice.md``):
24 kHz audio, 960 samples per codec frame (25 frames a second), 8 codebooks of 1024 codes,
and the MASK token (1024) that marks a cell the diffusion decode has not chosen yet.
"""

from __future__ import annotations

#: Audio in and out of the model, in Hz.
SAMPLE_RATE = 24000
#: The reference audio's rate for the semantic encoder (cloning), in Hz.
SEMANTIC_SAMPLE_RATE = 16000
#: Samples per codec frame at 24 kHz.
HOP_LENGTH = 960
#: Codec frames per second (25).
FRAME_RATE = SAMPLE_RATE // HOP_LENGTH
#: Codebooks per frame.
NUM_CODEBOOKS = 8
#: Codes per codebook (0..1023).
CODEBOOK_SIZE = 1024
#: The audio token of a cell not yet chosen.
MASK_ID = CODEBOOK_SIZE
#: The audio heads' classes per codebook: the codes and MASK.
AUDIO_VOCAB = CODEBOOK_SIZE + 1
#: Positions the rotary table of a prepared backbone covers.
MAX_POSITIONS = 16384
