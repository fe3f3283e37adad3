"""`pmem-results` (or `python -m benchmarks.results`): look at runs without writing code.

    pmem-results list [--runs runs]               every run: profile, n, scores
    pmem-results show runs/table6/<run> [--id ID] [--wrong] [--stage STAGE] [--calls] [--ingest]
    pmem-results export table6 [--runs runs] [--to results/runs] [--finished-only]

`show` prints each question as the reader met it: the question and gold, what the arm read, the
reply and the scores (``--calls``: every model call with its messages; ``--ingest``: the
writer's calls while the memory was built). The same data is a DataFrame away:
``benchmarks.results.load_runs`` and ``load_ingest``.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pmem-results", description=__doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="every finished run under a root")
    ls.add_argument("--runs", type=Path, default=Path("runs"))
    ls.add_argument("--include-scripted", action="store_true")
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
    scores = [c for c in df.columns if c.endswith(".acc")]
    cols = ["experiment", "run", "profile", "n", "expected", *scores]
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        print(df[cols].round(1).to_string(index=False))
    return 0


def entry() -> None:
    """The `pmem-results` command (a broken pipe, as from `| head`, is not an error)."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has seen enough
        sys.stderr.close()
        code = 0
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
