"""The row layouts of a decode batch: where each item's rows sit in the backbone's grids.

Three row layouts are exact to upstream:

* ``"rows"``: upstream's layout, ``2B`` rows (conditional rows, then unconditional rows that
  hold only the target frames), right-padded, ``[2B, 1, L, L]`` boolean mask with a diagonal
  on every padded position so no mask row is all-False;
* ``"packed"``: each item's unconditional target frames follow its conditional sequence in
  the same row with a block-diagonal mask. Attention inside each block only sees relative
  positions, so rotary attention gives the same result while the backbone processes
  ``S + T`` instead of ``2 S`` positions per item;
* ``"split"``: the conditional rows (length ``S``) and the unconditional rows (length ``T``)
  are two grids, each run through the embeddings and the backbone on its own. Same ``S + T``
  positions as packed, but attention costs ``S^2 + T^2`` instead of ``(S + T)^2``: cheaper for
  long targets, at the price of a second call per step (CPU path only).

``"auto"`` picks the cheapest under a cost model of a forward.
"""

from __future__ import annotations

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.prompt.builder import Prompt

LAYOUTS = ("packed", "rows", "split", "auto")
#: Row length at which a backbone forward's attention (quadratic) costs as much as its
#: projections and MLP (linear): a forward over L positions costs about L * (1 + L / this).
#: Measured on the real-width model (onnxruntime CPU: 1.66 ms/pos + 6.0e-4 ms/pos^2).
ATTENTION_BREAK_EVEN = 2800
#: What one more backbone call per step costs, in positions of a forward (session dispatch
#: and less efficient small matrix products). Measured on the real-width model, onnxruntime
#: CPU: split beats packed from S * T of about 20 000 (S = 160, T = 130: 0.97x; S = 420,
#: T = 317: 0.91x) and loses below it (S = 119, T = 95: 1.12x).
CALL_COST = 12
#: Row-length buckets (positions). Lengths beyond the last round up to a multiple of it.
BUCKETS = (64, 96, 128, 192, 256, 384, 512, 768, 1024)
_BEYOND = 256


