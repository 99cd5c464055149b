"""The HTTP side's line, part of the service's one admission layer: a few at a time in
arrival order, a bounded line behind them, ``busy`` beyond it."""

from __future__ import annotations

import asyncio

import pytest

from wyoming_omnivoice.speech import BUSY, RequestError, WaitingLine


async def test_turns_come_in_order_and_a_full_line_is_busy() -> None:
    line = WaitingLine(1, 1, what="HTTP syntheses", limit_name="web synthesis queue limit")
    await line.enter()  # the one turn
    order: list[str] = []

    async def second() -> None:
        async with line.turn():
            order.append("second")

    waiting = asyncio.create_task(second())
    await asyncio.sleep(0)  # it waits in the line
    with pytest.raises(RequestError) as refused:
        await line.enter()
    assert refused.value.code == BUSY
    assert "1 HTTP syntheses are waiting (web synthesis queue limit)" in str(refused.value)
    assert order == []
    line.leave()
    await asyncio.wait_for(waiting, 5)
    assert order == ["second"]
    await asyncio.wait_for(line.enter(), 5)  # the turn was given back
