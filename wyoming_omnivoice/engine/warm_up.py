"""What an engine runs once at start, so the first requests find everything ready
(:meth:`.core.Engine.warm_up`).

* one forward per length bucket a short reply can use, at every row bucket of the requests
  that can decode at once (with CUDA graphs: 1, 2, 4 and 8 rows), so each shape's
  allocations and CUDA graph exist before a request needs them;
* with the step loop on the device: first its check
  (:func:`.decoding.device_check.check_device_loop`: a short seeded decode on the device
  and on the host loop must give the same codes, else the engine keeps the host loop, with
  one warning), then two steps of
  a decode of short replies at each row bucket with the requests' options, which builds the
  step session and captures its graphs (both turns) for the shapes short replies use;
* the vocoder's probe, check and short-reply shapes (bucketed vocoder).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.decoding.decode_types import DecodeOptions
from wyoming_omnivoice.engine.decoding.device_check import check_device_loop
from wyoming_omnivoice.engine.forward.layouts import bucket_for, natural_length
from wyoming_omnivoice.engine.prompt.duration import estimate_num_frames

_LOGGER = logging.getLogger(__name__)

#: A Home Assistant reply at the 60-character limit of a "short" reply, for warm-up.
SHORT_REPLY = "The living room lights are on and it is 21 degrees inside."
#: Requests decoding at once that warm-up prepares for (the worker's default batch).
WARM_BATCH = 8
#: Diffusion steps of the device loop's start-up check (seeded, noisy, guided).
CHECK_STEPS = 4


def warm_batch_sizes(engine: Any) -> tuple[int, ...]:
    """The row buckets of up to :data:`WARM_BATCH` requests (with CUDA graphs), else 1."""
    buckets = engine.decoder.row_buckets
    if not buckets:
        return (1,)
    return tuple(size for size in buckets if size <= WARM_BATCH)


def warm_up_engine(engine: Any, lengths: Sequence[int] | None,
                   batch_sizes: Sequence[int] | None, prefix_cache: int,
                   options: DecodeOptions | None) -> int:
    """:meth:`.core.Engine.warm_up` (see the module doc); returns the forward shapes run."""
    decoder = engine.decoder
    sizes = tuple(batch_sizes) if batch_sizes is not None else warm_batch_sizes(engine)
    prompt = engine.prompts.build("Warm up.", num_target=8, language=None, instruct=None)
    short = engine.prompts.build(
        SHORT_REPLY, num_target=estimate_num_frames(SHORT_REPLY, None, None, 1.0),
        language=None, instruct=None)
    if lengths is None:
        if decoder.buckets:
            top = bucket_for(natural_length([short], "packed"), decoder.buckets)
            lengths = [b for b in decoder.buckets if b <= top]
        else:
            lengths = [natural_length([prompt], decoder.layout_for([prompt]))]
    done = 0
    for size in sizes:
        done += decoder.warm_up(prompt, tuple(lengths), rows=size, prefix_cache=prefix_cache)
    if decoder.selection_graph is not None:
        started = time.perf_counter()
        check = replace(options or DecodeOptions(), num_step=CHECK_STEPS, class_temperature=0.0,
                        prefix_cache=0)
        if check_device_loop(decoder, [prompt, short], check):
            _capture_steps(decoder, short, sizes, options or DecodeOptions())
        _LOGGER.info("Step loop on the device: %s (check and captures in %.2f s)",
                     "checked" if decoder.selection_graph is not None else "off",
                     time.perf_counter() - started)
    if engine.vocoder_runner.bucketed:  # probe, check and the short replies' shapes
        engine.vocoder_runner.warm_up(max(sizes))
    _LOGGER.info("Warm-up: %d forward shape%s ready", done, "" if done == 1 else "s")
    return done


def _capture_steps(decoder: Any, short: Any, sizes: Sequence[int],
                   options: DecodeOptions) -> None:
    """Two steps (both turns of the step session) of ``size`` short replies decoding at
    once, with the requests' options, at every size; then they leave."""
    if options.class_temperature > 0 or options.prefix_cache >= 2:
        return  # those requests run the host loop
    for size in sizes:
        stepper = decoder.stepper(options)
        states = [stepper.start(short, np.random.default_rng(i)) for i in range(size)]
        for _ in range(min(2, options.num_step)):
            stepper.step()
        for state in states:
            stepper.cancel(state)
        stepper.device.sync()
