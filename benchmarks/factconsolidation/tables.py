"""The FactConsolidation table (§4.3, Table 7): accuracy by source, the single-hop stale rate,
and what each arm's ingest cost, ours beside the paper's, from run folders.

Columns are sources (single- and multi-hop streams at each length), with the write side's
ingest cost next to accuracy. benchmarks/reports/tables.py registers the builder; Appendix F's
audit of the same runs is `benchmarks.factconsolidation.write_audit`.
"""

from __future__ import annotations

import functools
import statistics
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.factconsolidation import paper, verdicts, write_audit
from benchmarks.factconsolidation.figures import plot_table7
from benchmarks.reports.document import markdown_table
from benchmarks.reports.frame import format_cost, header, ingest_cost
from benchmarks.reports.names import display_name
from benchmarks.reports.registry import Table
from benchmarks.results.loader import NoRuns, load_partial


def table7(df: pd.DataFrame, runs: Path, out: Path, experiment: str = "table7") -> str:
    """§4.3: accuracy by source (ours [interval] (n) / paper), the single-hop stale rate, and
    what each arm's ingest cost. `experiment` "table7_peers" builds the same table from the
    peer systems' runs (their own folder: hours of ingest each, partial rows while one runs)."""
    rows: dict[str, dict[str, Any]] = {}
    costs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    finished = df[df["substring.acc"].notna()] if "substring.acc" in df else df.iloc[:0]
    for _, r in finished.sort_values(["arm", "source"]).iterrows():
        row = rows.setdefault(r["arm"], {})
        n = int(r["substring.n"])
        ours = f"{r['substring.acc']:.0f} [{r['substring.lo']:.0f}–{r['substring.hi']:.0f}] ({n})"
        row[f"{r['source']} acc"] = ours + _beside(paper.TABLE7_ACCURACY, r["arm"], r["source"])
        stale = r.get("rate.stale.stale")
        if stale is not None and stale == stale:  # not NaN: a single-hop source
            sn = int(r["rate.stale.stale.n"])
            row[f"{r['source']} stale"] = f"{stale:.1f} ({sn})" + _beside(
                paper.TABLE7_STALE, r["arm"], r["source"]
            )
        cost = ingest_cost(runs / experiment / r["run"])
        paid = costs.setdefault((r["arm"], r["source"].split("_")[1]), [])
        if cost is not None:
            paid.append(cost)
    for (arm, length), paid in costs.items():  # sh and mh share a stream: show the paying run
        if paid:
            rows[arm][f"ingest {length}"] = format_cost(max(paid, key=lambda c: c["calls"]))
    partial = unfinished(runs, experiment, df, rows)
    table = pd.DataFrame.from_dict(rows, orient="index").fillna("–")
    table = table[sorted(table.columns, key=_table7_column)]
    table.index.name = "arm"
    if len(finished):  # from the frame alone (figures.py)
        plot_table7(finished, out / "figures" / f"{experiment}.png")
    cells = (
        "Cells: accuracy % by MemoryAgentBench's substring rule with a 95% Wilson interval and "
        "(n questions), then / the paper's figure (Qwen3-4B-Instruct-2507, n=100 per cell) "
        "where it reports one; stale: % of stale-scoreable single-hop questions answered with a "
        "superseded value (n), / the paper's."
    )
    return (
        header(f"{TITLES[experiment]} (accuracy %, single-hop stale rate %)", df, cells)
        + "\n"
        + markdown_table(table)
        + "\n\nIngest: model calls paid while the memory was built (writer chat + embedder "
        "batches; calls answered from the response cache in parentheses), tokens, and wall "
        "time on this machine; – where the run predates the ingest record.\n"
        + _ours(sorted(rows))
        + partial
        + _not_run(experiment, set(rows), set(finished["source"]) if len(finished) else set())
    )


# The paper's Table 7 rows run through the peers' own packages (their table: table7_peers).
PEERS = ("mem0", "graphiti", "hipporag", "memoryos")


