"""Print, for a file of sentences per language, input -> output side by side.

Reads ``tests/text/normalize_cases/<lang>.tsv`` (``written<TAB>spoken``, the spoken form
written by hand) or any file given, normalises each written sentence and prints it next
to the result, marking lines where the result differs from the expected spoken form, so a
reviewer can read a language at a glance::

    python tools/normalize_side_by_side.py de fr        # two languages
    python tools/normalize_side_by_side.py ja ko tr el ro   # issue 32's languages
    python tools/normalize_side_by_side.py              # every language with a file
    python tools/normalize_side_by_side.py --file my_sentences.tsv --language nl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "text" / "normalize_cases"


def read_cases(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(written, accepted spoken forms, none when the file gives none) for every
    non-comment line of ``path``; the first spoken form is the expected one, further
    tab-separated columns are other readings accepted as natural."""
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        written, *spoken = line.split("\t")
        cases.append((written, tuple(s for s in spoken if s)))
    return cases


def side_by_side(language: str, path: Path) -> int:
    """Print one language's sentences; return how many differ from the expected form."""
    from wyoming_omnivoice.text.normalize import normalize_text

    wrong = 0
    print(f"== {language} ({path.name})")
    for written, expected in read_cases(path):
        spoken = normalize_text(written, language)
        mark = " " if not expected or spoken in expected else "✗"
        wrong += mark != " "
        print(f"{mark} {written}\n    -> {spoken}")
        if mark != " ":
            print(f"    != {' | '.join(expected)}")
    return wrong


def main() -> int:
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("languages", nargs="*", help="language ids (default: every file)")
    parser.add_argument("--file", type=Path, help="a sentence file of your own")
    parser.add_argument("--language", help="its language, with --file")
    args = parser.parse_args()
    if args.file is not None:
        if not args.language:
            parser.error("--file needs --language")
        jobs = [(args.language, args.file)]
    else:
        languages = args.languages or sorted(p.stem for p in CASES.glob("*.tsv")
                                             if p.stem != "ha_nouns")
        jobs = [(lang, CASES / f"{lang}.tsv") for lang in languages]
    wrong = total = 0
    for language, path in jobs:
        wrong += side_by_side(language, path)
        total += len(read_cases(path))
    print(f"\n{total - wrong}/{total} as expected")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
