"""§4.1.1's read cost as the haystack grows: mean read tokens per query at each haystack size,
per arm, with the growth per added session beside the paper's statement.

The growth sweep is read-only (run.answer=false: no answer is paid or scored), so the table is
built from the read sizes and haystack each prediction record kept, not from scores.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.longmemeval import paper
from benchmarks.longmemeval.figures import plot_haystack_growth
from benchmarks.longmemeval.tables.common import label
from benchmarks.reports.document import markdown_table
from benchmarks.reports.frame import header
from benchmarks.results.loader import read_records


def haystack_sizes(runs: Path, experiment: str, run: str) -> float | None:
    """Mean sessions per haystack actually read in a run (the evidence is always kept, so a
    haystack can exceed `benchmark.sessions`), from its prediction records."""
    sizes = [
        (p.get("meta") or {}).get("haystack_sessions")
        for p in read_records(runs / experiment / run, "predictions")
    ]
    sizes = [s for s in sizes if s is not None]
    return sum(sizes) / len(sizes) if sizes else None


def growth_frame(df: pd.DataFrame, runs: Path) -> pd.DataFrame:
    """One row per (arm, haystack size) run of the growth sweep, placed by the sessions it
    actually read (the released haystack, `sessions: null`, is the sweep's right end)."""
    sizes = [haystack_sizes(runs, "haystack_growth", r) for r in df["run"]]
    return df.assign(haystack=pd.Series(sizes, index=df.index, dtype=float)).sort_values(
        ["arm", "haystack"]
    )


def _n_range(df: pd.DataFrame) -> str:
    low, high = int(df["n"].min()), int(df["n"].max())
    return f"{low}" if low == high else f"{low}–{high}"


def haystack_growth(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """§4.1.1: mean read tokens per query as the haystack grows, per arm, with each read's
    growth per added session (least squares) beside the paper's statement."""
    g = growth_frame(df, runs)
    sizes = sorted(g["haystack"].dropna().unique())
    rows = {}
    for arm, a in g.groupby("arm"):
        sessions, tokens = a["haystack"].to_numpy(float), a["mean_tokens"].to_numpy(float)
        row = {f"{n:g} sessions": f"{t:,.0f}" for n, t in zip(sessions, tokens, strict=True)}
        if len(set(sessions)) >= 2:
            slope = np.polyfit(sessions, tokens, 1)[0]
            row["tokens / added session"] = f"{slope:,.0f}"
        ref = paper.GROWTH.get(arm)
        row["paper"] = f"~{ref['tokens'] / 1000:.0f}k, {ref['shape']}" if ref else "–"
        rows[label(arm)] = row
    columns = [f"{s:g} sessions" for s in sizes] + ["tokens / added session", "paper"]
    table = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=columns).fillna("–")
    table.index.name = "arm"
    # linear axes, the paper's hollow; drawn from the frame (the measured haystack here, a
    # committed CSV's `sessions` when redrawn from one)
    plot_haystack_growth(g, out / "figures" / "haystack_growth.png")
    cells = (
        "Cells: mean read tokens per query (the reader's tokenizer) at each mean haystack size "
        "(sessions actually kept: evidence sessions are never dropped); tokens / added session "
        "is the least-squares slope. Read-only runs (run.answer=false): no answers are paid. "
        f"Questions per cell: {_n_range(df)}."
    )
    return (
        header("§4.1.1: read cost as the haystack grows", df, cells) + "\n" + markdown_table(table)
    )
