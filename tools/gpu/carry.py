#!/usr/bin/env python3
"""What the GPU check's device call(s) carry, and the exact ``run(...)`` calls to make.

    python -m tools.gpu.carry plan            # sizes, then the run(...) call(s) to make
    python -m tools.gpu.carry slim [--out local/gpu-carry]   # for a checkout that is not
                                              # this project: a slim copy + both kit parts

A device call carries at most 64 MiB: the working tree of the checkout the session was
started in (tracked files and untracked ones git does not ignore) plus the ignored paths it
names. ``plan`` measures this checkout's tree and the kit (``local/gpu-kit/call1``,
``call2``, made by ``tools/gpu/wheels.sh``):

* tree + both parts fit: ONE call, ``check.sh all`` carrying both kit folders;
* they do not (this project's tree is about 22 MiB, the kit about 58 MiB): TWO calls, the
  second at once after the first: ``check.sh stash`` carrying part 1 (seconds: it only puts
  the part in /tmp there), then ``check.sh all`` carrying part 2;
* ``slim`` is for a session whose checkout is not this project (a small steering repo, as
  in the first run): it copies the package, tools, benchmarks, config, pyproject.toml,
  README.md and the tiny fixture's tokenizer and vocoder (the random model's donor) into
  ``local/gpu-carry/`` with both parts under its ``local/gpu-kit/``, and prints the one
  call that carries it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 64 * 2**20
#: Room left for what the tree gains before the call (logs, a new file).
MARGIN = 2 * 2**20
KIT = Path("local/gpu-kit")
SLIM_OUT = Path("local/gpu-carry")
SLIM_PATHS = ("wyoming_omnivoice", "tools", "benchmarks", "config", "pyproject.toml",
              "README.md", "tests/fixtures/models/tiny/tokenizer.json",
              "tests/fixtures/models/tiny/audio_tokenizer/higgs_decoder.onnx")
#: Device-call limits (seconds): the whole check, and the stash-only first call.
#: The whole check's deadline (``DEADLINE``) and its call's limit: the summary may run up to
#: 60 s past the deadline.
ALL_COMMAND = "PRECISIONS=fp16-fused,fp16,fp32 DEADLINE=540 bash tools/gpu/check.sh all"
ALL_TIMEOUT_S = 600
STASH_TIMEOUT_S = 90


def tree_files(repo: Path = REPO) -> list[Path]:
    """Files that travel as the working tree: tracked, and untracked but not ignored."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=repo, capture_output=True, check=True).stdout
    return [repo / name for name in sorted(set(out.decode().split("\0"))) if name]


def size_of(paths: list[Path]) -> int:
    total = 0
    for path in paths:
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
        elif path.is_dir():
            total += sum(p.stat().st_size for p in path.rglob("*")
                         if p.is_file() and not p.is_symlink())
    return total


def mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def run_call(command: str, carry: list[str], timeout: int) -> str:
    listed = ", ".join(f'"{c}"' for c in carry)
    return f'run(command="{command}", carry=[{listed}], timeout_s={timeout})'


def plan_calls(tree: int, part1: int, part2: int, limit: int = LIMIT) -> list[str]:
    """The run(...) call(s) for a tree and kit of these sizes (bytes); [] if even one part
    does not fit beside the tree."""
    budget = limit - MARGIN
    call1, call2 = str(KIT / "call1"), str(KIT / "call2")
    if tree + part1 + part2 <= budget:
        return [run_call(ALL_COMMAND, [call1, call2], ALL_TIMEOUT_S)]
    if tree + max(part1, part2) <= budget:
        return [run_call("bash tools/gpu/check.sh stash", [call1], STASH_TIMEOUT_S),
                run_call(ALL_COMMAND, [call2], ALL_TIMEOUT_S)]
    return []


def plan(repo: Path = REPO) -> int:
    tree = size_of(tree_files(repo))
    part1, part2 = size_of([repo / KIT / "call1"]), size_of([repo / KIT / "call2"])
    print(f"working tree {mib(tree)} (tracked + untracked not ignored), kit part 1 "
          f"{mib(part1)}, part 2 {mib(part2)}; limit {mib(LIMIT)} a call "
          f"({mib(MARGIN)} kept free)")
    if not part1 or not part2:
        print("no kit: run `bash tools/gpu/wheels.sh` first")
        return 1
    calls = plan_calls(tree, part1, part2)
    if not calls:
        print("a kit part does not fit beside this tree: make the tree smaller, or run from a "
              "small checkout with `python -m tools.gpu.carry slim`")
        return 1
    if len(calls) == 1:
        print(f"one call ({mib(tree + part1 + part2)}):")
    else:
        print(f"tree + both parts = {mib(tree + part1 + part2)}: two calls, the second AT "
              f"ONCE after the first (the machine stays warm ~30 s; call 1 only stashes part "
              f"1 in /tmp there: {mib(tree + part1)}, then {mib(tree + part2)}):")
    for call in calls:
        print(f"  {call}")
    print("then give_back() unless rerunning at once. Everything comes back under $OUT: "
          "check.log, figures.json, server.json, concurrency.json, server.log")
    return 0


def slim(out: Path, repo: Path = REPO) -> int:
    target = repo / out
    shutil.rmtree(target, ignore_errors=True)
    for name in SLIM_PATHS:
        source = repo / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.pyc", "prepared"))
        elif source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / name)
    for part in ("call1", "call2"):
        if not (repo / KIT / part).is_dir():
            print("no kit: run `bash tools/gpu/wheels.sh` first")
            return 1
        shutil.copytree(repo / KIT / part, target / KIT / part)
    size = size_of([target])
    print(f"{out}: {mib(size)} (slim copy + both kit parts); the session's own tree travels "
          f"too and must fit in the other {mib(LIMIT - size)}")
    if size > LIMIT - MARGIN:
        print("too big for one call")
        return 1
    print("  " + run_call(f"cd {out} && bash tools/gpu/check.sh all", [str(out)],
                          ALL_TIMEOUT_S))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("plan")
    s = sub.add_parser("slim")
    s.add_argument("--out", type=Path, default=SLIM_OUT)
    args = parser.parse_args(argv)
    return plan() if args.command == "plan" else slim(args.out)


if __name__ == "__main__":
    sys.exit(main())
