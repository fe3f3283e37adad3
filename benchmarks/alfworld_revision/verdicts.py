"""The printed cells of ALFWorld-Revision's tables the report judges against the paper."""

from __future__ import annotations

import pandas as pd

from benchmarks.alfworld_revision import paper
from benchmarks.reports.markdown import Block
from benchmarks.reports.names import arm_id
from benchmarks.reports.report.cells import (
    RATE,
    Cell,
    frame_count,
    make_cell,
    printed,
    printed_tables,
)


def table6_cells(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        k, n = frame_count(r, "location.acc", "location.n")
        ref = paper.TABLE6_ACCURACY.get(r["arm"], {}).get(int(r["L"]))
        out.append(
            make_cell("table6", {"arm": r["arm"]}, f"L={int(r['L'])}", "accuracy", k, n, ref)
        )
    return [c for c in out if c]


def table6_single_cells(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        k, n = frame_count(r, "location.acc", "location.n")
        ref = paper.TABLE6_SINGLE_ACCURACY.get(r["arm"])
        out.append(make_cell("table6_single", {"arm": r["arm"]}, "ours", "accuracy", k, n, ref))
    return [c for c in out if c]


def table8_cells(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    columns = {"recovered (ours)": "recovered", "wrong = v2": "wrong", "lost": "lost"}
    out = []
    for t in printed_tables(blocks):
        if t.column("arm") is None or t.column("d") is None:
            continue
        for row in t.rows:
            arm, d = arm_id(row[t.column("arm")]), row[t.column("d")]
            ref = paper.TABLE8.get(arm, {})
            match = {"arm": arm, "d": d}
            for column, key in columns.items():
                j = t.column(column)
                if j is not None:
                    k, n = printed(row[j], RATE)
                    out.append(
                        make_cell("table8", match, column, key, k, n, ref.get(f"{key}_d{d}"))
                    )
            j = t.column("v1 in store")
            if j is not None:
                k, n = printed(row[j], RATE)
                what = "v1 in store"
                out.append(
                    make_cell("table8", match, "v1 in store", what, k, n, ref.get("v1_in_store"))
                )
    return [c for c in out if c]


def conflict_cells(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    columns = {
        "flagged before (ours)": ("flagged before", "flagged_pre"),
        "settled after (ours)": ("settled after", "accuracy_post"),
    }
    out = []
    for t in printed_tables(blocks):
        if t.column("arm") is None:
            continue
        for row in t.rows:
            arm = arm_id(row[t.column("arm")])
            for column, (what, key) in columns.items():
                j = t.column(column)
                if j is not None:
                    k, n = printed(row[j], RATE)
                    ref = paper.CONFLICT.get(arm, {}).get(key)
                    out.append(make_cell("conflict", {"arm": arm}, column, what, k, n, ref))
    return [c for c in out if c]
