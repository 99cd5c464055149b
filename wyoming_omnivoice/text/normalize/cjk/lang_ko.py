"""Korean: "조명 두 개", "일곱 시 삼십 분", "이십일 점 오 도", "영하 삼 도", "오십 퍼센트",
"십이월 삼일", "유월", "이 층", "두 번째", "오천 원", "한 시간 삼십 분".

The numeral follows the counter after it: native Korean before the counters of things,
people, hours and times ("두 개", "세 명", "두 대", "일곱 시", "한 시간", "두 번째"; from
100 on Sino-Korean), Sino-Korean before the others and before units ("삼십 분", "이십일
도", "이 층", "오천 원", "십오 퍼센트"). A number written against its counter ("2개",
"30분") is said with a space before the counter, as Korean writes number words. Clock
times take native hours and Sino-Korean minutes; an afternoon hour of the 24-hour clock
is said "오후" and the 12-hour hour ("14:30" -> "오후 두 시 삼십 분"). Months are
"유월" and "시월" for 6 and 10. A temperature below zero is "영하".
"""

from __future__ import annotations

import re

from wyoming_omnivoice.text.normalize.cjk import korean_numerals as K
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.table import Context, Language, Noun

#: Counters read with native numerals (longest first where one starts another).
NATIVE_COUNTERS = ("시간", "번째", "개", "명", "대", "시", "살", "마리", "잔", "병", "권",
                   "곳", "군데", "가지", "사람", "켤레", "송이", "그릇", "달")
#: Counters and unit words read with Sino-Korean numerals.
SINO_COUNTERS = ("분", "초", "도", "층", "원", "년", "월", "일", "호", "번", "퍼센트", "킬로",
                 "미터", "와트", "볼트", "리터", "그램", "달러", "유로", "주", "개월", "회", "단계")


def month(value: int) -> str:
    return {6: "유월", 10: "시월"}.get(value, f"{K.sino(value)}월")


def _counter(noun: str | None) -> str | None:
    if not noun:
        return None
    for counter in sorted((*NATIVE_COUNTERS, *SINO_COUNTERS), key=len, reverse=True):
        if noun.startswith(counter):
            return counter
    return None


def _agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    """Native before "개", "명", "시", "시간" ... (`_prepare` has put a space between the
    digits and the counter)."""
    counter = _counter(noun)
    if counter not in NATIVE_COUNTERS:
        return words
    if counter == "번째" and num.integer == "1":
        return "첫"
    return K.native(int(num.integer))


def _unit_agree(num: Num, words: str, noun: str | None, ctx: Context) -> str:
    if noun in ("시간", "개"):
        return K.native(int(num.integer))
    return words


def _n(word: str) -> Noun:
    return Noun("", (word,))


UNITS = {
    "°C": _n("도"), "°F": _n("도"), "°": _n("도"), "%": _n("퍼센트"),
    "km/h": _n("킬로미터"), "mph": _n("마일"), "m/s": _n("미터"),
    "kWh": _n("킬로와트시"), "kW": _n("킬로와트"), "W": _n("와트"), "V": _n("볼트"),
    "hPa": _n("헥토파스칼"), "km": _n("킬로미터"), "cm": _n("센티미터"), "mm": _n("밀리미터"),
    "m": _n("미터"), "kg": _n("킬로그램"), "g": _n("그램"), "ml": _n("밀리리터"),
    "l": _n("리터"), "lx": _n("럭스"), "ppm": _n("피피엠"),
    "µg/m³": _n("마이크로그램 퍼 세제곱미터"), "dB": _n("데시벨"), "h": _n("시간"),
    "min": _n("분"), "s": _n("초"),
}
CURRENCIES = {
    "KRW": (_n("원"), _n("전")),
    "USD": (_n("달러"), _n("센트")),
    "EUR": (_n("유로"), _n("센트")),
    "JPY": (_n("엔"), _n("센")),
    "GBP": (_n("파운드"), _n("펜스")),
}


def _decimal(num: Num) -> str:
    """"이십일 점 오", "삼 점 사오": the digits after the point one by one."""
    return f"{K.sino(int(num.integer))} 점 {K.digits(num.fraction)}"


def _time(hour: int, minute: int, suffix: str, ctx: Context) -> str | None:
    """"일곱 시", "일곱 시 삼십 분", "오후 두 시 삼십 분" (14:30), "자정"."""
    if minute < 0:
        return None
    if hour == 0 and minute == 0:
        return "자정"
    marked = ctx.before in ("오전", "오후", "새벽", "저녁", "밤", "아침", "낮")
    prefix = ""
    if hour > 12 and not marked:
        hour, prefix = hour - 12, "오후 "
    elif hour == 0 and marked:
        hour = 12  # "오전 0:30" -> "오전 열두 시 삼십 분"
    hours = f"{K.native(hour)} 시" if hour else "영 시"
    return prefix + hours + (f" {K.sino(minute)} 분" if minute else "")


