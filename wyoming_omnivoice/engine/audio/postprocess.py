"""Output post-processing with upstream's exact semantics, in numpy.

Upstream runs its silence removal through pydub. This module reproduces pydub's behaviour
sample for sample without pydub, audioop or ffmpeg:

- audio is converted to 16-bit as ``(x * 32768).clip(-32768, 32767).astype(int16)``
  (truncation toward zero), so whatever passes through ``remove_silence`` comes back
  quantised to 16 bits;
- positions are whole milliseconds; ms ``m`` is sample ``int(m * (sr / 1000.0))`` and a
  segment of ``n`` samples is ``round(1000 * (n / sr))`` ms long;
- slicing a segment clamps the ms positions to its length; when the end sample lies past
  the data (by less than 1 ms of rounding) the slice is padded with zero samples, and when
  the rounded length ends before the data the trailing samples are dropped;
- the loudness of a window is ``audioop.rms``: ``int(sqrt(sum(x*x) / count))`` over the
  window's samples including padding; a window is silent when its rms is at or below
  ``10 ** (thresh / 20) * 32768``; the edge detector instead tests ``dBFS < thresh``;
- ``detect_silence`` tests windows of ``min_silence_len`` ms every ``seek_step`` ms plus the
  last possible start, and merges silent windows into ranges the way pydub does.

Window loudness is computed for all windows at once from a cumulative sum of squares, so a
30 s clip takes a few milliseconds.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from wyoming_omnivoice.engine.constants import SAMPLE_RATE

_INT16_SCALE = 32768.0
_MAX_AMPLITUDE = 32768.0  # pydub's max_possible_amplitude for 16-bit audio
_MIN_FRAME_RATE = 11025  # pydub's empty start segment; lower rates would be resampled


def to_int16(audio: np.ndarray) -> np.ndarray:
    """Float audio to 16-bit samples as upstream does it (truncation toward zero)."""
    return (np.asarray(audio) * _INT16_SCALE).clip(-32768, 32767).astype(np.int16)


def _length_ms(num_samples: int, sr: int) -> int:
    return round(1000 * (float(num_samples) / sr))


def _ms_to_sample(ms: int | np.ndarray, sr: int) -> int | np.ndarray:
    if isinstance(ms, np.ndarray):
        return (ms * (sr / 1000.0)).astype(np.int64)
    return int(ms * (sr / 1000.0))


def _slice(samples: np.ndarray, start_ms: int, end_ms: int, sr: int) -> np.ndarray:
    """pydub ``segment[start_ms:end_ms]`` for non-negative positions."""
    length = _length_ms(len(samples), sr)
    start = _ms_to_sample(min(start_ms, length), sr)
    end = _ms_to_sample(min(end_ms, length), sr)
    data = samples[start:end]
    missing = (end - start) - len(data)
    if missing > 0 and len(data) > 0:
        if missing > 2 * (sr / 1000.0):
            raise ValueError("slice would pad more than 2 ms of silence")  # pydub raises too
        data = np.concatenate([data, np.zeros(missing, dtype=samples.dtype)])
    return data


class _Energy:
    """Sums of squares of any sample range of one segment, in O(1) per range."""

    def __init__(self, samples: np.ndarray, sr: int) -> None:
        squares = samples.astype(np.int64) ** 2
        self._cumulative = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(squares)])
        self._num_samples = len(samples)
        self._sr = sr
        self.length_ms = _length_ms(len(samples), sr)

    def window_rms(self, start_ms: np.ndarray, end_ms: np.ndarray) -> np.ndarray:
        """``segment[start:end].rms`` for arrays of ms positions (integer, truncated)."""
        start_ms = np.minimum(start_ms, self.length_ms)
        end_ms = np.minimum(end_ms, self.length_ms)
        start = _ms_to_sample(start_ms, self._sr)
        end = _ms_to_sample(end_ms, self._sr)
        clipped_start = np.minimum(start, self._num_samples)
        clipped_end = np.clip(end, clipped_start, self._num_samples)
        available = clipped_end - clipped_start
        expected = np.maximum(end - start, 0)
        # slices padded with zeros (only when some data is present) count the padding
        count = np.where(available > 0, np.maximum(expected, available), 0)
        total = (self._cumulative[clipped_end] - self._cumulative[clipped_start]).astype(
            np.float64
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            rms = np.floor(np.sqrt(total / count))
        return np.where(count > 0, rms, 0.0).astype(np.int64)


def _silence_threshold(silence_thresh_db: float) -> float:
    return 10 ** (float(silence_thresh_db) / 20) * _MAX_AMPLITUDE


def _max_rms_below_dbfs(threshold_db: float) -> int:
    """Largest integer rms whose pydub ``dBFS`` is below ``threshold_db`` (0 is -inf dBFS)."""
    limit = 0
    candidate = 1
    while candidate <= 32768 and 20 * math.log10(candidate / _MAX_AMPLITUDE) < threshold_db:
        limit = candidate
        candidate += 1
    return limit


def detect_silence(
    samples: np.ndarray,
    sr: int,
    min_silence_len: int,
    silence_thresh: float,
    seek_step: int = 1,
) -> list[list[int]]:
    """pydub ``detect_silence`` on 16-bit samples: silent ``[start_ms, end_ms]`` ranges."""
    energy = _Energy(samples, sr)
    seg_len = energy.length_ms
    if seg_len < min_silence_len:
        return []
    last_start = seg_len - min_silence_len
    starts = np.arange(0, last_start + 1, seek_step, dtype=np.int64)
    if last_start % seek_step:
        starts = np.append(starts, last_start)
    rms = energy.window_rms(starts, starts + min_silence_len)
    silent = starts[rms <= _silence_threshold(silence_thresh)]
    if len(silent) == 0:
        return []
    previous = silent[:-1]
    following = silent[1:]
    breaks = (following != previous + seek_step) & (following > previous + min_silence_len)
    break_at = np.flatnonzero(breaks)
    range_starts = np.concatenate([silent[:1], following[break_at]])
    range_ends = np.concatenate([previous[break_at], silent[-1:]]) + min_silence_len
    return [[int(a), int(b)] for a, b in zip(range_starts, range_ends, strict=True)]


def detect_nonsilent(
    samples: np.ndarray,
    sr: int,
    min_silence_len: int,
    silence_thresh: float,
    seek_step: int = 1,
) -> list[list[int]]:
    """pydub ``detect_nonsilent``: the complement of ``detect_silence``, in ms."""
    silent_ranges = detect_silence(samples, sr, min_silence_len, silence_thresh, seek_step)
    seg_len = _length_ms(len(samples), sr)
    if not silent_ranges:
        return [[0, seg_len]]
    if silent_ranges[0][0] == 0 and silent_ranges[0][1] == seg_len:
        return []
    nonsilent = []
    previous_end = 0
    for start, end in silent_ranges:
        nonsilent.append([previous_end, start])
        previous_end = end
    if silent_ranges[-1][1] != seg_len:
        nonsilent.append([previous_end, seg_len])
    if nonsilent[0] == [0, 0]:
        nonsilent.pop(0)
    return nonsilent


def split_on_silence(
    samples: np.ndarray,
    sr: int,
    min_silence_len: int,
    silence_thresh: float,
    keep_silence: int,
    seek_step: int = 1,
) -> list[np.ndarray]:
    """pydub ``split_on_silence``: non-silent pieces widened by ``keep_silence`` ms.

    Neighbouring pieces that would overlap meet at the midpoint of the overlap.
    """
    ranges = [
        [start - keep_silence, end + keep_silence]
        for start, end in detect_nonsilent(samples, sr, min_silence_len, silence_thresh, seek_step)
    ]
    for left, right in itertools.pairwise(ranges):
        if right[0] < left[1]:
            left[1] = (left[1] + right[0]) // 2
            right[0] = left[1]
    seg_len = _length_ms(len(samples), sr)
    return [_slice(samples, max(start, 0), min(end, seg_len), sr) for start, end in ranges]


def detect_leading_silence(
    samples: np.ndarray, sr: int, silence_threshold: float = -50.0, chunk_size: int = 10
) -> int:
    """pydub ``detect_leading_silence``: ms where the leading silence ends."""
    energy = _Energy(samples, sr)
    length = energy.length_ms
    if length <= 0:
        return 0
    starts = np.arange(0, length, chunk_size, dtype=np.int64)
    rms = energy.window_rms(starts, starts + chunk_size)
    loud = np.flatnonzero(rms > _max_rms_below_dbfs(silence_threshold))
    trim = int(starts[loud[0]]) if len(loud) else int(starts[-1]) + chunk_size
    return min(trim, length)


def _remove_silence_edges(
    samples: np.ndarray, sr: int, lead_sil: int, trail_sil: int, threshold: float
) -> np.ndarray:
    start = max(0, detect_leading_silence(samples, sr, threshold) - lead_sil)
    samples = _slice(samples, start, _length_ms(len(samples), sr), sr)
    reversed_samples = samples[::-1]
    start = max(0, detect_leading_silence(reversed_samples, sr, threshold) - trail_sil)
    reversed_samples = _slice(reversed_samples, start, _length_ms(len(reversed_samples), sr), sr)
    return np.ascontiguousarray(reversed_samples[::-1])


def remove_silence_int16(
    samples: np.ndarray, sr: int, mid_sil: int, lead_sil: int, trail_sil: int
) -> np.ndarray:
    """``remove_silence`` on 16-bit samples, returning 16-bit samples."""
    if sr < _MIN_FRAME_RATE:
        raise ValueError(f"sample rate {sr} Hz is below {_MIN_FRAME_RATE} Hz")
    samples = np.asarray(samples, dtype=np.int16)
    if mid_sil > 0:
        pieces = split_on_silence(
            samples, sr, min_silence_len=mid_sil, silence_thresh=-50,
            keep_silence=mid_sil, seek_step=10,
        )
        samples = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)
    return _remove_silence_edges(samples, sr, lead_sil, trail_sil, -50.0)


def remove_silence(
    audio: np.ndarray, sr: int, mid_sil: int, lead_sil: int, trail_sil: int
) -> np.ndarray:
    """Upstream ``remove_silence``: shorten inner silences, trim the edges.

    Silences (below -50 dBFS) longer than ``mid_sil`` ms inside the audio shrink to about
    ``2 * mid_sil`` ms (``mid_sil`` 0 skips this); ``lead_sil`` / ``trail_sil`` ms of the
    edge silences are kept. Returns 1-D float32 audio quantised to 16 bits.
    """
    samples = to_int16(np.asarray(audio).reshape(-1))
    out = remove_silence_int16(samples, sr, mid_sil, lead_sil, trail_sil)
    return out.astype(np.float32) / np.float32(_INT16_SCALE)


def fade_and_pad(
    audio: np.ndarray,
    sr: int = SAMPLE_RATE,
    pad_duration: float = 0.1,
    fade_duration: float = 0.1,
) -> np.ndarray:
    """Linear fade-in/out of ``fade_duration`` s, then ``pad_duration`` s of zeros each side.

    Empty audio is returned unchanged (as upstream).
    """
    if audio.shape[-1] == 0:
        return audio
    fade_samples = int(fade_duration * sr)
    pad_samples = int(pad_duration * sr)
    out = audio.copy()
    if fade_samples > 0:
        k = min(fade_samples, out.shape[-1] // 2)
        if k > 0:
            out[..., :k] *= np.linspace(0, 1, k, dtype=np.float32)
            out[..., -k:] *= np.linspace(1, 0, k, dtype=np.float32)
    if pad_samples > 0:
        silence = np.zeros((*out.shape[:-1], pad_samples), dtype=out.dtype)
        out = np.concatenate([silence, out, silence], axis=-1)
    return out


def adjust_loudness(audio: np.ndarray, ref_rms: float | None) -> np.ndarray:
    """Upstream's loudness rule.

    With a quiet reference (``ref_rms < 0.1``) the output is scaled by ``ref_rms / 0.1``;
    without a reference it is peak-normalised to 0.5; otherwise it is unchanged.
    """
    if ref_rms is not None and ref_rms < 0.1:
        return audio * float(ref_rms) / 0.1
    if ref_rms is None and audio.size:
        peak = float(np.abs(audio).max())
        if peak > 1e-6:
            return np.asarray(audio / peak * 0.5)
    return audio


def post_process(
    audio: np.ndarray,
    ref_rms: float | None,
    postprocess_output: bool = True,
    sr: int = SAMPLE_RATE,
) -> np.ndarray:
    """Upstream ``_post_process_audio``: 1-D float32 decoder output -> 1-D float32 result.

    Steps: ``remove_silence(500, 100, 100)`` when ``postprocess_output`` (quantises to 16
    bits), loudness (``adjust_loudness``), 100 ms fades, 100 ms of zeros on each side.
    Unlike upstream, audio that is silent throughout (nothing left after silence removal)
    gives an empty array instead of an error.
    """
    audio = np.asarray(audio).reshape(-1)
    if postprocess_output:
        audio = remove_silence(audio, sr, mid_sil=500, lead_sil=100, trail_sil=100)
    audio = adjust_loudness(audio, ref_rms)
    return fade_and_pad(audio, sr, pad_duration=0.1, fade_duration=0.1)


def cross_fade_chunks(
    chunks: Sequence[np.ndarray], sr: int = SAMPLE_RATE, silence_duration: float = 0.3
) -> np.ndarray:
    """Join the audio of long-text chunks (upstream ``cross_fade_chunks``).

    With ``n = int(silence_duration * sr) // 3`` (2400 at 24 kHz): the previous audio fades
    out over its last ``n`` samples, ``n`` zeros follow, then the next chunk fading in over
    its first ``n`` samples. There is no overlap.
    """
    if not chunks:
        raise ValueError("cross_fade_chunks needs at least one chunk")
    if len(chunks) == 1:
        return chunks[0]
    fade_n = int(silence_duration * sr) // 3
    merged = np.array(chunks[0], copy=True)
    for chunk in chunks[1:]:
        fade_out_n = min(fade_n, merged.shape[-1])
        if fade_out_n > 0:
            merged[..., -fade_out_n:] *= np.linspace(1, 0, fade_out_n, dtype=np.float32)
        gap = np.zeros((*merged.shape[:-1], fade_n), dtype=np.float32)
        incoming = np.array(chunk, copy=True)
        fade_in_n = min(fade_n, incoming.shape[-1])
        if fade_in_n > 0:
            incoming[..., :fade_in_n] *= np.linspace(0, 1, fade_in_n, dtype=np.float32)
        merged = np.concatenate([merged, gap, incoming], axis=-1)
    return merged


def trim_long_audio(
    audio: np.ndarray,
    sr: int,
    max_duration: float = 15.0,
    min_duration: float = 3.0,
    trim_threshold: float = 20.0,
) -> np.ndarray:
    """Upstream ``trim_long_audio`` for reference clips (1-D float in, 1-D float32 out).

    Audio longer than ``trim_threshold`` s is cut at the last start of non-silent audio
    (-40 dBFS, 100 ms) at or before ``max_duration`` s, or at ``max_duration`` s when that
    start is before ``min_duration`` s. Shorter audio is returned unchanged (not quantised).
    """
    audio = np.asarray(audio).reshape(-1)
    if audio.shape[-1] / sr <= trim_threshold:
        return audio
    samples = to_int16(audio)
    nonsilent = detect_nonsilent(samples, sr, min_silence_len=100, silence_thresh=-40, seek_step=10)
    if not nonsilent:
        return audio
    max_ms = int(max_duration * 1000)
    min_ms = int(min_duration * 1000)
    best_split = 0
    for start, end in nonsilent:
        if best_split < start <= max_ms:
            best_split = start
        if end > max_ms:
            break
    if best_split < min_ms:
        best_split = min(max_ms, _length_ms(len(samples), sr))
    trimmed = _slice(samples, 0, best_split, sr)
    return trimmed.astype(np.float32) / np.float32(_INT16_SCALE)
