"""Property-based: every language's normaliser takes any string, gives a string back, raises
nothing (not even one that ``normalize_text`` would catch and log) and ends in bounded time.

The inputs mix any Unicode character (surrogates, controls, every script) with the written
forms the rules look for (numbers, separators, units, currencies, dates, times, ordinals,
control syntax), and runs of those forms alone up to a few thousand characters: the shapes
on which a regular expression backtracks. Each call runs under a watchdog
(``signal.setitimer``; Python's regular expressions and pure-Python code stop for a signal)
of many seconds, where a call takes milliseconds: a call that runs into it is
pathological, whatever the machine.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wyoming_omnivoice.text.normalize import FULL_LANGUAGES, normalize_text, supports_language
from wyoming_omnivoice.text.normalize import other as other_languages

#: Every language with rules: the 27 tables, Chinese and the other languages on by default.
LANGUAGES = (*FULL_LANGUAGES, "zh", *sorted(other_languages.ENABLED))
#: A call that takes this long is pathological (typical calls take milliseconds).
WATCHDOG_S = 20.0
#: Examples per language (derandomized: the same examples on every run).
EXAMPLES = 60

#: Written forms the passes look for, and the characters around them.
FORMS = [
    "0", "1", "2", "7", "12", "21", "100", "1999", "2024", "1.000", "1,000", "1 000", "3,5",
    "21.5", "0.5", "-5", "+49 170 1234567", "0800 123 456", "10:30", "7:05", "23:59:59",
    "24.12.", "24.12.2024", "2024-12-24", "12/24/2024", "1.", "2nd", "3rd", "21st", "3'te",
    "5'i", "°C", "°F", "°", "%", "‰", "$", "€", "£", "¥", "₽", "kr", "zł", "Kč", "Ft", "km/h",
    "m²", "m³", "kWh", "kW", "W", "V", "mm", "cm", "km", "kg", "g", "l", "ml", "h", "min",
    "s", "Uhr", "Std.", "Nr.", "z.B.", "bzw.", "ca.", "ok", "am", "pm", "AM", "PM", "a.m.",
    "½", "¼", "1/2", "3/4", "12-15", "5–7", "x", "×", "·", ".", ",", ":", ";", "-", "–", "—",
    "/", "'", "’", "\"", "(", ")", "[", "]", "[laughter]", "[B EY1 S]", "ZHONG1", "两", "年",
    "月", "日", "時", "分", "点", "号", "元", "度", "시", "분", "개", "번", "원", "時間", "円",
    "в", "г.", "р.", "на", "του", "στις", "ώρα", "€ 3,99", "$3.99", "EUR", "USD", " ", "  ",
    "\n", "\t", "\u00a0", "\u202f", "\u200d", "\u200f", "\ufeff", "\u0301", "\ud800",
    "\udc00", "\x00", "٣", "३", "๓", "１２", "Ⅻ", "²", "⁴",
]
texts = st.one_of(
    # Any characters among the forms.
    st.lists(st.sampled_from(FORMS) | st.text(st.characters(exclude_categories=()),
                                              max_size=12), max_size=120).map("".join),
    # Long runs of forms alone (hundreds to a few thousand characters): where a pattern
    # that backtracks would show.
    st.lists(st.sampled_from(FORMS), min_size=50, max_size=400).map("".join),
)


class Stalled(Exception):
    """The watchdog fired."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    def fire(_signum: int, _frame: object) -> None:
        raise Stalled(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Records(logging.Handler):
    """The warnings a normaliser logs (``normalize_text`` logs a rewrite that raised)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def warnings() -> Iterator[Records]:
    records = Records()
    logger = logging.getLogger("wyoming_omnivoice.text.normalize")
    logger.addHandler(records)
    try:
        yield records
    finally:
        logger.removeHandler(records)


@pytest.mark.slow
@pytest.mark.parametrize("language", LANGUAGES)
@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts)
def test_any_string_gives_a_string_without_error_in_bounded_time(
        warnings: Records, language: str, text: str) -> None:
    warnings.records.clear()
    with watchdog(WATCHDOG_S):
        spoken = normalize_text(text, language)
        supported = supports_language(text)  # any string as a language name too
    assert isinstance(spoken, str) and isinstance(supported, bool)
    failures = [record.getMessage() + "\n" + (record.exc_text or repr(record.exc_info))
                for record in warnings.records]
    assert not failures, failures
