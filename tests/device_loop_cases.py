"""Requests, decode options and decode items shared by the device step loop's tests
(tests/engine/test_device_selection.py, test_host_text_table.py)."""

from __future__ import annotations

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.decoding.decoder import DecodeItem

REQUESTS = [
    SynthesisRequest(text="Hello world.", language="en", seed=1),
    SynthesisRequest(text="The kitchen lights are now off, good night.", seed=2),
    SynthesisRequest(text="Bonjour!", instruct="female, low pitch", seed=3),
]
OPTIONS = {
    "deterministic": DecodeOptions(num_step=8, position_temperature=0.0),
    "gumbel": DecodeOptions(num_step=12),
    "no-cfg": DecodeOptions(num_step=6, guidance_scale=0.0, position_temperature=0.0),
    "no-cfg-gumbel": DecodeOptions(num_step=6, guidance_scale=0.0, layer_penalty_factor=0.0),
}



def items_of(engine: Engine, requests: list[SynthesisRequest],
             options: DecodeOptions) -> list[DecodeItem]:
    plans = [engine.planner.plan(r) for r in requests]
    return [DecodeItem(prompt=engine.prompts.build(
        p.text, num_target=p.num_frames, language=p.language, instruct=p.instruct,
        ref_text=p.ref_text, ref_codes=p.ref_codes, denoise=options.denoise), rng=p.rng)
        for p in plans]
