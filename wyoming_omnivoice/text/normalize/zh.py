"""Chinese text normalisation: Arabic numerals, times, dates, currency and units -> 汉字.

Number reading uses `cn2an` (MIT; ``an2cn`` and its sentence ``transform``, which already
handles percentages, fractions, ``年月日`` dates and signs). This module adds what cn2an
leaves as symbols: clock times, ISO dates, currency symbols, measurement units and
temperatures below zero (零下).
"""

from __future__ import annotations

import re

import cn2an

_NUM = r"(?P<sign>[-−](?=\d))?(?P<num>\d+(?:\.\d+)?)"
_LEAD = r"(?<![0-9A-Za-z.])"

_UNITS = {
    "°C": "摄氏度", "℃": "摄氏度", "°F": "华氏度", "℉": "华氏度", "°": "度",
    "km/h": "公里每小时", "m/s": "米每秒", "kWh": "千瓦时", "kW": "千瓦", "W": "瓦",
    "V": "伏", "hPa": "百帕", "km": "公里", "cm": "厘米", "mm": "毫米", "m": "米",
    "kg": "公斤", "g": "克", "ml": "毫升", "mL": "毫升", "L": "升", "l": "升", "lx": "勒克斯",
    "dB": "分贝", "µg/m³": "微克每立方米", "μg/m³": "微克每立方米", "h": "小时",
    "min": "分钟", "s": "秒",
}
_TEMPERATURE_UNITS = frozenset({"°C", "℃", "°F", "℉", "°"})
_CURRENCY = {"$": "美元", "US$": "美元", "€": "欧元", "£": "英镑", "¥": "元", "￥": "元",
             "USD": "美元", "EUR": "欧元", "GBP": "英镑", "CNY": "元", "RMB": "元",
             "JPY": "日元"}


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_LONG_NUMBER_RE = re.compile(r"\d{17,}")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ISO_DATE_RE = re.compile(r"(?<![\d\-/])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d\-/])")
_TIME_RE = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?![\d:])")
_CURRENCY_BEFORE_RE = re.compile(rf"(?P<cur>{_alternation(list(_CURRENCY))})\s?{_NUM}")
_CURRENCY_AFTER_RE = re.compile(
    rf"{_LEAD}{_NUM}\s?(?P<cur>{_alternation([c for c in _CURRENCY if c.isalpha()])})"
    r"(?![A-Za-z])"
)
_UNIT_RE = re.compile(rf"{_LEAD}{_NUM}\s?(?P<unit>{_alternation(list(_UNITS))})(?![A-Za-z/²³])")
_PERCENT_RE = re.compile(rf"{_LEAD}{_NUM}\s?[%％]")
# cn2an reads a lone 2 as 二; before these measure words a speaker says 两.
_LIANG_RE = re.compile(
    r"(?<![一二三四五六七八九十百千万亿零点第])二(?=个|位|只|件|次|小时|天|种|张|本|条|台|辆|公里|公斤|千米)"
)


def _an2cn(number: str) -> str:
    if len(number.split(".")[0]) > 16:  # beyond cn2an's range: read digit by digit
        return "".join(cn2an.an2cn(d, "low") if d.isdigit() else "点" for d in number)
    return cn2an.an2cn(number, "low")


def _number(match: re.Match[str], *, temperature: bool = False) -> str:
    words = _an2cn(match.group("num"))
    if match.group("sign"):
        words = ("零下" if temperature else "负") + words
    return words


def _digits(number: str) -> str:
    return "".join(_an2cn(d) for d in number)


def _date(match: re.Match[str]) -> str:
    year, month, day = match.group(1), int(match.group(2)), int(match.group(3))
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return match.group(0)
    return f"{_digits(year)}年{_an2cn(str(month))}月{_an2cn(str(day))}日"


def _time(match: re.Match[str]) -> str:
    hour, minute, second = int(match.group(1)), int(match.group(2)), match.group(3)
    words = ("两" if hour == 2 else _an2cn(str(hour))) + "点"
    if minute:
        words += ("零" if minute < 10 else "") + _an2cn(str(minute)) + "分"
    if second is not None and int(second):
        words += _an2cn(str(int(second))) + "秒"
    return words


def _unit(match: re.Match[str]) -> str:
    unit = match.group("unit")
    return _number(match, temperature=unit in _TEMPERATURE_UNITS) + _UNITS[unit]


def normalize_chinese(text: str) -> str:
    """Rewrite one unprotected Chinese text segment (see `normalize.normalize_text`)."""
    text = _THOUSANDS_RE.sub("", text)
    text = _ISO_DATE_RE.sub(_date, text)
    text = _TIME_RE.sub(_time, text)
    text = _CURRENCY_BEFORE_RE.sub(lambda m: _number(m) + _CURRENCY[m.group("cur")], text)
    text = _CURRENCY_AFTER_RE.sub(lambda m: _number(m) + _CURRENCY[m.group("cur")], text)
    text = _PERCENT_RE.sub(lambda m: ("负" if m.group("sign") else "") + "百分之"
                           + _an2cn(m.group("num")), text)
    text = _UNIT_RE.sub(_unit, text)
    text = _LONG_NUMBER_RE.sub(lambda m: _an2cn(m.group(0)), text)
    text = cn2an.transform(text, "an2cn")
    return _LIANG_RE.sub("两", text)
