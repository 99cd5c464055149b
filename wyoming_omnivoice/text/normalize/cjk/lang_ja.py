"""Japanese: "二十一点五度", "二台", "三時半", "十四時三十分", "十二月三日", "二階",
"五十パーセント", "時速五十キロ", "五百円", "マイナス三度".

Numbers become kanji numerals (num2words: "二十一", "一万二千五百"), which is how a
Japanese reader takes them; the counter after a number ("台", "個", "人", "階", "時",
"分", "円", "年", "月", "日") stays as written, and the reading a counter asks for
("二台" にだい, "三本" さんぼん, "四時" よじ) is left to the voice, which reads kanji.
Unit symbols become their katakana or kanji words ("度", "キロワット時"; "ミリ" and
"センチ" as rain and snow are said); a decimal is
read digit by digit after "点" ("三点四五"); "°F" and "km/h" go before the number
("華氏", "時速"). Words are not separated by spaces: the ones the passes put between a
number and its unit are taken out again (`finish`).
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

MONTHS = tuple(f"{m}月" for m in range(1, 13))  # never matched: dates are digits + 月


def _n(word: str) -> Noun:
    return Noun("", (word,))


UNITS = {
    "°C": _n("度"), "°F": _n("度"), "°": _n("度"), "%": _n("パーセント"),
    "km/h": _n("キロ"), "mph": _n("マイル毎時"), "m/s": _n("メートル毎秒"),
    "kWh": _n("キロワット時"), "kW": _n("キロワット"), "W": _n("ワット"), "V": _n("ボルト"),
    "hPa": _n("ヘクトパスカル"), "km": _n("キロメートル"), "cm": _n("センチ"),
    "mm": _n("ミリ"), "m": _n("メートル"), "kg": _n("キログラム"), "g": _n("グラム"),
    "ml": _n("ミリリットル"), "l": _n("リットル"), "lx": _n("ルクス"),
    "ppm": _n("ピーピーエム"), "µg/m³": _n("マイクログラム毎立方メートル"),
    "dB": _n("デシベル"), "h": _n("時間"), "min": _n("分"), "s": _n("秒"),
}
CURRENCIES = {
    "JPY": (_n("円"), _n("銭")),
    "USD": (_n("ドル"), _n("セント")),
    "EUR": (_n("ユーロ"), _n("セント")),
    "GBP": (_n("ポンド"), _n("ペンス")),
}

_JA = r"\u3000-\u30ff\u4e00-\u9fff\uff01-\uff9f"
_SPACE_RE = re.compile(rf"(?<=[{_JA}]) (?=[{_JA}])")
_NUM = r"[-−]?\d+(?:[.,]\d+)*"
# the word said before the number, once: "時速15km/h" is 時速十五キロ, not 時速時速
_BEFORE_RE = re.compile(rf"(?:(?:時速|秒速|華氏)\s?)?(?<![0-9A-Za-z.,])(?P<n>{_NUM})\s?"
                        r"(?P<u>°F|℉|km/h|㎞/h|キロ毎時|m/s(?![A-Za-z]))")
_YMD_RE = re.compile(r"(?<![0-9A-Za-z/])(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])")
# a month and day without a year, as Japanese writes them in short ("12/25" -> 十二月二十五日)
_MD_RE = re.compile(
    r"(?<![0-9A-Za-z/.,:])(?P<m>1[0-2]|0?[1-9])/(?P<d>3[01]|[12]\d|0?[1-9])(?![\d/])")
_AMPM_RE = re.compile(r"(?P<t>\d{1,2}(?::\d\d)?)\s?(?P<ap>[AaPp])\.?[Mm]\.?(?![A-Za-z])")
# the one-letter units the passes read only after a space ("5 W", not "5W" in English)
_GLUED_UNIT_RE = re.compile(r"(?<=\d)(?=[WVglsh](?![A-Za-z]))")
_RANGE_RE = re.compile(r"(?<=\d)\s?[〜~～]\s?(?=[-−]?\d)")


def _prepare(text: str) -> str:
    """"50km/h" -> "時速50キロ", "3m/s" -> "秒速3メートル", "70°F" -> "華氏70度",
    "2024/12/03" -> "2024年12月3日", "12/25" -> "12月25日", "1500W" -> "1500 W",
    "7:00 PM" -> "午後7:00", "20〜22" -> "20から22"."""
    def before(m: re.Match[str]) -> str:
        if m.group("u") in ("°F", "℉"):
            return f"華氏{m.group('n')}度"
        if m.group("u") == "m/s":
            return f"秒速{m.group('n')}メートル"
        return f"時速{m.group('n')}キロ"

    text = _BEFORE_RE.sub(before, text)
    text = _YMD_RE.sub(lambda m: f"{m.group('y')}年{int(m.group('m'))}月{int(m.group('d'))}日",
                       text)
    text = _MD_RE.sub(lambda m: f"{int(m.group('m'))}月{int(m.group('d'))}日", text)
    text = _AMPM_RE.sub(lambda m: ("午前" if m.group("ap") in "Aa" else "午後") + m.group("t"),
                        text)
    text = _GLUED_UNIT_RE.sub(" ", text)
    return _RANGE_RE.sub("から", text)


def _finish(text: str) -> str:
    return _SPACE_RE.sub("", text)


def _cardinal(value: int) -> str:
    return N.cardinal(value, "ja")


def _decimal(num: Num) -> str:
    """"二十一点五", "三点四五", "零点零五": the digits after the point one by one."""
    digits = "".join(_cardinal(int(d)) for d in num.fraction)
    return f"{_cardinal(int(num.integer))}点{digits}"


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"七時", "十四時三十分", "零時五分"."""
    if minute < 0:
        return None
    return f"{_cardinal(hour)}時" + (f"{_cardinal(minute)}分" if minute else "")


def _date(day: int, month: int, year: int | None, ctx: Context) -> str:
    words = f"{_cardinal(month)}月{_cardinal(day)}日"
    return f"{_cardinal(year)}年{words}" if year is not None else words


RULES = Language(
    code="ja", decimal_word="点", minus_word="マイナス", plus_word="プラス", and_word="",
    range_word="から", months=MONTHS, glue="0-9A-Za-z", thousands=r"[,，]", fraction=r"[.]",
    currency_and=" ", duration_and=False,
    abbreviations={"AM": "午前", "PM": "午後", "Wi-Fi": "ワイファイ"},
    hour_abbr=r"h|時間", minute_abbr=r"min|分", second_abbr=r"s|秒",
    units=UNITS, currencies=CURRENCIES, currency_symbols={"円": "JPY", "￥": "JPY"},
    cardinal_words=_cardinal,
    decimal_words=_decimal,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