def _date(day: int, month_: int, year: int | None, ctx: Context) -> str:
    words = f"{month(month_)} {K.sino(day)}일"
    return f"{K.sino(year)} 년 {words}" if year is not None else words


_NUM = r"[-−]?\d+(?:[.,]\d+)*"
_MONTH_RE = re.compile(
    r"(?<![0-9A-Za-z.,])(?P<m>1[0-2]|0?[1-9])월(?:\s?(?P<d>[12]\d|3[01]|0?[1-9])일)?")
_BELOW_ZERO_RE = re.compile(r"(?<![0-9A-Za-z.,])[-−](?P<n>\d+(?:\.\d+)?)\s?(?P<u>°C|℃|°|도)")
# the word said before the number, once: "시속 15km/h" is 시속 십오 킬로미터
_BEFORE_RE = re.compile(rf"(?:(?:시속|초속|화씨)\s?)?(?<![0-9A-Za-z.,])(?P<n>{_NUM})\s?"
                        r"(?P<u>°F|℉|km/h|m/s)(?![A-Za-z])")
_AMPM_RE = re.compile(r"(?P<t>\d{1,2}(?::\d\d)?)\s?(?P<ap>[AaPp])\.?[Mm]\.?(?![A-Za-z])")
_RANGE_RE = re.compile(r"(?<=\d)\s?[〜~～]\s?(?=[-−]?\d)")
_GLUED_UNIT_RE = re.compile(r"(?<=\d)(?=[WVglsh](?![A-Za-z]))")
_GLUED_COUNTER_RE = re.compile(
    r"(?<=\d)(?=" + "|".join(sorted((*NATIVE_COUNTERS, *SINO_COUNTERS), key=len, reverse=True))
    + ")")
_SPACES_RE = re.compile(r"(?<=\S)  +(?=\S)")
# "번" counts times before a verb or "더" ("3번 실패했습니다" -> 세 번); else it labels
# a number ("2번 조명" -> 이 번 조명)
_TIMES_RE = re.compile(
    r"(?<![0-9A-Za-z.,])(?P<n>\d{1,2})\s?번(?=\s+(?:더|\S*(?:했|됐|었|았|렸|니다)))")


def _prepare(text: str) -> str:
    """Dates ("12월 3일" -> "십이월 삼일"), "영하" for a negative temperature, "시속",
    "초속" and "화씨" before the number, "오전"/"오후" for AM/PM, "~" between numbers."""
    def date(m: re.Match[str]) -> str:
        day = m.group("d")
        return month(int(m.group("m"))) + (f" {K.sino(int(day))}일" if day else "")

    def before(m: re.Match[str]) -> str:
        unit, number = m.group("u"), m.group("n")
        if unit in ("°F", "℉"):
            return f"화씨 {number}도"
        return f"시속 {number} km" if unit == "km/h" else f"초속 {number} m"

    text = _MONTH_RE.sub(date, text)
    text = _TIMES_RE.sub(lambda m: f"{K.native(int(m.group('n')))} 번", text)
    text = _BELOW_ZERO_RE.sub(lambda m: f"영하 {m.group('n')}{m.group('u')}", text)
    text = _BEFORE_RE.sub(before, text)
    text = _AMPM_RE.sub(lambda m: ("오전 " if m.group("ap") in "Aa" else "오후 ") + m.group("t"),
                        text)
    text = _GLUED_UNIT_RE.sub(" ", text)
    text = _GLUED_COUNTER_RE.sub(" ", text)  # "2개" -> "2 개", as number words are written
    return _RANGE_RE.sub(" ~ ", text)


def _finish(text: str) -> str:
    return _SPACES_RE.sub(" ", text.replace(" ~ ", "에서 "))


RULES = Language(
    code="ko", decimal_word="점", minus_word="마이너스", plus_word="플러스", and_word="",
    range_word="에서", months=tuple(f"{m}월" for m in range(1, 13)), glue="0-9A-Za-z",
    thousands=r"[,]", fraction=r"[.]", currency_and=" ", duration_and=False,
    abbreviations={"AM": "오전", "PM": "오후", "Wi-Fi": "와이파이",
                   "TV": "티브이"},
    hour_abbr=r"h|시간", minute_abbr=r"min|분", second_abbr=r"s|초",
    units=UNITS, currencies=CURRENCIES, currency_symbols={"₩": "KRW", "￦": "KRW"},
    cardinal_words=K.sino,
    decimal_words=_decimal,
    agree=_agree, unit_agree=_unit_agree,
    time_words=_time,
    date_words=_date,
    prepare=_prepare,
    finish=_finish,
)
