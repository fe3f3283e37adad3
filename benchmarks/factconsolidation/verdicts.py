"""The printed cells of FactConsolidation's tables the report judges against the paper."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from benchmarks.factconsolidation import paper
from benchmarks.reports.markdown import Block
from benchmarks.reports.report.cells import Cell, frame_count, make_cell


def table7_cells(df: pd.DataFrame, blocks: list[Block], table: str = "table7") -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        arm, source = r["arm"], r["source"]
        k, n = frame_count(r, "substring.acc", "substring.n")
        ref = paper.TABLE7_ACCURACY.get(arm, {}).get(source)
        out.append(make_cell(table, {"arm": arm}, f"{source} acc", "accuracy", k, n, ref))
        k, n = frame_count(r, "rate.stale.stale", "rate.stale.stale.n")
        ref = paper.TABLE7_STALE.get(arm, {}).get(source)
        out.append(make_cell(table, {"arm": arm}, f"{source} stale", "stale rate", k, n, ref))
    return [c for c in out if c]


# Appendix F at 6k: "37 of 133 gated candidates merged" (write_audit.py)
_F_MERGED = Fraction(37, 133)


def appendix_f_cells(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    if not {"arm", "stream", "gated", "merged"} <= set(df.columns):
        return []
    for _, r in df.iterrows():
        if r["arm"] != "pmem_state" or str(r["stream"]) != "6k" or pd.isna(r["gated"]):
            continue
        first = f"('{r['stream']}', '{r['arm']}')"
        n = int(r["gated"])
        k = int(r["merged"]) if r["merged"] == r["merged"] else None
        out.append(
            make_cell("appendix_f", {"": first}, "merged", "merged of gated", k, n, _F_MERGED)
        )
    return [c for c in out if c]
