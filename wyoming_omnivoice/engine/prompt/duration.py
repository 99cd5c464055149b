"""Rule-based target length (upstream ``RuleDurationEstimator`` and ``_estimate_target_tokens``).

Every character gets a weight relative to one Latin letter (a CJK ideograph counts 3, a
space 0.2, a digit 3.5, ...). The target length in codec frames is the weight of the text
divided by the speaking rate of a reference (its weight per frame). Short results are
boosted with a cube root below 50 frames, then divided by ``speed`` and truncated.
"""

from __future__ import annotations

import bisect
import math
import unicodedata
from functools import lru_cache

from wyoming_omnivoice.engine.constants import FRAME_RATE

"""Codec frames per second (24 kHz audio, hop 960)."""

DEFAULT_REF_TEXT = "Nice to meet you."
DEFAULT_REF_FRAMES = 25

_LOW_THRESHOLD = 50.0
_BOOST_STRENGTH = 3.0

_WEIGHTS = {
    "cjk": 3.0,
    "hangul": 2.5,
    "kana": 2.2,
    "ethiopic": 3.0,
    "yi": 3.0,
    "indic": 1.8,
    "thai_lao": 1.5,
    "khmer_myanmar": 1.8,
    "arabic": 1.5,
    "hebrew": 1.5,
    "latin": 1.0,
    "cyrillic": 1.0,
    "greek": 1.0,
    "armenian": 1.0,
    "georgian": 1.0,
    "default": 1.0,
}
_PUNCTUATION = 0.5
_SPACE = 0.2
_DIGIT = 3.5
_MARK = 0.0

# (last code point of a Unicode block range, script) in ascending order; a code point takes
# the script of the first range whose end is >= it.
_RANGES: tuple[tuple[int, str], ...] = (
    (0x02AF, "latin"),
    (0x03FF, "greek"),
    (0x052F, "cyrillic"),
    (0x058F, "armenian"),
    (0x05FF, "hebrew"),
    (0x08FF, "arabic"),  # Arabic, Syriac, Arabic Supplement, Extended-A/B
    (0x0DFF, "indic"),  # Devanagari .. Sinhala
    (0x0EFF, "thai_lao"),
    (0x0FFF, "indic"),  # Tibetan
    (0x109F, "khmer_myanmar"),  # Myanmar
    (0x10FF, "georgian"),
    (0x11FF, "hangul"),  # Hangul Jamo
    (0x139F, "ethiopic"),
    (0x177F, "default"),  # Cherokee .. Tagbanwa
    (0x17FF, "khmer_myanmar"),  # Khmer
    (0x18FF, "default"),  # Mongolian, UCAS Extended
    (0x19DF, "indic"),  # Limbu, Tai Le, New Tai Lue
    (0x19FF, "khmer_myanmar"),  # Khmer Symbols
    (0x1C7F, "indic"),  # Buginese .. Ol Chiki
    (0x1C8F, "cyrillic"),  # Cyrillic Extended-C
    (0x1CBF, "georgian"),  # Georgian Extended
    (0x1CFF, "indic"),  # Sundanese Supplement, Vedic Extensions
    (0x1DBF, "latin"),  # Phonetic Extensions (+ Supplement)
    (0x1DFF, "default"),  # Combining Diacritical Marks Supplement
    (0x1EFF, "latin"),  # up to Latin Extended Additional
    (0x30FF, "kana"),  # (everything up to) Hiragana, Katakana
    (0x312F, "cjk"),  # Bopomofo
    (0x318F, "hangul"),  # Hangul Compatibility Jamo
    (0x9FFF, "cjk"),  # up to CJK Unified Ideographs
    (0xA4CF, "yi"),
    (0xA4FF, "default"),  # Lisu
    (0xA63F, "default"),  # Vai
    (0xA69F, "cyrillic"),  # Cyrillic Extended-B
    (0xA6FF, "default"),  # Bamum
    (0xA7FF, "latin"),  # Latin Extended-D
    (0xA82F, "indic"),  # Syloti Nagri
    (0xA87F, "default"),  # Phags-pa
    (0xA95F, "indic"),  # Saurashtra, Devanagari Extended, Kayah Li, Rejang
    (0xA97F, "hangul"),  # Hangul Jamo Extended-A
    (0xA9DF, "indic"),  # Javanese
    (0xA9FF, "khmer_myanmar"),  # Myanmar Extended-B
    (0xAA5F, "indic"),  # Cham
    (0xAA7F, "khmer_myanmar"),  # Myanmar Extended-A
    (0xAAFF, "indic"),  # Tai Viet, Meetei Mayek Extensions
    (0xAB2F, "ethiopic"),  # Ethiopic Extended-A
    (0xAB6F, "latin"),  # Latin Extended-E
    (0xABBF, "default"),  # Cherokee Supplement
    (0xABFF, "indic"),  # Meetei Mayek
    (0xD7AF, "hangul"),  # Hangul Syllables
    (0xFAFF, "cjk"),  # up to CJK Compatibility Ideographs
    (0xFDFF, "arabic"),  # Arabic Presentation Forms-A
    (0xFE6F, "default"),  # Variation Selectors .. Small Form Variants
    (0xFEFF, "arabic"),  # Arabic Presentation Forms-B
    (0xFFEF, "latin"),  # Halfwidth and Fullwidth Forms
)
_ENDS = tuple(end for end, _ in _RANGES)