def _not_run(experiment: str, arms: set[str], sources: set[str]) -> str:
    """The note naming the paper's rows and sources with no run here, and what runs them, so
    no row of the paper's table leaves it without a word."""
    peers = experiment == "table7_peers"
    wanted = [a for a in paper.TABLE7_ACCURACY if (a in PEERS) == peers]
    missing = [a for a in wanted if a not in arms]
    lines = []
    target = "reproduce-table7-peers TABLE7_PEERS" if peers else "reproduce-table7 TABLE7_ARMS"
    if missing:
        names = ", ".join(display_name(a) for a in missing)
        lines.append(
            f"The paper's rows not run on this profile: {names} "
            f'(`make {target}="{" ".join(missing)}"`).'
        )
    other = [s for s in paper.T7_SOURCES if s not in sources]
    if sources and other:
        lines.append(
            f"Sources not run on this profile: {', '.join(other)} (`make {target.split()[0]} "
            f'SOURCES="{" ".join(other)}" LIMIT=100 PROFILE=vllm`, the paper\'s).'
        )
    return "".join(f"\n{line}\n" for line in lines)


def _beside(figures: dict[str, dict[str, Any]], arm: str, source: str) -> str:
    """ " / <the paper's figure>" for a cell, or "" where the paper reports none."""
    ref = figures.get(arm, {}).get(source)
    return f" / {ref}" if ref is not None else ""


def _ours(arms: list[str]) -> str:
    """The note naming the rows the paper's Table 7 has no figure for (ours, or labelled)."""
    ours = [a for a in arms if a not in paper.TABLE7_ACCURACY]
    if not ours:
        return ""
    names = ", ".join(display_name(a) for a in ours)
    note = f"\nRows with no paper figure ({names}) are ours or labelled variants"
    if "memoryos" in ours:
        note += (
            f"; the paper's MemoryOS row is its chunk-retrieval protocol "
            f"({display_name('chunk_retrieval')}), not the MemoryOS package"
        )
    return note + " (docs/factconsolidation.md, docs/peers.md).\n"


def unfinished(
    runs: Path, experiment: str, df: pd.DataFrame, rows: dict[str, dict[str, Any]]
) -> str:
    """Rows for the runs of this table's profile still ingesting, or stopped mid-ingest, in the
    cells no finished run fills (issue 15.4: a peer's ingest costs hours here): accuracy "–"
    with how far the stream got, the ingest cell with the measured per-unit cost; and the note
    saying how to resume. Rewrites `rows` in place; returns the note ("" when none)."""
    try:
        partial = load_partial(runs, experiment)
    except FileNotFoundError:
        return ""
    if partial.empty:
        return ""
    partial = partial[partial["profile"].isin(set(df["profile"])) & ~partial["scripted"]]
    lines = []
    # sh and mh share a stream: the run that got furthest gives the ingest cell (one answering
    # has finished its ingest)
    done = partial.get("units_done", pd.Series(index=partial.index, dtype=float))
    partial = partial.assign(_done=done.fillna(float("inf")))
    for _, r in partial.sort_values(
        ["arm", "_done", "source"], ascending=[True, False, True]
    ).iterrows():
        row = rows.setdefault(r["arm"], {})
        acc = f"{r['source']} acc"
        if acc in row:  # a finished run fills the cell
            continue
        length = r["source"].split("_")[1]
        paper_figure = _beside(paper.TABLE7_ACCURACY, r["arm"], r["source"])  # as a full row
        if r["stage"] == "answer":  # ingested; answering (scores come when it finishes)
            of = f" of {int(r['expected'])}" if r["expected"] == r["expected"] else ""
            row[acc] = f"partial: {int(r['answered'])}{of} answered, not yet scored{paper_figure}"
            cost = ingest_cost(Path(r["folder"]))
            if cost is not None:
                row.setdefault(f"ingest {length}", format_cost(cost))
            lines.append(
                f"- `{r['arm']}` on {r['source']}: ingest finished; "
                f"{int(r['answered'])}{of} questions answered; {_resume(r)}"
            )
            continue
        done, total = int(r["units_done"]), int(r["units_total"])
        row[acc] = f"partial: ingest {done}/{total}{paper_figure}"
        # a unit measured whole: paid in full (part-cached units were begun by a stopped attempt)
        paid = [u for u in r["units"] if u.get("paid", 0) > 0 and not u.get("cached", 0)]
        paid = paid or [u for u in r["units"] if u.get("paid", 0) > 0]
        cell = f"partial: {done}/{total} units"
        if paid:
            seconds = statistics.median(u["s"] for u in paid)
            calls = statistics.median(u["paid"] for u in paid)
            cell += (
                f", {calls:.0f} calls and {seconds:,.0f} s per paid unit (median of {len(paid)})"
            )
            lines.append(
                f"- `{r['arm']}` on {r['source']}: {done} of {total} units ingested; the rest "
                f"is about {(total - done) * seconds / 3600:.1f} h more here; {_resume(r)}"
            )
        else:
            lines.append(
                f"- `{r['arm']}` on {r['source']}: {done} of {total} units ingested; {_resume(r)}"
            )
        row.setdefault(f"ingest {length}", cell)
    if not lines:
        return ""
    return (
        "\n**Partial rows** (a run still going or stopped: no scores yet). Each row's command "
        "resumes it: every call made before the stop is answered from the response cache, so "
        "nothing is paid twice, on a machine whose cache holds those calls "
        "(`runs/cache.sqlite`, or their dump in `results/cache/` imported: its README); "
        "elsewhere the run starts over.\n\n" + "\n".join(lines) + "\n"
    )


