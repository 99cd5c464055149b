"""Size of the ``info`` answer and the time to build and serialise it.

Prints the number of voices and languages, the bytes of the event as written on the wire
(header line + JSON data), and how long building the event takes (the server builds it once
per catalog and reuses it for every describe).

    python -m benchmarks.bench_info [--voices-file FILE]
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

from wyoming.event import write_event

from wyoming_omnivoice.voices.config import build_catalog
from wyoming_omnivoice.wyoming_protocol.info import build_info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--voices-file", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    catalog = build_catalog(args.voices_file)
    start = time.perf_counter()
    for _ in range(args.repeat):
        event = build_info(catalog, streaming=True).event()
    build_ms = (time.perf_counter() - start) / args.repeat * 1000
    sink = io.BytesIO()
    write_event(event, sink)  # the synchronous writer: same bytes as on a socket
    voices = event.data["tts"][0]["voices"]
    tags = {tag for voice in voices for tag in voice["languages"]}
    print(f"voices: {len(voices)}  language tags: {len(tags)}")
    print(f"info event on the wire: {len(sink.getvalue())} bytes "
          f"({len(sink.getvalue()) / 1024:.1f} KiB)")
    print(f"build + serialise: {build_ms:.1f} ms (once per catalog; describes reuse it)")


if __name__ == "__main__":
    main()
