"""Korean numerals: Sino-Korean ("이십일", "만 이천오백": num2words' cardinals) and native
Korean ("하나", "둘"; before a counter "한", "두", "세", "네", "스무", "스물한"), which
num2words does not have (its Korean ordinals also fail on round thousands: 1000, 2020).
"""

from __future__ import annotations

from wyoming_omnivoice.text.normalize import numbers as N

_SINO_DIGITS = ("영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구")
_NATIVE_UNITS = ("", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉")
_NATIVE_BEFORE = {"하나": "한", "둘": "두", "셋": "세", "넷": "네"}
_NATIVE_TENS = ("", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔")


def sino(value: int) -> str:
    """Sino-Korean, num2words' cardinal: "이십일", "천구백구십구", "만 이천오백"; 0 is "영"."""
    return N.cardinal(value, "ko")


def digits(text: str) -> str:
    """Digit by digit: "05" -> "영오"."""
    return "".join(_SINO_DIGITS[int(d)] for d in text)


def native(value: int, before_counter: bool = True) -> str:
    """Native Korean for 1-99 ("일곱", "스물하나"; before a counter "한", "두", "스무",
    "스물한"); from 100 on, and for 0, the Sino-Korean number."""
    if not 1 <= value <= 99:
        return sino(value)
    tens, unit = divmod(value, 10)
    if unit == 0:
        return "스무" if tens == 2 and before_counter else _NATIVE_TENS[tens]
    word = _NATIVE_UNITS[unit]
    if before_counter:
        word = _NATIVE_BEFORE.get(word, word)
    return _NATIVE_TENS[tens] + word