@lru_cache(maxsize=8192)
def char_weight(char: str) -> float:
    """Speaking weight of one character relative to a Latin letter."""
    code = ord(char)
    if 0x41 <= code <= 0x5A or 0x61 <= code <= 0x7A:
        return _WEIGHTS["latin"]
    if code == 0x20:
        return _SPACE
    if code == 0x0640:  # Arabic tatweel
        return _MARK
    major = unicodedata.category(char)[0]
    if major == "M":
        return _MARK
    if major in ("P", "S"):
        return _PUNCTUATION
    if major == "Z":
        return _SPACE
    if major == "N":
        return _DIGIT
    index = bisect.bisect_left(_ENDS, code)
    if index < len(_RANGES):
        return _WEIGHTS[_RANGES[index][1]]
    return _WEIGHTS["cjk"] if code > 0x20000 else _WEIGHTS["default"]


def text_weight(text: str) -> float:
    """Sum of the character weights, added left to right."""
    return sum(char_weight(char) for char in text)


def estimate_duration_frames(target_text: str, ref_text: str, ref_frames: float) -> float:
    """Estimated frames for ``target_text`` at the rate of ``ref_text`` spoken in ``ref_frames``.

    Returns 0.0 when the reference is empty or weightless (as upstream).
    """
    if ref_frames <= 0 or not ref_text:
        return 0.0
    ref_weight = text_weight(ref_text)
    if ref_weight == 0:
        return 0.0
    estimate = float(text_weight(target_text) / (ref_weight / ref_frames))
    if estimate < _LOW_THRESHOLD:
        return float(_LOW_THRESHOLD * (estimate / _LOW_THRESHOLD) ** (1.0 / _BOOST_STRENGTH))
    return estimate


def estimate_num_frames(
    text: str,
    ref_text: str | None = None,
    ref_num_frames: int | None = None,
    speed: float | None = 1.0,
) -> int:
    """Target length in codec frames (25 per second) for ``text``.

    Without a reference (``ref_num_frames`` or ``ref_text`` missing or empty) the rate of
    "Nice to meet you." in 25 frames is used. ``speed`` > 1 is faster (fewer frames);
    ``None``, 1 or a non-positive speed leave the estimate unchanged.
    """
    if ref_num_frames is None or not ref_text:
        ref_text = DEFAULT_REF_TEXT
        ref_num_frames = DEFAULT_REF_FRAMES
    estimate = estimate_duration_frames(text, ref_text, ref_num_frames)
    if speed is not None and speed > 0 and speed != 1.0:
        estimate = estimate / speed
    return max(1, int(estimate))


def frames_for_duration(seconds: float) -> int:
    """Frames for an explicit duration in seconds (upstream ``max(1, int(d * 25))``)."""
    if not math.isfinite(seconds):
        raise ValueError(f"duration must be a finite number of seconds, got {seconds!r}")
    return max(1, int(seconds * FRAME_RATE))
