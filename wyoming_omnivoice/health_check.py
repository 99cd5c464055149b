"""Health check for containers: a real Wyoming describe -> info round trip.

``python -m wyoming_omnivoice.health_check --uri tcp://127.0.0.1:10200`` exits 0 when the
server answers ``describe`` with an ``info`` whose TTS program is installed, and 1 with the
reason on stderr otherwise: connection refused, no answer within the timeout, an ``error``
event, no TTS program, or a program the server reports as not installed (the server does
that when its synthesis worker died).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.info import Describe, Info

DEFAULT_URI = "tcp://127.0.0.1:10200"
DEFAULT_TIMEOUT_S = 15.0


class Unhealthy(Exception):
    """The server did not prove that it can synthesize; the message says why."""


async def probe(uri: str, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    """Describe the server at ``uri``; return a one-line summary or raise ``Unhealthy``."""
    try:
        return await asyncio.wait_for(_describe(uri), timeout=timeout)
    except TimeoutError as err:
        raise Unhealthy(f"no info from {uri} within {timeout:g} s") from err
    except OSError as err:
        raise Unhealthy(f"cannot connect to {uri}: {err.strerror or err}") from err
    except ValueError as err:  # raised by AsyncClient.from_uri for an unusable URI
        raise Unhealthy(f"bad URI {uri!r}: {err}") from err


async def _describe(uri: str) -> str:
    async with AsyncClient.from_uri(uri) as client:
        await client.write_event(Describe().event())
        while True:
            event = await client.read_event()
            if event is None:
                raise Unhealthy(f"{uri} closed the connection without sending info")
            if Error.is_type(event.type):
                error = Error.from_event(event)
                raise Unhealthy(f"{uri} answered with an error: {error.text} ({error.code})")
            if Info.is_type(event.type):
                return _judge(Info.from_event(event))


def _judge(info: Info) -> str:
    if not info.tts:
        raise Unhealthy("the server offers no text-to-speech program")
    broken = [program.name for program in info.tts if not program.installed]
    if broken:
        raise Unhealthy(
            f"TTS program {', '.join(broken)} is not available "
            "(the synthesis worker stopped; see the server log)"
        )
    program = info.tts[0]
    return f"{program.name} {program.version or ''} with {len(program.voices)} voices".replace(
        "  ", " "
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wyoming_omnivoice.health_check",
        description="Exit 0 when the Wyoming TTS server answers describe with a usable info.",
    )
    parser.add_argument("--uri", default=DEFAULT_URI, help=f"server URI (default {DEFAULT_URI})")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds to wait for the answer (default {DEFAULT_TIMEOUT_S:g})",
    )
    args = parser.parse_args(argv)
    try:
        summary = asyncio.run(probe(args.uri, args.timeout))
    except Unhealthy as err:
        print(f"unhealthy: {err}", file=sys.stderr)
        return 1
    print(f"healthy: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
