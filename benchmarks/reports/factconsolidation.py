"""The FactConsolidation table (§4.3, Table 7): accuracy by source, the single-hop stale rate,
and what each arm's ingest cost, ours beside the paper's, from run folders.

Why a module of its own: Table 7 is the one table whose columns are sources (single- and
multi-hop streams at each length) and that prints the write side's ingest cost next to
accuracy; the run frame, header and ingest records come from benchmarks/reports/frame.py, and
benchmarks/reports/tables.py registers the builder. Appendix F's audit of the same runs is
benchmarks/reports/write_audit.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.reports import paper
from benchmarks.reports.figures import plot_table7
from benchmarks.reports.frame import Builder, format_cost, header, ingest_cost


def table7(df: pd.DataFrame, runs: Path, out: Path) -> str:
    """§4.3: accuracy by source (ours [interval] (n) / paper), the single-hop stale rate, and
    what each arm's ingest cost."""
    rows: dict[str, dict[str, Any]] = {}
    costs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for _, r in df.sort_values(["arm", "source"]).iterrows():
        row = rows.setdefault(r["arm"], {})
        ref = paper.TABLE7_ACCURACY.get(r["arm"], {}).get(r["source"])
        n = int(r["substring.n"])
        ours = f"{r['substring.acc']:.0f} [{r['substring.lo']:.0f}–{r['substring.hi']:.0f}] ({n})"
        row[f"{r['source']} acc"] = ours + (f" / {ref}" if ref is not None else "")
        stale = r.get("rate.stale.stale")
        if stale is not None and stale == stale:  # not NaN: a single-hop source
            ref = paper.TABLE7_STALE.get(r["arm"], {}).get(r["source"])
            sn = int(r["rate.stale.stale.n"])
            row[f"{r['source']} stale"] = f"{stale:.1f} ({sn})" + (
                f" / {ref}" if ref is not None else ""
            )
        cost = ingest_cost(runs / "table7" / r["run"])
        paid = costs.setdefault((r["arm"], r["source"].split("_")[1]), [])
        if cost is not None:
            paid.append(cost)
    for (arm, length), paid in costs.items():  # sh and mh share a stream: show the paying run
        if paid:
            rows[arm][f"ingest {length}"] = format_cost(max(paid, key=lambda c: c["calls"]))
    table = pd.DataFrame.from_dict(rows, orient="index").fillna("–")
    table = table[sorted(table.columns, key=_table7_column)]
    table.index.name = "arm"
    plot_table7(df, out / "figures" / "table7.png")  # from the frame alone (figures.py)
    cells = (
        "Cells: accuracy % by MemoryAgentBench's substring rule with a 95% Wilson interval and "
        "(n questions), then / the paper's figure (Qwen3-4B-Instruct-2507, n=100 per cell) "
        "where it reports one; stale: % of stale-scoreable single-hop questions answered with a "
        "superseded value (n), / the paper's."
    )
    return (
        header("Table 7: FactConsolidation (accuracy %, single-hop stale rate %)", df, cells)
        + "\n"
        + table.to_markdown()
        + "\n\nIngest: model calls paid while the memory was built (writer chat + embedder "
        "batches; calls answered from the response cache in parentheses), tokens, and wall "
        "time on this machine; – where the run predates the ingest record.\n"
    )


def _table7_column(name: str) -> tuple[int, int, str]:
    kind = {"acc": 0, "stale": 1}.get(name.split()[-1], 2)
    source = name.split()[0] if kind < 2 else name.split()[-1]
    hop, _, length = source.partition("_")
    order = {"6k": 0, "32k": 1, "64k": 2, "262k": 3}
    return (kind, {"sh": 0, "mh": 1}.get(hop, 0), str(order.get(length, length)))


TABLES: dict[str, Builder] = {"table7": table7}
