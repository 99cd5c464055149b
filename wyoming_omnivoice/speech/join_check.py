"""The worker's scheduling under ``auto``, and the check that lets requests join a running
decode.

``auto`` is ``step`` (continuous batching: a request joins the running decode at the next
step) on CUDA and ``gated`` on the CPU. Joining has not run on a GPU yet, so under ``auto``
it checks itself first (:func:`joining_is_exact`): two seeded requests, the second joining
the first's decode two steps in, must get the codes the two get decoded as one whole
batch. When they do not (or the check fails), the worker keeps ``gated`` (a request starts
when the decode in progress is done), with one warning.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from wyoming_omnivoice.engine import DecodeOptions, Engine

_LOGGER = logging.getLogger(__name__)

#: Diffusion steps of the check (at most; fewer when the requests' options have fewer).
CHECK_STEPS = 8
_TEXTS = ("Turn on the kitchen lights, please.", "It is twenty one degrees inside.")


def joining_is_exact(engine: Engine, options: DecodeOptions | None = None) -> bool:
    """Whether a request joining a running decode gets the codes of a whole batch (see the
    module doc); False with one warning otherwise."""
    from wyoming_omnivoice.engine import DecodeOptions, SynthesisRequest

    base = options or DecodeOptions()
    check = replace(base, num_step=min(base.num_step, CHECK_STEPS))
    requests = [SynthesisRequest(text=text, seed=seed) for seed, text in enumerate(_TEXTS)]
    try:
        session = engine.open_session(check)
        first = session.add(requests[0], codes_only=True)
        session.step()
        session.step()
        second = session.add(requests[1], codes_only=True)
        while session.active:
            session.step()
        whole = engine.generate_codes_batch(requests, options=check)
        joined = [first.result, second.result]
        errors = [item.error for item in (first, second) if item.error is not None]
        if errors:
            raise errors[0]
    except Exception as err:  # any engine error: the check failed
        reason = f"its check failed ({type(err).__name__}: {err})"
    else:
        if all(a is not None and np.array_equal(a, b)
               for a, b in zip(joined, whole, strict=True)):
            return True
        reason = "a request joining a running decode got other codes than in a whole batch"
    _LOGGER.warning("Step scheduling off: %s; requests start when the decode in progress "
                    "is done (gated)", reason)
    return False


def resolve_scheduling(scheduling: str, engine: Engine,
                       options: DecodeOptions | None = None) -> str:
    """``scheduling`` with ``auto`` resolved: ``step`` on CUDA when joining passes its
    check, else ``gated``."""
    if scheduling != "auto":
        return scheduling
    if engine.device == "cuda" and joining_is_exact(engine, options):
        return "step"
    return "gated"
