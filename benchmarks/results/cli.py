"""`pmem-results` (or `python -m benchmarks.results`): look at runs without writing code.

    pmem-results list [--runs runs] [--wide]      every run: profile, n, scores
    pmem-results show runs/table6/<run> [--id ID] [--wrong] [--stage STAGE] [--calls] [--ingest]
    pmem-results export table6 [--runs runs] [--to results/runs] [--finished-only]

`show` prints each question as the reader met it: the question and gold, what the arm read, the
reply and the scores (``--calls``: every model call with its messages; ``--ingest``: the
writer's calls while the memory was built). The same data is a DataFrame away:
``benchmarks.results.load_runs`` and ``load_ingest``.

`list` fits the terminal (``COLUMNS``; 100 columns when it is not one): a block per experiment
headed by its profile, each run with its n and the experiment's scores, long names shortened
with "…" (a run's keeps its hash). ``--wide`` prints the one full table, every value whole.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.results.loader import (
    NoRuns,
    export_runs,
    ingest_calls,
    load_runs,
    load_summaries,
)
from benchmarks.results.records import FAILURE_STAGES, SchemaError

WIDTH = 100
#: `list`'s width where stdout is no terminal and COLUMNS is unset
LIST_WIDTH = 100


def _scores(row: pd.Series) -> str:
    fields = [c for c in row.index if c.endswith(".correct") and pd.notna(row[c])]
    return ", ".join(f"{c.removesuffix('.correct')} {'✓' if row[c] else '✗'}" for c in fields)


def _block(title: str, text: Any, limit: int, *, tail: bool = False) -> list[str]:
    """A titled, wrapped, indented text; past `limit` characters its head is kept (or its tail:
    a writer's prompt ends with the observation it is about)."""
    body = str(text) if text is not None else "(none)"
    if len(body) > limit and tail:
        body = f"[{len(body) - limit:,} earlier characters] … " + body[-limit:]
    elif len(body) > limit:
        body = body[:limit] + f" … [{len(body) - limit:,} more characters]"
    lines = [f"  {title}:"]
    for para in body.splitlines() or [""]:
        lines += textwrap.wrap(para, WIDTH - 4, initial_indent="    ", subsequent_indent="    ")
    return lines


def show(
    folder: Path,
    *,
    only: str | None,
    wrong: bool,
    calls: bool,
    limit: int,
    stage: str | None = None,
) -> int:
    """Print a run's samples; 0, or 2 with one line when the folder is not a finished run (or
    `stage` asks for stages the run does not record)."""
    if not (folder / "summary.json").exists():
        print(f"results: {folder} is not a finished run folder (no summary.json)", file=sys.stderr)
        return 2
    df = load_runs(folder.parent.parent, folder.parent.name, run=folder.name, include_scripted=True)
    if only is not None:
        df = df[df["id"] == only]
    if stage is not None:
        if "stage" not in df.columns:
            print(
                f"results: {folder} records no failure stages (its benchmark attributes none, "
                "or every answer is right)",
                file=sys.stderr,
            )
            return 2
        df = df[df["stage"] == stage]
    if wrong:
        correct = [c for c in df.columns if c.endswith(".correct")]
        df = df[~df[correct].fillna(False).astype(bool).all(axis=1)] if correct else df
    first = df.iloc[0] if len(df) else None
    if first is not None:
        print(f"{folder.name}  [{first['profile']}]  {len(df)} question(s)\n")
    for _, row in df.iterrows():
        print(f"── {row['id']}  ({_scores(row)})")
        if isinstance(row.get("stage"), str):
            print(f"  stage:    {row['stage']}: {row['stage_why']}")
        print(f"  question: {row['question']}")
        print(f"  gold:     {', '.join(map(str, row['golds'] or []))}")
        print(f"  answer:   {row['prediction']}")
        text = row.get("context_text")
        if not isinstance(text, str):
            print("  read:     (no sample log: the run predates samples.jsonl)")
        else:
            ids = row.get("context_ids") or []
            print(
                f"  read:     {row['context_chars']:,} chars, {row['context_tokens']:,} tokens, "
                f"{len(ids)} entries ({', '.join(map(str, ids[:8]))}{' …' * (len(ids) > 8)})"
            )
            print("\n".join(_block("context", text, limit)))
        for i, call in enumerate(row.get("calls") or [] if calls else []):
            head = f"call {i + 1}: {call.get('role')} {call.get('model')}"
            head += " (cached)" if call.get("cached") else ""
            for message in call.get("messages") or []:
                print(
                    "\n".join(
                        _block(f"{head} · {message.get('role')}", message.get("content"), limit)
                    )
                )
            print("\n".join(_block(f"{head} · reply", call.get("reply"), limit)))
        print()
    if first is None:
        print("results: no question matches", file=sys.stderr)
    return 0


def show_ingest(folder: Path, *, limit: int) -> int:
    """Print the model calls a run's ingests made, episode by episode."""
    calls = ingest_calls(folder)
    if not calls:
        print(
            f"results: {folder} has no ingest calls (the arm calls no model while it "
            "writes, or the run predates the sample log)",
            file=sys.stderr,
        )
        return 2
    snapshot = None
    for call in calls:
        if call.get("snapshot") != snapshot:
            snapshot = call.get("snapshot")
            print(f"── ingest of {snapshot}")
        head = f"{call.get('role')} {call.get('model')}" + " (cached)" * bool(call.get("cached"))
        if call.get("messages") is None:  # an embedding batch
            print(f"  {head}: {call.get('texts')} text(s) embedded, e.g. {call.get('first')!r}")
            continue
        last = (call.get("messages") or [{}])[-1]
        prompt = _block(f"{head} · {last.get('role')}", last.get("content"), limit, tail=True)
        print("\n".join(prompt))
        print("\n".join(_block(f"{head} · reply", call.get("reply"), limit)))
    return 0


def _cut(text: str, width: int, *, middle: bool = False) -> str:
    """`text` in at most `width` characters, "…" where it was cut: at the end, or (`middle`)
    keeping its last 10 characters: a run's name ends in its hash."""
    if len(text) <= width:
        return text
    if width < 2:
        return "…"[:width]
    if not middle:
        return text[: width - 1] + "…"
    tail = min(10, (width - 1) // 2)
    return text[: width - 1 - tail] + "…" + text[len(text) - tail :]


def _n(row: pd.Series) -> str:
    """A run's question count: "40", or "38/40" for a run that has not answered them all."""
    n, expected = row.get("n"), row.get("expected")
    if pd.isna(n):
        return "–"
    if pd.isna(expected) or int(expected) == int(n):
        return f"{int(n)}"
    return f"{int(n)}/{int(expected)}"


def _table(columns: list[list[str]], right: list[bool], indent: str, width: int) -> list[str]:
    """Columns (each its header, then its values) as aligned lines, each cut to `width`."""
    widths = [max(map(len, col)) for col in columns]
    return [
        _cut(
            indent
            + "  ".join(
                col[i].rjust(w) if r else col[i].ljust(w)
                for col, w, r in zip(columns, widths, right, strict=True)
            ).rstrip(),
            width,
        )
        for i in range(len(columns[0]))
    ]


def _experiment_lines(df: pd.DataFrame, experiment: str, width: int) -> list[str]:
    """One experiment's block: a line naming it and its profile, then a row per run with its
    question count and the scores the experiment has, fitted to `width`."""
    indent = "  "
    profiles = df["profile"].fillna("?").astype(str)
    several = profiles.nunique() > 1
    head = f"{experiment}  ({len(df)} run{'s' * (len(df) != 1)}"
    head += f", {profiles.nunique()} profiles)" if several else f")  {profiles.iloc[0]}"
    run = ["run", *df["run"].astype(str)]
    n = ["n", *(_n(row) for _, row in df.iterrows())]
    scores = [
        [c.removesuffix(".acc"), *("–" if pd.isna(v) else f"{v:.1f}" for v in df[c])]
        for c in df.columns
        if c.endswith(".acc") and df[c].notna().any()
    ]
    profile = ["profile", *profiles] if several else None

    def total(columns: list[list[str]]) -> int:
        return len(indent) + sum(max(map(len, c)) for c in columns) + 2 * (len(columns) - 1)

    # Short of room, the least useful give way first: the profile column (at most down to 12
    # characters, then gone: the head counts the profiles), the run's name (down to 24, cut in
    # the middle: the arm leads it, the hash ends it), the scores' names (to their values').
    if profile is not None and (over := total([run, n, *scores, profile]) - width) > 0:
        room = len(max(profile, key=len)) - over
        profile = [_cut(v, room) for v in profile] if room >= 12 else None
    columns = [run, n, *scores, *([profile] if profile else [])]
    if (over := total(columns) - width) > 0:
        room = max(24, len(max(run, key=len)) - over)
        run[:] = [_cut(v, room, middle=True) for v in run]
    if total(columns) > width:
        for col in scores:
            col[0] = _cut(col[0], max(5, *map(len, col[1:])))
    right = [False, True, *(True for _ in scores), *([False] if profile else [])]
    return [_cut(head, width), *_table(columns, right, indent, width)]


def list_lines(df: pd.DataFrame, *, wide: bool = False, width: int | None = None) -> list[str]:
    """`pmem-results list`'s lines for `load_summaries`'s rows: fitted to `width` (by default
    the terminal's, else LIST_WIDTH columns), or (`wide`) the full table however wide."""
    if wide:
        scores = [c for c in df.columns if c.endswith(".acc")]
        cols = ["experiment", "run", "profile", "n", "expected", *scores]
        return df[cols].round(1).to_string(index=False).splitlines()
    width = width or shutil.get_terminal_size((LIST_WIDTH, 24)).columns
    blocks = [
        _experiment_lines(runs, str(experiment), width)
        for experiment, runs in df.groupby("experiment", sort=True)
    ]
    return [line for i, block in enumerate(blocks) for line in ([""] * (i > 0) + block)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pmem-results", description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="every finished run under a root")
    ls.add_argument("--runs", type=Path, default=Path("runs"))
    ls.add_argument("--include-scripted", action="store_true")
    ls.add_argument(
        "--wide",
        action="store_true",
        help="one table with every column and every value whole, however wide",
    )
    sh = sub.add_parser("show", help="a run's samples, as the reader saw them")
    sh.add_argument("run", type=Path, help="a run folder: runs/<experiment>/<run>")
    sh.add_argument("--id", help="one question's id")
    sh.add_argument("--wrong", action="store_true", help="only questions a scorer marked wrong")
    sh.add_argument(
        "--stage",
        choices=FAILURE_STAGES,
        help="only the wrong answers lost at this stage (docs/failure_stages.md)",
    )
    sh.add_argument("--calls", action="store_true", help="every model call with its messages")
    sh.add_argument(
        "--ingest", action="store_true", help="the writer's calls while the memory was built"
    )
    sh.add_argument("--chars", type=int, default=1500, help="longest text printed (characters)")
    ex = sub.add_parser("export", help="copy an experiment's runs for committing (gzipped)")
    ex.add_argument("experiment", help="the experiment's folder under --runs, e.g. table6")
    ex.add_argument("--runs", type=Path, default=Path("runs"), help="where the runs are")
    ex.add_argument(
        "--to", type=Path, default=Path("results/runs"), help="where the committed copies go"
    )
    ex.add_argument(
        "--finished-only",
        action="store_true",
        help="leave unfinished runs behind, and runs that finished with questions unanswered "
        "(by default a run stopped mid-way is exported as its progress, and its table row says "
        "how far it got)",
    )
    args = p.parse_args(argv)
    try:
        if args.command == "show" and args.ingest:
            return show_ingest(args.run, limit=args.chars)
        if args.command == "show":
            return show(
                args.run,
                only=args.id,
                wrong=args.wrong,
                calls=args.calls,
                limit=args.chars,
                stage=args.stage,
            )
        if args.command == "export":
            exported = export_runs(
                args.runs, args.to, args.experiment, unfinished=not args.finished_only
            )
            for folder in exported:
                done = (folder / "summary.json").exists()
                print(f"exported {folder}" + ("" if done else " (unfinished: its progress only)"))
            return 0
        df = load_summaries(args.runs, include_scripted=args.include_scripted)
    except (NoRuns, SchemaError) as err:  # SchemaError: a record of a newer harness
        print(f"results: {err}", file=sys.stderr)
        return 2
    print("\n".join(list_lines(df, wide=args.wide)))
    return 0
