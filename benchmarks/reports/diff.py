"""Where two texts first differ, said so a person can find it: the line and column and each
text's part there. The checks that a committed artifact is what its inputs build (tables, the
report page, the figures' SVGs) all answer "where" with this one rule; `first_changed` says
which of a rebuilt set of files differs, and `artifact_main` is the command of an artifact
built from the runs (build it, or `--check` it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

#: (runs, out) -> (ok, why): whether the committed artifact under `out` is what `runs` build
Check = Callable[[Path, Path], "tuple[bool, str]"]
#: (runs, out) -> (what to print, a note for stderr or None): build the artifact under `out`
Build = Callable[[Path, Path], "tuple[str, str | None]"]


def artifact_main(
    argv: Sequence[str] | None, *, prog: str, label: str, description: str, check: Check,
    build: Build,
) -> int:  # fmt: skip
    """`prog [--runs results/runs] [--out results] [--check]`: build the artifact and print it,
    or with `--check` write nothing and print `<label>: ok|NOT BACKED: <why>` (exit 1 when not
    backed)."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--runs", type=Path, default=Path("results/runs"))
    p.add_argument("--out", type=Path, default=Path("results"))
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 unless current")
    args = p.parse_args(argv)
    if args.check:
        ok, why = check(args.runs, args.out)
        print(f"{label}: {'ok' if ok else 'NOT BACKED'}: {why}")
        return 0 if ok else 1
    shown, note = build(args.runs, args.out)
    print(shown)
    if note:
        print(note, file=sys.stderr)
    return 0


def first_changed(committed: Path, rebuilt: Path, names: Iterable[str]) -> Path | None:
    """The first of `names` under `committed` that is missing or is not, byte for byte, the
    file of that name under `rebuilt`; None when every one is."""
    for name in names:
        theirs = committed / name
        if not theirs.exists() or theirs.read_bytes() != (rebuilt / name).read_bytes():
            return theirs
    return None


def first_change(old: list[str], new: list[str]) -> tuple[int, int, str, str]:
    """Where two texts (as lines) first differ: the line and column (from 1) and each text's
    part around it, what a person needs to find the change."""
    at = _first_difference(old, new)
    a, b = (lines[at] if at < len(lines) else "" for lines in (old, new))
    col = _first_difference(list(a), list(b))
    return at + 1, col + 1, _around(a, col), _around(b, col)


def _first_difference(old: list[str], new: list[str]) -> int:
    """Where two sequences (of lines, or of characters) first differ."""
    differ = (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
    return next(differ, min(len(old), len(new)))


def _around(line: str, col: int) -> str:
    """The part of `line` around column `col` (what a person needs to find the change)."""
    start = max(0, col - 30)
    return ("…" if start else "") + line[start : col + 40] + ("…" if col + 40 < len(line) else "")
