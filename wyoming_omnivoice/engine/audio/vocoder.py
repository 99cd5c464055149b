"""The vocoder (codes -> 24 kHz waveform), run per item or in length buckets.

The published vocoder takes ``codes [8, N, T]`` and returns ``[N, 1, T * 960]``. Every
reply has its own frame count ``T``. On CUDA each new input shape makes onnxruntime's Conv
kernels set up again (cuDNN descriptors, algorithm choice, and since onnxruntime 1.20 a
cuDNN-frontend execution plan, rebuilt whenever a Conv sees another shape than the last:
onnxruntime#23006 measured 15x slower runs with interleaved shapes). A batch of eight
replies of eight lengths paid that eight times per batch, every batch; eight copies of one
reply paid it once.

:class:`Vocoder` in bucketed mode runs a batch's items in ONE fixed shape instead (the
frame bucket of its longest item, :data:`FRAME_BUCKETS`; every call of the batch the same
rows), two rows per item in the same call:

* the **head** row: the item's codes padded on the right to the bucket; it is exact up to
  ``R`` frames before the item's end, where the padding starts to be seen (``R`` is the
  vocoder's receptive radius);
* the **tail** row: the same codes padded on the *left*, so they end where the call ends;
  its last ``R`` frames see only real codes and the true end, and are exact.

The two are joined at frame ``T - R``. Both parts are the direct decode's values up to
rounding (another shape can pick another convolution algorithm: 1e-5 on the tiny fixture,
the tolerance the vocoder's golden test allows is 1e-4). ``R`` is measured once
(:meth:`Vocoder.receptive_radius`: one frame changed, which output frames move), and a
stitched decode is checked against the direct one before bucketing is used; a vocoder that
is not local (or fails the check) is run per item, unpadded. The published vocoder declares
its batch axis dynamic, but no public caller decodes more than one row per call: before
bucketing is used, a two-row decode is checked against its rows decoded alone, and any error
(onnxruntime's included) or difference turns bucketing off for the model, with one warning.
The CPU default is per item (exact; a CPU pays no setup per shape, and padding costs compute
there).

Its runs keep their working memory in the session's arena (no shrink after each call: that
freed and allocated again on every call); a call is at most :data:`FRAME_BUDGET` rows x
frames, so the arena holds about the largest call a reply needs
(``python -m benchmarks.vocoder_memory`` prints it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph

_LOGGER = logging.getLogger(__name__)

#: Frames of the two-row check.
_ROWS_FRAMES = 32
#: Frame-count buckets of the head (25 frames a second: 1.9 s to 41 s).
FRAME_BUCKETS = (48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
_BEYOND = 256
#: Probe: codes of this many frames, one frame changed in the middle.
_PROBE_FRAMES = 128
#: An output frame "moved" when it changed by more than this share of the peak.
_PROBE_THRESHOLD = 1e-5
#: A radius this large (or more) means "not local": bucketing is not used.
_MAX_RADIUS = 48
#: Extra frames kept on each side of the measured radius.
_MARGIN = 2
#: Frames (rows x frames) one vocoder call takes at most (20 s of audio): its activations,
#: not the batch size, set the vocoder's working memory.
FRAME_BUDGET = 512
#: Frame buckets warmed at start: replies up to 5 s (a short Home Assistant reply).
WARM_FRAMES = 128
#: Largest sample difference between a stitched and a direct decode accepted by the check
#: (the vocoder golden test's tolerance).
CHECK_MAX_ABS = 1e-4


def frame_bucket(frames: int) -> int:
    """The smallest frame bucket holding ``frames`` (multiples of 256 past the last)."""
    for size in FRAME_BUCKETS:
        if frames <= size:
            return size
    return -(-frames // _BEYOND) * _BEYOND


def row_bucket(rows: int) -> int:
    size = 1
    while size < rows:
        size *= 2
    return size


@dataclass
class VocoderStats:
    """What the last :meth:`Vocoder.decode_many` did."""

    seconds: float = 0.0
    #: ``(rows, frames)`` of every vocoder call.
    calls: list[tuple[int, int]] = field(default_factory=list)
    bucketed: bool = False


class Vocoder:
    """The vocoder graph, per item (exact) or in length buckets (see the module doc)."""

    def __init__(self, graph: Graph, *, bucketed: bool = False) -> None:
        self.graph = graph
        #: Asked for; :attr:`active` says whether the probe and the check allowed it.
        self.bucketed = bucketed
        self._radius: int | None = None
        self._checked: bool | None = None
        self.last_stats = VocoderStats()

    # -- single runs ---------------------------------------------------------------------
    def run(self, codes: np.ndarray) -> np.ndarray:
        """The graph on ``codes [8, N, T]``: float32 ``[N, T * hop]``."""
        (wave,) = self.graph.run({"codes": np.ascontiguousarray(codes, dtype=np.int64)},
                                 ["waveform_24k"])
        return np.asarray(wave, dtype=np.float32).reshape(codes.shape[1], -1)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """One item's ``[8, T]`` codes, directly (exact): float32 samples."""
        wave: np.ndarray = self.run(codes[:, None, :])[0]
        return wave

    # -- locality ------------------------------------------------------------------------
    def receptive_radius(self) -> int:
        """Frames an output frame depends on either side (measured once; a vocoder that is
        not local gives :data:`_MAX_RADIUS` or more)."""
        if self._radius is None:
            rng = np.random.default_rng(0)
            codes = rng.integers(0, 1024, (NUM_CODEBOOKS, 1, _PROBE_FRAMES), dtype=np.int64)
            moved = codes.copy()
            middle = _PROBE_FRAMES // 2
            moved[:, :, middle] = (moved[:, :, middle] + 1) % 1024
            a, b = self.run(codes)[0], self.run(moved)[0]
            hop = a.size // _PROBE_FRAMES
            peak = float(np.abs(a).max()) or 1.0
            diff = np.abs(a - b).reshape(_PROBE_FRAMES, hop).max(axis=1)
            # Above run-to-run noise (a CUDA ConvTranspose may sum in any order); an
            # influence below it is at most this at the join, which the check bounds.
            changed = np.flatnonzero(diff > _PROBE_THRESHOLD * peak)
            self._radius = int(np.abs(changed - middle).max()) if changed.size else 0
            _LOGGER.debug("vocoder receptive radius: %d frames", self._radius)
        return self._radius

    @property
    def reach(self) -> int:
        """Frames trusted to the padding's influence (radius plus a margin)."""
        return self.receptive_radius() + _MARGIN

    @property
    def active(self) -> bool:
        """Whether :meth:`decode_many` runs in buckets (asked for, local, checked)."""
        if not self.bucketed:
            return False
        if self._checked is None:
            self._checked = self._check()
        return self._checked

    def _check(self) -> bool:
        problem = self.rows_problem()
        if problem is None:
            try:
                return self._stitch_agrees()
            except Exception as err:  # onnxruntime raises its own error types
                problem = f"a bucketed decode failed ({_first_line(err)})"
        _LOGGER.warning("Vocoder run per item: %s", problem)
        return False

    def rows_problem(self) -> str | None:
        """None when a two-row decode equals its rows decoded alone; else why not (an
        error of the call included)."""
        codes = np.random.default_rng(2).integers(0, 1024, (NUM_CODEBOOKS, 2, _ROWS_FRAMES),
                                                  dtype=np.int64)
        try:
            together = self.run(codes)
            alone = [self.run(codes[:, row:row + 1])[0] for row in range(2)]
        except Exception as err:  # onnxruntime raises its own error types
            return f"a multi-row decode failed ({_first_line(err)})"
        worst = max(float(np.abs(together[row] - alone[row]).max()) for row in range(2))
        if not worst <= CHECK_MAX_ABS:  # NaN fails too
            return (f"a two-row decode differs from its rows decoded alone by {worst:.3g} "
                    f"(more than {CHECK_MAX_ABS:.0e})")
        return None

    def _stitch_agrees(self) -> bool:
        if self.receptive_radius() >= _MAX_RADIUS:
            _LOGGER.info("Vocoder run per item: it is not local (an output frame depends "
                         "on %d frames or more each side)", _MAX_RADIUS)
            return False
        frames = frame_bucket(4 * self.reach) - 5  # padded on both sides
        codes = np.random.default_rng(1).integers(0, 1024, (NUM_CODEBOOKS, frames),
                                                  dtype=np.int64)
        direct = self.decode(codes)
        (stitched,) = self._bucketed([codes], VocoderStats())
        worst = float(np.abs(direct - stitched).max()) if direct.shape == stitched.shape \
            else float("inf")
        if not worst <= CHECK_MAX_ABS:
            _LOGGER.warning("Vocoder run per item: a bucketed decode differs from the direct "
                            "one by %.3g (more than %.0e)", worst, CHECK_MAX_ABS)
            return False
        _LOGGER.info("Vocoder runs in frame buckets (receptive radius %d frames, stitched "
                     "decode within %.1e of the direct one)", self.receptive_radius(), worst)
        return True

    def warm_up(self, batch: int = 1, longest: int = WARM_FRAMES) -> int:
        """Measure the radius, check the stitching, and run the calls of a reply (and of
        ``batch`` replies) in every frame bucket up to ``longest`` frames, so those shapes
        are set up before the first request. Returns the calls run."""
        if not self.active:
            return 0
        calls = 0
        for frames in (b for b in FRAME_BUCKETS if b <= longest):
            length = max(frames - 1, 2 * self.reach)
            for count in sorted({1, batch}):
                self.decode_many([np.zeros((NUM_CODEBOOKS, length), np.int64)] * count)
                calls += len(self.last_stats.calls)
        return calls

    # -- batches -------------------------------------------------------------------------
    def decode_many(self, items: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Every item's ``[8, T_i]`` codes to samples, in as few fixed shapes as allowed."""
        started = time.perf_counter()
        stats = VocoderStats(bucketed=self.active)
        if stats.bucketed:
            waves = self._bucketed(items, stats)
        else:
            waves = []
            for codes in items:
                waves.append(self.decode(codes))
                stats.calls.append((1, codes.shape[1]))
        stats.seconds = time.perf_counter() - started
        self.last_stats = stats
        return waves

    def _bucketed(self, items: Sequence[np.ndarray], stats: VocoderStats) -> list[np.ndarray]:
        """Every item long enough to split in ONE shape: the frame bucket of the longest,
        as many items per call as the frame budget allows, the last call padded to the
        same rows (a CUDA Conv keeps the set-up of one shape only: onnxruntime#23006)."""
        reach = self.reach
        waves: list[np.ndarray | None] = [None] * len(items)
        split = []
        for i, codes in enumerate(items):
            if codes.shape[1] < 2 * reach:  # too short to split: whole, directly
                waves[i] = self.decode(codes)
                stats.calls.append((1, codes.shape[1]))
            else:
                split.append(i)
        if not split:
            return [w for w in waves if w is not None]
        frames = frame_bucket(max(items[i].shape[1] for i in split))
        pairs = 1  # items per call: two rows each, within the frame budget
        while pairs < len(split) and 4 * pairs * frames <= FRAME_BUDGET:
            pairs *= 2
        for first in range(0, len(split), pairs):
            self.decode_stitched(items, split[first:first + pairs], row_bucket(2 * pairs),
                                 frames, waves, stats)
        return [w for w in waves if w is not None]

    def decode_stitched(self, items: Sequence[np.ndarray], chunk: Sequence[int], rows: int,
                        frames: int, waves: list[np.ndarray | None],
                        stats: VocoderStats) -> None:
        """One call of shape ``(rows, frames)``: each item of ``chunk`` as a head row
        (padded on the right) and a tail row (padded on the left), joined at the receptive
        radius into ``waves``."""
        reach = self.reach
        grid = np.zeros((NUM_CODEBOOKS, rows, frames), dtype=np.int64)
        for k, i in enumerate(chunk):
            length = items[i].shape[1]
            grid[:, 2 * k, :length] = items[i]
            grid[:, 2 * k + 1, frames - length:] = items[i]
        stats.calls.append((rows, frames))
        out = self.run(grid)
        hop = out.shape[1] // frames
        for k, i in enumerate(chunk):
            cut = (items[i].shape[1] - reach) * hop
            waves[i] = np.concatenate([out[2 * k, :cut],
                                       out[2 * k + 1, (frames - reach) * hop:]])


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def check_codes(codes: np.ndarray) -> np.ndarray:
    """``codes`` as int64 ``[8, T]``; ValueError when they are no complete code grid."""
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[0] != NUM_CODEBOOKS:
        raise ValueError(f"codes must have shape [8, T], not {list(codes.shape)}")
    if np.any(codes == MASK_ID):
        raise ValueError("codes still hold MASK (1024) cells; the decode is incomplete")
    if codes.size and (codes.min() < 0 or codes.max() >= MASK_ID):
        raise ValueError("codes must be in 0..1023")
    return codes.astype(np.int64, copy=False)
