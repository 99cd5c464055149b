"""Chinese text normalisation: Arabic numerals, times, dates, currency and units -> 汉字.

Number reading uses `cn2an` (MIT; ``an2cn`` and its sentence ``transform``, which already
handles percentages, fractions, ``年月日`` dates, years read digit by digit and signs).
This module adds what cn2an leaves as symbols or reads the formal way: 两 before measure
words, units, times and 千/万/亿 ("两分钟", "两点半", "两千元", "两万"); clock times, ISO
dates, ranges ("十到十二摄氏度"), currency symbols (元 as 元角分), measurement units,
temperatures below zero (零下), phone numbers (digit by digit, 1 as 幺), IP addresses and
model numbers ("RTX 四零九零"). WeTextProcessing would do the same through pynini and
compiled FSTs (a native dependency of tens of MB); cn2an plus these rules runs offline in
pure Python.
"""

from __future__ import annotations

import re
import unicodedata

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
             "JPY": "日元", "元": "元"}
# Measure words, time units and units before which 2 is said 两 ("两个", "两分钟").
_MEASURE = ("个|位|只|件|次|种|张|本|条|台|辆|部|间|岁|天|周|个月|小时|分钟|秒|点|倍|遍|人|名|盏|扇"
            "|组|项|款|份|杯|瓶|块|斤|公斤|公里|千米|米|升|度|瓦|千瓦|元|年(?!级)|分(?!之)")


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# A decimal digit of another script (full-width "１２", Arabic-Indic "١٢"): the patterns
# here match it (``\d`` is any decimal digit), cn2an reads only ASCII digits.
_OTHER_DIGIT_RE = re.compile(r"(?![0-9])\d")
_LONG_NUMBER_RE = re.compile(r"\d{17,}")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ISO_DATE_RE = re.compile(r"(?<![\d\-/])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d\-/])")
_TIME_RE = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?(?![\d:])")
_PHONE_RE = re.compile(
    r"(?<![\d.])(?:\+(?P<cc>\d{1,3})[ -]?)?(?P<body>1[3-9]\d{9}|1[3-9]\d[ -]\d{4}[ -]\d{4}"
    r"|0\d{2,3}[ -]\d{7,8})(?![\d.])"
)
_IP_RE = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
_MODEL_RE = re.compile(r"(?<![A-Za-z])(?P<m>[A-Z]{2}[A-Za-z]*+[- ]?)(?P<d>\d{3,4})(?![\d.])")
_UNIT_ALT = _alternation(list(_UNITS))
_RANGE_RE = re.compile(
    rf"(?<![\d\-.])(?P<a>\d{{1,4}}(?:\.\d+)?)\s?[-~～–]\s?(?P<b>\d{{1,4}}(?:\.\d+)?)"
    rf"(?=\s?(?:{_UNIT_ALT}|[%％]|[\u4e00-\u9fff]))"
)
_CURRENCY_BEFORE_RE = re.compile(rf"(?P<cur>{_alternation([c for c in _CURRENCY if c != '元'])})"
                                 rf"\s?{_NUM}")
_CURRENCY_AFTER_RE = re.compile(
    rf"{_LEAD}{_NUM}\s?(?P<cur>{_alternation([c for c in _CURRENCY if c.isalpha()])})"
    r"(?![A-Za-z])"
)
_UNIT_RE = re.compile(rf"{_LEAD}{_NUM}\s?(?P<unit>{_UNIT_ALT})(?![A-Za-z/²³])")
_PERCENT_RE = re.compile(rf"{_LEAD}{_NUM}\s?[%％]")
_LIANG_DIGIT_RE = re.compile(rf"(?<![\d.第])2(?=\s?(?:{_MEASURE}))")
# 二 leading a number before 千/万/亿 is said 两 ("两千", "两万"), inside one it is not.
_LIANG_LARGE_RE = re.compile(r"(?<![一二三四五六七八九十百千万亿零点两第])二(?=[千万亿])")


def _an2cn(number: str) -> str:
    if len(number.split(".")[0]) > 16:  # beyond cn2an's range: read digit by digit
        return "".join(cn2an.an2cn(d, "low") if d.isdigit() else "点" for d in number)
    return _LIANG_LARGE_RE.sub("两", cn2an.an2cn(number, "low"))


def _number(match: re.Match[str], *, temperature: bool = False) -> str:
    number = match.group("num")
    words = "两" if number == "2" and not temperature else _an2cn(number)
    if match.group("sign"):
        words = ("零下" if temperature else "负") + words
    return words


def _digits(number: str, one: str = "一") -> str:
    return "".join(one if d == "1" else cn2an.an2cn(d, "low") for d in number)


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


def _phone(match: re.Match[str]) -> str:
    groups = re.findall(r"\d+", match.group("body"))
    words = "，".join(_digits(group, "幺") for group in groups)
    if match.group("cc"):
        words = f"加{_digits(match.group('cc'), '幺')}，{words}"
    return words


def _money(match: re.Match[str]) -> str:
    name = _CURRENCY[match.group("cur")]
    number = match.group("num")
    sign = "负" if match.group("sign") else ""
    if name != "元" or "." not in number or len(number.split(".")[1]) > 2:
        return sign + _number(match) + name
    whole, cents = number.split(".")
    jiao, fen = int(cents.ljust(2, "0")[0]), int(cents.ljust(2, "0")[1])
    words = f"{_an2cn(whole)}元" if int(whole) else ""
    if jiao:
        words += f"{_an2cn(str(jiao))}角"
    elif fen and words:
        words += "零"
    if fen:
        words += f"{_an2cn(str(fen))}分"
    return sign + (words or "零元")


def _unit(match: re.Match[str]) -> str:
    unit = match.group("unit")
    return _number(match, temperature=unit in _TEMPERATURE_UNITS) + _UNITS[unit]


def normalize_chinese(text: str) -> str:
    """Rewrite one unprotected Chinese text segment (see `normalize.normalize_text`)."""
    text = _OTHER_DIGIT_RE.sub(lambda m: str(unicodedata.decimal(m.group())), text)
    text = _THOUSANDS_RE.sub("", text)
    text = _ISO_DATE_RE.sub(_date, text)
    text = _PHONE_RE.sub(_phone, text)
    text = _IP_RE.sub(lambda m: "点".join(_digits(p) for p in m.group(0).split(".")), text)
    text = _MODEL_RE.sub(lambda m: m.group("m").rstrip(" -") + _digits(m.group("d")), text)
    text = _TIME_RE.sub(_time, text)
    text = _RANGE_RE.sub(lambda m: f"{m.group('a')}到{m.group('b')}", text)
    text = _CURRENCY_BEFORE_RE.sub(_money, text)
    text = _CURRENCY_AFTER_RE.sub(_money, text)
    text = _PERCENT_RE.sub(lambda m: ("负" if m.group("sign") else "") + "百分之"
                           + _an2cn(m.group("num")), text)
    text = _UNIT_RE.sub(_unit, text)
    text = _LONG_NUMBER_RE.sub(lambda m: _an2cn(m.group(0)), text)
    text = _LIANG_DIGIT_RE.sub("两", text)
    text = cn2an.transform(text, "an2cn")
    return _LIANG_LARGE_RE.sub("两", text)
