"""Whether the backbone may run several rows in one forward: checked once at load.

The published backbone declares its batch axis dynamic, but the public ports of OmniVoice
run it one row at a time with an all-True mask. The engine runs several rows per forward
(a batch of requests; upstream's ``rows`` layout, whose unconditional row is padded) with
padded and block masks. :func:`check_backbone_rows` runs a padded two-row forward and the
two rows alone, unpadded: when the two-row forward fails or its rows differ from the rows
alone, the engine runs one row per forward (:attr:`.decoder.Decoder.one_row`) and says so
in one warning.

At the real size the check costs about 0.7 s on a small CPU (three forwards of the 28
layers; a restart is about 1.5 s), so a prepared backbone keeps its outcome in its folder
(``row_check.json``, keyed by the variant, the providers and the onnxruntime version): a
restart reads it. The published backbone has no folder of its own and is checked at every
load.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

_LOGGER = logging.getLogger(__name__)

#: The two rows' lengths: the second is padded to the first's.
LENGTHS = (12, 7)
#: Largest relative difference (norm of the difference over the norm of the row alone)
#: accepted for an exact backbone. An int8 backbone quantizes a forward's activations
#: with one scale for all its rows (dynamic quantization), so its rows move with their
#: neighbours: :data:`QUANTIZED_TOLERANCE` for it and for the float16 variants.
EXACT_TOLERANCE = 1e-3
QUANTIZED_TOLERANCE = 0.2


@dataclass(frozen=True)
class RowCheck:
    """The outcome of :func:`check_backbone_rows`."""

    ok: bool
    #: Largest relative difference of a row between the two-row forward and itself alone
    #: (inf when the two-row forward failed).
    worst: float
    #: Why multi-row forwards are not used ("" when they are).
    reason: str
    seconds: float

    def describe(self) -> str:
        if self.ok:
            return (f"a padded two-row forward equals its rows run alone (relative "
                    f"difference {self.worst:.1e}, checked in {self.seconds:.2f} s)")
        return self.reason


def tolerance_for(precision: str) -> float:
    """The relative difference :func:`check_backbone_rows` accepts for a backbone variant."""
    exact = precision in ("published", "fp32", "fp32-fused")
    return EXACT_TOLERANCE if exact else QUANTIZED_TOLERANCE


def padded_pair(hidden: int) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """``(embeds [2, L, H], mask [2, 1, L, L], rows alone)``: two rows of random inputs, the
    second padded like the decoder pads (its mask row True on the padding's diagonal)."""
    rng = np.random.default_rng(0)
    length = max(LENGTHS)
    rows = [rng.standard_normal((1, n, hidden)).astype(np.float32) for n in LENGTHS]
    embeds = np.zeros((2, length, hidden), np.float32)
    mask = np.zeros((2, 1, length, length), bool)
    for index, (row, n) in enumerate(zip(rows, LENGTHS, strict=True)):
        embeds[index, :n] = row[0]
        mask[index, 0, :n, :n] = True
        mask[index, 0, range(n, length), range(n, length)] = True
    return embeds, mask, rows


def _forward(backbone: Graph, embeds: np.ndarray, mask: np.ndarray) -> np.ndarray:
    (hidden,) = backbone.session.run(
        ["hidden_states"],
        backbone.cast_inputs({"inputs_embeds": embeds, "attention_mask": mask}),
        backbone.run_options)
    return np.asarray(hidden, dtype=np.float32)


RECORD = "row_check.json"


def _key(backbone: Graph, precision: str) -> str:
    from wyoming_omnivoice.engine.runtime.onnx_sessions import import_onnxruntime

    return "|".join([precision, *backbone.session.get_providers(),
                     import_onnxruntime().__version__])


def _recorded(folder: Path | None, key: str) -> RowCheck | None:
    if folder is None:
        return None
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        if record.pop("key") == key:
            return RowCheck(**record)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _record(folder: Path | None, key: str, check: RowCheck) -> None:
    if folder is None:
        return
    from wyoming_omnivoice.atomic import atomic_write

    try:
        with atomic_write(folder / RECORD, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"key": key, **asdict(check)}) + "\n")
    except OSError as err:  # a read-only model folder: checked again at the next load
        _LOGGER.debug("row check not recorded in %s: %s", folder, err)


def check_backbone_rows(backbone: Graph, hidden: int, precision: str,
                        folder: Path | None = None) -> RowCheck:
    """A padded two-row forward against its two rows run alone (see the module doc); one
    warning when it fails. ``folder``: the prepared backbone's, where the outcome is kept."""
    key = _key(backbone, precision)
    check = _recorded(folder, key)
    if check is None:
        check = _check(backbone, hidden, precision)
        _record(folder, key, check)
    if not check.ok:
        _LOGGER.warning("The backbone runs one row per forward (batches and the rows layout "
                        "decode row by row, IO binding off): %s", check.reason)
    return check


def check_graph_set_rows(graphs: GraphSet, precision: str) -> RowCheck:
    """:func:`check_backbone_rows` of a loaded model's backbone (kept in its prepared
    folder, if any)."""
    folder = graphs.prepared.path.parent if graphs.prepared is not None else None
    return check_backbone_rows(graphs.backbone, graphs.hidden_size, precision, folder)


def _check(backbone: Graph, hidden: int, precision: str) -> RowCheck:
    started = time.perf_counter()
    embeds, mask, rows = padded_pair(hidden)
    tolerance = tolerance_for(precision)
    try:
        together = _forward(backbone, embeds, mask)
        alone = [_forward(backbone, row, np.ones((1, 1, row.shape[1], row.shape[1]), bool))
                 for row in rows]
    except Exception as err:  # onnxruntime raises its own error types
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return RowCheck(False, float("inf"), f"a padded two-row backbone forward failed "
                        f"({first})", time.perf_counter() - started)
    worst = 0.0
    for index, (row, n) in enumerate(zip(alone, LENGTHS, strict=True)):
        scale = float(np.linalg.norm(row)) or 1.0
        worst = max(worst, float(np.linalg.norm(together[index, :n] - row[0])) / scale)
    seconds = time.perf_counter() - started
    if not worst <= tolerance:  # NaN fails too
        return RowCheck(False, worst, f"a padded two-row backbone forward differs from its "
                        f"rows run alone (relative difference {worst:.2g}, more than "
                        f"{tolerance:.0e})", seconds)
    return RowCheck(True, worst, "", seconds)