def _resume(r: Any) -> str:
    """The command that lands in this partial run's folder: the same arm, source and question
    limit (another limit is another config, hence another run)."""
    experiment = "table7-peers" if r["experiment"] == "table7_peers" else "table7"
    variable = "TABLE7_PEERS" if experiment == "table7-peers" else "TABLE7_ARMS"
    limit = f" LIMIT={int(r['expected'])}" if r["expected"] == r["expected"] else ""
    return f"`make reproduce-{experiment} {variable}={r['arm']} SOURCES={r['source']}{limit}`"


def _table7_column(name: str) -> tuple[int, int, str]:
    kind = {"acc": 0, "stale": 1}.get(name.split()[-1], 2)
    source = name.split()[0] if kind < 2 else name.split()[-1]
    hop, _, length = source.partition("_")
    order = {"6k": 0, "32k": 1, "64k": 2, "262k": 3}
    return (kind, {"sh": 0, "mh": 1}.get(hop, 0), str(order.get(length, length)))


def partial_frame(runs: Path, experiment: str, profile: str | None = None) -> pd.DataFrame:
    """The unfinished runs of a partial table as its frame (their columns, no scores), when no
    run has finished; raises `NoRuns` when there is none either (never a scripted one)."""
    df = load_partial(runs, experiment)
    if len(df):
        df = df[~df["scripted"]]
        if profile is not None:
            df = df[(df["profile"] == profile) | (df["llm"] == profile)]
    if df.empty:
        raise NoRuns(f"no runs under {runs / experiment}, finished or under way")
    return df.assign(complete=False).drop(columns="folder")


TITLES = {
    "table7": "Table 7: FactConsolidation",
    "table7_peers": "Table 7, the peer systems' rows: FactConsolidation",
}

TABLES = [
    Table(
        "table7", 30, table7, partial=partial_frame, figure=plot_table7,
        cells=verdicts.table7_cells,
    ),
    Table(
        "table7_peers", 40, functools.partial(table7, experiment="table7_peers"),
        partial=partial_frame, figure=plot_table7,
        cells=functools.partial(verdicts.table7_cells, table="table7_peers"),
    ),
    Table(
        "appendix_f", 50, audit=write_audit.write, reads="table7",
        cells=verdicts.appendix_f_cells,
    ),
]  # fmt: skip
