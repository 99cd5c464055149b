"""Which text the next piece of a request speaks: the pacing applied to queued pieces.

A request's text is queued as pieces of one clause or sentence each (:class:`.Piece` with
its :class:`..speech.pacing.Unit`), in output order. When a piece is about to go to the
worker (the piece before it has started decoding), :func:`plan_next_piece` lets it take
the waiting pieces after it that this host decodes before the client runs out of audio
(:func:`..speech.pacing.plan_piece`). The pieces it takes are *absorbed*: they stay in the
output queue, in order, but write nothing (the last one of a one-shot still ends it).
"""

from __future__ import annotations

import logging
import time

from wyoming_omnivoice.server.requests import Piece, PlannedPiece
from wyoming_omnivoice.speech.pacing import (
    DecodeSpeed,
    Unit,
    audio_seconds,
    joined_frames,
    plan_piece,
)

_LOGGER = logging.getLogger(__name__)


def plan_next_piece(piece: Piece, speed: DecodeSpeed) -> tuple[str, PlannedPiece | None]:
    """The text ``piece`` speaks, and what the plan predicts for it (None: not paced)."""
    request = piece.request
    queued = request.waiting
    waiting = queued[queued.index(piece):] if piece in queued else [piece]
    units: list[Unit] = []
    for queued_piece in waiting:
        if queued_piece.unit is None:
            break
        units.append(queued_piece.unit)
    if not units:
        request.waiting = [p for p in queued if p is not piece]
        return piece.text, None
    now = time.monotonic()
    planned = request.planned
    budget = None if planned is None else planned.budget(now, request.clock.runs_out)
    count = plan_piece(units, budget, speed)
    taken = waiting[:count]
    # One piece for the run: it opens what its first opens, closes what its last closes,
    # and the absorbed pieces write nothing (the last one still ends a one-shot).
    piece.closes = taken[-1].closes
    for other in taken[1:]:
        other.absorbed = True
        other.opens = other.closes = False
    request.waiting = [p for p in queued if p not in taken]
    text = " ".join(p.text for p in taken)
    frames = joined_frames(units[:count])
    predicted = PlannedPiece(started=now, decode_s=speed.predict(frames),
                             audio_s=audio_seconds(text))
    _LOGGER.debug("Pacing: a piece of %d unit(s), %d frames, predicted decode %.2f s, "
                  "budget %s", count, frames, predicted.decode_s,
                  "(first piece)" if budget is None else f"{budget:.2f} s")
    return text, predicted