def bucket_for(length: int, buckets: tuple[int, ...] = BUCKETS) -> int:
    """The smallest bucket holding ``length`` positions (multiples of 256 past the last)."""
    for size in buckets:
        if length <= size:
            return size
    return -(-length // _BEYOND) * _BEYOND


def forward_cost(grids: list[tuple[int, int]]) -> float:
    """Cost of one model evaluation over ``(rows, length)`` grids, in positions."""
    return sum(rows * length * (1.0 + length / ATTENTION_BREAK_EVEN) for rows, length in grids) \
        + CALL_COST * (len(grids) - 1)


def choose_layout(prompts: list[Prompt], candidates: tuple[str, ...] = ("packed", "rows")) -> str:
    """The cheapest exact layout among ``candidates`` under the forward cost model.

    Packing saves the prompt's text positions of the unconditional copy but makes one long
    row; for long targets shorter rows cost less attention than one packed row.
    """
    return min(candidates, key=lambda layout: forward_cost(grid_shapes(prompts, layout)))


def grid_shapes(prompts: list[Prompt], layout: str) -> list[tuple[int, int]]:
    """``(rows, length)`` of each grid of a batch before bucketing."""
    size = len(prompts)
    if layout == "packed":
        return [(size, max(p.length + p.num_target for p in prompts))]
    if layout == "rows":
        return [(2 * size, max(p.length for p in prompts))]
    return [(size, max(p.length for p in prompts)), (size, max(p.num_target for p in prompts))]


def natural_length(prompts: list[Prompt], layout: str) -> int:
    """Length of the longest grid row of a batch before bucketing."""
    return max(length for _, length in grid_shapes(prompts, layout))


class Grid:
    """One backbone input: token ids, audio mask and attention mask of ``rows x length``.

    Every position starts as padding that attends only to itself (no all-False mask row,
    no NaN); :meth:`place` marks a block of valid positions.
    """

    def __init__(self, rows: int, length: int) -> None:
        self.rows, self.length = rows, length
        self.ids = np.full((rows, NUM_CODEBOOKS, length), MASK_ID, dtype=np.int64)
        self.audio_mask = np.zeros((rows, length), dtype=bool)
        self.mask = np.zeros((rows, 1, length, length), dtype=bool)
        diagonal = np.arange(length)
        self.mask[:, 0, diagonal, diagonal] = True

    def place(self, row: int, start: int, ids: np.ndarray, audio_mask: np.ndarray) -> None:
        """Write one block (``ids [8, n]``) at ``start`` of ``row``; it attends to itself."""
        stop = start + ids.shape[1]
        self.ids[row, :, start:stop] = ids
        self.audio_mask[row, start:stop] = audio_mask
        self.mask[row, 0, start:stop, start:stop] = True


class Batch:
    """The static layout of one batch: its grids, and where each item's target frames sit.

    ``pad_to`` rounds every grid's length up (length buckets) and ``pad_rows_to`` its row
    count; padded positions attend only to themselves and no valid position attends to
    them, so valid outputs are unchanged.
    """

    def __init__(self, prompts: list[Prompt], layout: str,
                 pad_to: int | tuple[int, ...] | None = None,
                 pad_rows_to: int | None = None) -> None:
        self.prompts = prompts
        self.layout = layout
        size = len(prompts)
        self.t_lens = [p.num_target for p in prompts]
        self.t_max = max(self.t_lens)
        shapes = grid_shapes(prompts, layout)
        pads = pad_to if isinstance(pad_to, tuple) else (pad_to,) * len(shapes)
        self.grids = [
            Grid(max(rows, pad_rows_to or 0), max(length, pad or 0))
            for (rows, length), pad in zip(shapes, pads, strict=True)
        ]
        # Conditional rows are always in grid 0; the unconditional copies in the last grid.
        cond_grid, uncond_grid = self.grids[0], self.grids[-1]
        uncond_offset = 0 if uncond_grid is cond_grid else cond_grid.rows * cond_grid.length
        # Where each item's target frames sit: (row, start) in its copy's grid.
        cond_slot: list[tuple[int, int]] = []
        uncond_slot: list[tuple[int, int]] = []
        for i, p in enumerate(prompts):
            s_len, t_len = p.length, p.num_target
            if layout == "packed":
                uncond = (i, s_len)
            elif layout == "rows":
                uncond = (size + i, 0)
            else:
                uncond = (i, 0)
            cond_grid.place(i, 0, p.ids, p.audio_mask)
            uncond_grid.place(*uncond, np.full((NUM_CODEBOOKS, t_len), MASK_ID),
                              np.ones(t_len, dtype=bool))
            cond_slot.append((i, s_len - t_len))
            uncond_slot.append(uncond)
        # The scorer sees all grids' hidden states as one flat [positions, hidden] array.
        self.cond_index = np.zeros((size, self.t_max), dtype=np.int64)
        self.uncond_index = np.zeros((size, self.t_max), dtype=np.int64)
        copies = ((self.cond_index, cond_slot, cond_grid, 0),
                  (self.uncond_index, uncond_slot, uncond_grid, uncond_offset))
        for index, slots, grid, offset in copies:
            for i, (row, start) in enumerate(slots):
                index[i, :self.t_lens[i]] = (offset + row * grid.length + start
                                             + np.arange(self.t_lens[i]))
        # Where every valid target cell of every item sits (both copies), so the whole
        # batch's tokens are written with one fancy-indexed assignment per copy and step.
        item = np.concatenate([np.full(t, i, dtype=np.intp) for i, t in enumerate(self.t_lens)])
        frame = np.concatenate([np.arange(t, dtype=np.intp) for t in self.t_lens])
        self._src = (item, frame)
        self._dst = []
        for _, slots, grid, _ in copies:
            slot_rows = np.array([r for r, _ in slots], dtype=np.intp)[item]
            slot_cols = np.array([c for _, c in slots], dtype=np.intp)[item] + frame
            self._dst.append((grid.ids, slot_rows, slot_cols))

    def target_cells(self, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)`` of every target position in ``grid`` (both copies): the only
        positions whose tokens change from step to step."""
        found = [(rows, cols) for ids, rows, cols in self._dst if ids is grid.ids]
        if not found:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
        return (np.concatenate([rows for rows, _ in found]),
                np.concatenate([cols for _, cols in found]))

    def target_slots(self) -> tuple[np.ndarray, np.ndarray]:
        """``(item, frame)`` of every valid target cell, in the order of each copy's cells
        in :meth:`target_cells`."""
        return self._src

    def put_all(self, tokens: np.ndarray) -> None:
        """Write the batch's current tokens ``[B, 8, T_max]`` into both copies."""
        values = tokens[self._src[0], :, self._src[1]]
        for ids, rows, cols in self._dst:
            ids[rows, :, cols] = values
