"""Worst-case cost of text preparation, which runs on the server's event loop.

Crafted inputs of ``--max-text-length`` characters (5000 by default) are prepared the
way the server prepares a one-shot request (cleanup, sentence split, grouping) and a
stream (fed one character per ``synthesize-chunk``), with the first-clause cut on as the
server has it by default. Every step is meant to be linear in
the text length; a pattern that backtracks shows up here as hundreds of milliseconds.

    python -m benchmarks.bench_text_prep [--length 5000] [--repeat 3]

Prints milliseconds per input (best of ``--repeat``); no thresholds, figures only. The
"stream/char" column is the total for 5000 one-character chunks (per chunk: that / 5000).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from wyoming_omnivoice.text.cleanup import clean_text
from wyoming_omnivoice.text.prepare import prepare_one_shot, prepare_streamed_sentence
from wyoming_omnivoice.text.sentences import SentenceSplitter

#: Inputs built to make regular expressions backtrack, and ordinary text for comparison.
PATTERNS: dict[str, str] = {
    "'**a ' repeated": "**a ",
    "'__a ' repeated": "__a ",
    "'~~a ' repeated": "~~a ",
    "'*a ' repeated": "*a ",
    "'a **b' repeated": "a **b",
    "'[a](' repeated": "[a](",
    "'![' repeated": "![",
    "'<a ' repeated": "<a ",
    "spaces then 'x'": " ",
    "'\\t ' repeated": "\t ",
    "'- ' repeated": "- ",
    "'| -- ' repeated": "| -- ",
    "'Dr. ' repeated": "Dr. ",
    "'a.' repeated": "a.",
    "'1. ' repeated": "1. ",
    "'http://' repeated": "http://",
    "'\\n ' repeated": "\n ",
    "'ก ' repeated (Thai)": "ก ",
    "'α; ' repeated (Greek)": "α; ",
    "'*' repeated then ';'": "*",
    "'a, ' repeated": "a, ",
    "ordinary reply": "The living room lights are on and it is 21.5 degrees inside. ",
}


def crafted(unit: str, length: int) -> str:
    text = (unit * (length // len(unit) + 1))[:length]
    if unit == "*":
        return text[:-1] + ";"
    return text[:-1] + "x" if unit == " " else text


def best_ms(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def stream_by_char(text: str) -> None:
    splitter = SentenceSplitter(first_clause=True)
    for char in text:
        for sentence in splitter.add(char):
            prepare_streamed_sentence(sentence)
    for sentence in splitter.finish():
        prepare_streamed_sentence(sentence)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'input (' + str(args.length) + ' chars)':28} {'clean_text':>11} "
          f"{'one-shot':>10} {'stream/char':>12}")
    worst = 0.0
    for name, unit in PATTERNS.items():
        text = crafted(unit, args.length)
        clean = best_ms(lambda text=text: clean_text(text), args.repeat)
        one_shot = best_ms(lambda text=text: prepare_one_shot(text, first_clause=True),
                            args.repeat)
        stream = best_ms(lambda text=text: stream_by_char(text), 1)
        worst = max(worst, one_shot)
        print(f"{name:28} {clean:9.2f}ms {one_shot:8.2f}ms {stream:10.2f}ms")
    print(f"worst one-shot preparation: {worst:.2f} ms")


if __name__ == "__main__":
    main()
