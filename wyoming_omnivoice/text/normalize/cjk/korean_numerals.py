"""Korean numerals: Sino-Korean ("이십일", "만 이천오백") and native Korean ("하나", "둘";
before a counter "한", "두", "세", "네", "스무", "스물한"). num2words' Korean fails on round
thousands (1000, 2020), so both are ours.
"""

from __future__ import annotations

_SINO_DIGITS = ("영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구")
_SINO_PLACES = ((1000, "천"), (100, "백"), (10, "십"))
_GROUPS = ((10**12, "조"), (10**8, "억"), (10**4, "만"))
_NATIVE_UNITS = ("", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉")
_NATIVE_BEFORE = {"하나": "한", "둘": "두", "셋": "세", "넷": "네"}
_NATIVE_TENS = ("", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔")


def _below_10000(value: int) -> str:
    words = []
    for place, name in _SINO_PLACES:
        count, value = divmod(value, place)
        if count:
            words.append(("" if count == 1 else _SINO_DIGITS[count]) + name)
    if value:
        words.append(_SINO_DIGITS[value])
    return "".join(words)


def sino(value: int) -> str:
    """"이십일", "천구백구십구", "만 이천오백", "일억"; 0 is "영"."""
    if value == 0:
        return "영"
    if value >= 10**16:
        return "".join(_SINO_DIGITS[int(d)] for d in str(value))
    words = []
    for size, name in _GROUPS:
        count, value = divmod(value, size)
        if count:
            words.append(("" if count == 1 and size == 10**4 else _below_10000(count)) + name)
    if value:
        words.append(_below_10000(value))
    return " ".join(words)


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
