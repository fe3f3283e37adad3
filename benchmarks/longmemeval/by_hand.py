"""List the longmemeval_local answers nobody has read yet, to add their hand verdicts:

    python -m benchmarks.longmemeval.by_hand [--runs results/runs]

Each prints as question, gold, the arms that gave it and the answer (lines starting with #),
then the CSV row to fill and add to results/longmemeval_local/verdicts_by_hand.csv (format and
rules: benchmarks/scoring/hand_verdicts.py); tests/test_by_hand.py fails until each has one.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from benchmarks.longmemeval.tables.shipped import with_labels
from benchmarks.reports.frame import collect, questions_of
from benchmarks.results.loader import NoRuns
from benchmarks.scoring.hand_verdicts import (
    FIELDS,
    LONGMEMEVAL_LOCAL,
    ROOT,
    BadVerdicts,
    flat,
    load,
    row,
)


def unread(runs: Path, path: Path = LONGMEMEVAL_LOCAL) -> list[tuple[dict[str, str], str]]:
    """The distinct answers of the longmemeval_local runs under `runs` that `path` has no
    verdict on: each as a row to fill (verdict and reason "?") and a readable block (question,
    gold, the arms that gave it, the whole answer) to judge it by."""
    df = collect(runs, "longmemeval_local")
    q = with_labels(questions_of(runs, "longmemeval_local", df), df, load(path))
    todo = []
    for (file, qid, _), g in q[q["by_hand"].isna()].groupby(["file", "id", "key"], sort=True):
        first = g.iloc[0]
        block = (
            f"# {file} {qid} ({first['type']}): {flat(first['question'])}\n"
            f"# gold: {flat(first['gold'])}\n# arms: {', '.join(sorted(set(g['arm'])))}\n"
            f"# answer: {flat(first['prediction'])}"
        )
        todo.append((row(file, qid, first["prediction"], "?", "?"), block))
    return todo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.longmemeval.by_hand",
        description="List the longmemeval_local answers that have no hand verdict yet: each as "
        "its question, gold and whole answer (lines starting with #) and the CSV row to fill "
        f"(verdict correct or wrong, and why) and add to {LONGMEMEVAL_LOCAL.relative_to(ROOT)}.",
    )
    parser.add_argument(
        "--runs", type=Path, default=ROOT / "results/runs",
        help="the runs root (default: the exported runs, results/runs)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        todo = unread(args.runs)
    except (BadVerdicts, NoRuns) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for filled, block in todo:
        line = io.StringIO()
        csv.DictWriter(line, fieldnames=FIELDS, lineterminator="\n").writerow(filled)
        print(f"{block}\n{line.getvalue()}")
    print(f"{len(todo)} answer(s) unread", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
