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
* they do not (this project's tree is about 23 MiB, the kit about 58 MiB): TWO calls, the
  second at once after the first: ``check.sh stash`` carrying part 1 (it puts the part in
  /tmp there, then builds the model and prepares its precisions on the CPU: no minute of
  the second call goes to them), then ``check.sh all`` carrying part 2, its ``TIME_LEFT``
  read from status (``budget_left_s``) just before it: the sections fit what is left.
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
#: The precisions measured, the headline (fused) first.
PRECISIONS = "fp16-fused,fp16,fp32"
#: Device seconds a fresh machine takes before the first command runs (2-4 min measured).
START_S = 180
#: The first call: stash, model (~105-136 s) and preparation (~30-60 s), under 300 s.
STASH_COMMAND = f"PRECISIONS={PRECISIONS} bash tools/gpu/check.sh stash"
STASH_TIMEOUT_S = 330
#: The second call; its TIME_LEFT (``status().budget_left_s`` just before it) sets DEADLINE
#: (check.sh: what is left minus 90 s for the summary and the call's return, at most 540).
ALL_COMMAND = f"PRECISIONS={PRECISIONS} TIME_LEFT={{time_left}} bash tools/gpu/check.sh all"
ALL_TIMEOUT_S = 600


def all_call(time_left: int) -> tuple[str, int]:
    """The second call's command and limit for ``time_left`` device seconds."""
    return ALL_COMMAND.format(time_left=time_left), max(60, min(ALL_TIMEOUT_S,
                                                                time_left - 30))


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


def run_call(command: str, timeout: int, carry: list[str]) -> str:
    listed = ", ".join(f'"{c}"' for c in carry)
    return f'run(command="{command}", carry=[{listed}], timeout_s={timeout})'


def plan_calls(tree: int, part1: int, part2: int, limit: int = LIMIT,
               time_left: int = 900) -> list[str]:
    """The run(...) call(s) for a tree and kit of these sizes (bytes) and ``time_left``
    device seconds before the first call (the machine's start included); [] if even one
    part does not fit beside the tree."""
    budget = limit - MARGIN
    call1, call2 = str(KIT / "call1"), str(KIT / "call2")
    left = time_left - START_S
    if tree + part1 + part2 <= budget:
        return [run_call(*all_call(left), [call1, call2])]
    if tree + max(part1, part2) <= budget:
        return [run_call(STASH_COMMAND, STASH_TIMEOUT_S, [call1]),
                run_call(*all_call(left - STASH_TIMEOUT_S), [call2])]
    return []



def plan(repo: Path = REPO, time_left: int = 900) -> int:
    tree = size_of(tree_files(repo))
    part1, part2 = size_of([repo / KIT / "call1"]), size_of([repo / KIT / "call2"])
    print(f"working tree {mib(tree)} (tracked + untracked not ignored), kit part 1 "
          f"{mib(part1)}, part 2 {mib(part2)}; limit {mib(LIMIT)} a call "
          f"({mib(MARGIN)} kept free)")
    if not part1 or not part2:
        print("no kit: run `bash tools/gpu/wheels.sh` first")
        return 1
    calls = plan_calls(tree, part1, part2, time_left=time_left)
    if not calls:
        print("a kit part does not fit beside this tree: make the tree smaller, or run from a "
              "small checkout with `python -m tools.gpu.carry slim`")
        return 1
    if len(calls) == 1:
        print(f"one call ({mib(tree + part1 + part2)}):")
    else:
        print(f"tree + both parts = {mib(tree + part1 + part2)}: two calls, the second AT "
              f"ONCE after the first (the machine stays warm ~30 s; call 1 stashes part 1 in "
              f"/tmp there, builds and prepares the model: {mib(tree + part1)}; then "
              f"{mib(tree + part2)}). Before call 2, put status().budget_left_s in its "
              f"TIME_LEFT and timeout_s = min(600, budget_left_s - 30); planned here for "
              f"{time_left} s now:")
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
    print("  " + run_call(f"cd {out} && PRECISIONS={PRECISIONS} bash tools/gpu/check.sh all",
                          ALL_TIMEOUT_S, [str(out)]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--time-left", type=int, default=900,
                   help="device seconds left now (status's budget_left_s)")
    s = sub.add_parser("slim")
    s.add_argument("--out", type=Path, default=SLIM_OUT)
    args = parser.parse_args(argv)
    return plan(time_left=args.time_left) if args.command == "plan" else slim(args.out)


if __name__ == "__main__":
    sys.exit(main())
