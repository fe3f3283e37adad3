"""Appendix E's write-side cost of the materialized path (Table 11) and the break-even of its
extraction in read tokens saved, ours beside the paper's.

Read from the snapshots' ingest records and files (calls, tokens, wall time, store and index
sizes, via `benchmarks.reports.frame.history_costs`), one column per writer model, not from
scored answers.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.longmemeval import paper
from benchmarks.longmemeval.tables.common import questions
from benchmarks.reports.document import markdown_table
from benchmarks.reports.frame import header, history_costs


def _megabytes(sizes: pd.Series, what: str = "") -> str:
    """Mean size in MB; "–" when the files were not there to measure (an exported run)."""
    if sizes.isna().any():
        return "–"
    return f"{sizes.mean() / 1e6:.2f} MB" + (f" {what}" if what else "")


def _cost_column(r: pd.Series, c: pd.DataFrame) -> dict[str, str]:
    """Table 11's rows for one paying run: means per history."""
    committed = r.get("meta.committed", float("nan"))
    keys = r.get("meta.keys", float("nan"))
    calls = c["writer_calls"].mean()
    cached = c["writer_cached"].sum()
    return {
        "Extraction LLM calls": f"{calls:.1f}" + (f" ({cached} cached)" if cached else ""),
        "Calls per committed fact": f"{calls / committed:.2f}" if committed else "–",
        "Write tokens (prompt+completion)": f"{c['write_tokens'].mean() / 1000:.1f}k",
        "Ingestion wall time": f"{c['wall_s'].mean():.1f} s",
        "Committed facts": f"{committed:.0f}",
        "Materialized cells": f"{keys:.0f}",
        "Fact store": _megabytes(c["store_bytes"], "(SQLite log + state.json)"),
        "Embedding index (fp32)": _megabytes(c["index_bytes"]),
    }


def table11(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """App. E: write-side cost per history of the materialized path, one column per writer
    (the reader's own model, and a writer of its own such as the 35B extractor), and the
    break-even of the reader's own write path."""
    q = questions(runs, "table11", df)
    materialized = df[df["arm"].str.startswith("pmem_materialized")]
    if "writer" not in materialized.columns:
        materialized = materialized.assign(writer=None)
    columns: dict[str, dict[str, str]] = {}
    break_even_cost = None
    for writer, group in materialized.groupby(materialized["writer"].fillna(""), sort=True):
        costs = {r["arm"]: history_costs(runs / "table11" / r["run"]) for _, r in group.iterrows()}
        paid = {arm: c for arm, c in costs.items() if len(c)}
        if not paid:
            continue
        # the run whose ingest paid its calls (the others read the experiment's cache)
        paying = max(paid, key=lambda a: (paid[a]["writer_calls"] - paid[a]["writer_cached"]).sum())
        r = group[group["arm"] == paying].iloc[-1]
        who = f"writer {writer}" if writer else "the reader's model writes"
        columns[f"ours ({paying}, {who}, {len(paid[paying])} histories)"] = _cost_column(
            r, paid[paying]
        )
        if not writer:
            break_even_cost = paid[paying]
    for writer, ref in paper.TABLE11.items():
        columns[f"paper, {writer}"] = ref
    table = pd.DataFrame(columns).reindex(list(paper.TABLE11_ROWS)).fillna("–")
    table.index.name = "per history"
    md = (
        header(
            "Table 11: write-side cost per history (materialized path, knowledge-update subset)",
            df,
            "Cells: means per history from the per-episode ingest records; judging excluded.",
        )
        + "\n"
        + markdown_table(table)
    )
    md += "\n\n" + break_even(df, q, break_even_cost)
    return md


def break_even(df: pd.DataFrame, q: pd.DataFrame, cost: pd.DataFrame | None) -> str:
    """App. E: reads per history at which extraction pays for itself in read tokens saved by
    the twelve-cell read against the twelve-turn read."""
    ref = paper.TABLE11_BREAK_EVEN
    paper_line = (
        f"paper: ~{ref['write_tokens'] / 1000:.0f}k write tokens / "
        f"(~{ref['turn_read'] / 1000:.0f}k turn read − ~{ref['cell_read'] / 1000:.1f}k "
        f"cell read) ≈ {ref['reads']} reads per history"
    )
    tokens = dict(zip(df["arm"], df["mean_tokens"], strict=False))
    turn, cell = tokens.get("pmem_turns"), tokens.get("pmem_materialized")
    if cost is None or turn is None or cell is None:
        return f"Break-even: needs the pmem_materialized and pmem_turns runs ({paper_line})."
    write = cost["write_tokens"].mean()
    saved = turn - cell
    reads = write / saved if saved > 0 else float("inf")
    return (
        f"Break-even: {write:,.0f} write tokens / ({turn:,.0f} turn-read − {cell:,.0f} cell-read "
        f"tokens) = {reads:,.1f} reads per history ({paper_line})."
    )
