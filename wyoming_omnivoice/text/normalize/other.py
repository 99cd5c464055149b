"""Other languages that num2words knows: numbers, decimals, ordinals, times, percentages."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from num2words import CONVERTER_CLASSES, num2words

#: Languages whose rules here are on by default.
ENABLED: frozenset[str] = frozenset()

_PLAIN_NUMBER_RE = re.compile(
    r"(?<![0-9A-Za-zÀ-ÿ.,])(?P<sign>[-−](?=\d))?(?P<int>\d+)(?:\.(?P<frac>\d+))?"
    r"(?![0-9A-Za-zÀ-ÿ]|[.,:]\d)"
)


def rules(code: str) -> Callable[[str], str] | None:
    if code not in CONVERTER_CLASSES:
        return None
    from wyoming_omnivoice.text.normalize.passes import sub

    def words(match: re.Match[str]) -> str | None:
        text = match.group(0).replace("−", "-")
        try:
            return num2words(Decimal(text) if "." in text else int(text), lang=code)
        except (InvalidOperation, NotImplementedError, OverflowError, ValueError):
            return None

    return lambda segment: sub(_PLAIN_NUMBER_RE, words, segment)
