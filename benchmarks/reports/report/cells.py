"""Every printed cell that has both our k of n and the paper's figure, with its verdict.

Why a module of its own: the verdict is the report's claim ("inside" or "outside the paper's
95% interval at our n", benchmarks/reports/verdict.py), so which cell it is computed for, from
which counts, must be plain to read and test. Two ways in, one per kind of table:

* from the run frame (the table's .csv, one row per run: exact accuracies and n) where the
  table has one row per run: Table 6, its single-revision variant, Table 7 (accuracy and the
  single-hop stale rate), Appendix F (soft identity's merges among gated candidates);
* from the printed table where the cell is a join over questions that the frame does not hold
  (Table 8's outcomes over committed cases, the conflict probe, LongMemEval's per-class cells):
  the cell prints its rate to 0.1% and its n, which gives k exactly for any n below 1,000.

A cell is keyed by the printed row (the values of its identifying columns) and column, so the
page can put the badge into the cell it judges.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pandas as pd

from benchmarks.reports import paper
from benchmarks.reports.report.markdown import Block, Table
from benchmarks.reports.verdict import Verdict, as_probability, verdict
from benchmarks.stats import binomial_ci

__all__ = ["Cell", "cells_for", "count_from_rate"]

# "52.6 [48–57] (500) / 52.6" (LongMemEval's with_ref cells), also with "n=" and a tail (";")
_INLINE = re.compile(
    r"^(?P<acc>\d+(?:\.\d+)?) \[\d+–\d+\] \((?:n=)?(?P<n>\d+)\) / (?P<ref>\d+(?:\.\d+)?)(?:;.*)?$"
)
# "84.2 (n=19)": a rate and its n (Table 8, the conflict probe)
_RATE = re.compile(r"^(?P<acc>\d+(?:\.\d+)?) \((?:n=)?(?P<n>\d+)\)$")


@dataclass(frozen=True)
class Cell:
    """One judged cell: where it is printed (`match`: the row's identifying columns and their
    printed values; `column`), what it measures, our k of n, the paper's figure and the
    verdict."""

    table: str
    match: tuple[tuple[str, str], ...]
    column: str
    what: str
    k: int
    n: int
    paper: Fraction
    verdict: Verdict

    @property
    def row(self) -> str:
        return ", ".join(v if i == 0 else f"{h}={v}" for i, (h, v) in enumerate(self.match))

    @property
    def ours_pct(self) -> float:
        return 100 * self.k / self.n

    @property
    def wilson(self) -> tuple[float, float]:
        low, high = binomial_ci(self.k, self.n)
        return 100 * low, 100 * high

    @property
    def paper_pct(self) -> float:
        return float(100 * self.paper)

    def matches(self, table: Table, row: list[str]) -> bool:
        """Whether a printed row is this cell's row."""
        for header, value in self.match:
            j = table.column(header)
            if j is None or row[j] != value:
                return False
        return True


def count_from_rate(rate_pct: float, n: int, decimals: int | None = None) -> int | None:
    """k from a printed or stored percentage of n: the one integer whose k/n rounds to it, or
    None when the rate does not pin k down (too few decimals for this n) or is no k/n at all."""
    k = round(rate_pct * n / 100)
    if not 0 <= k <= n:
        return None
    slack = 1e-6 if decimals is None else 0.5 * 10**-decimals + 1e-9
    if abs(100 * k / n - rate_pct) > slack:
        return None
    if decimals is not None and 100 / n < 10**-decimals:  # two k's round to this one print
        return None
    return k


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _make(
    table: str,
    match: dict[str, str],
    column: str,
    what: str,
    k: int | None,
    n: int,
    ref: Any,
) -> Cell | None:
    if k is None or ref is None or n <= 0 or ref != ref:  # ref NaN: no paper figure
        return None
    p = ref if isinstance(ref, Fraction) else as_probability(ref, percent=True)
    return Cell(table, tuple(match.items()), column, what, k, n, p, verdict(k, n, p))


# -- from the run frame -----------------------------------------------------------------------


def _frame_count(row: pd.Series, rate: str, n: str) -> tuple[int | None, int]:
    value, size = row.get(rate), row.get(n)
    if value is None or size is None or value != value or size != size:
        return None, 0
    return count_from_rate(float(value), int(size)), int(size)


def _table6(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        k, n = _frame_count(r, "location.acc", "location.n")
        ref = paper.TABLE6_ACCURACY.get(r["arm"], {}).get(int(r["L"]))
        out.append(_make("table6", {"arm": r["arm"]}, f"L={int(r['L'])}", "accuracy", k, n, ref))
    return [c for c in out if c]


def _table6_single(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        k, n = _frame_count(r, "location.acc", "location.n")
        ref = paper.TABLE6_SINGLE_ACCURACY.get(r["arm"])
        out.append(_make("table6_single", {"arm": r["arm"]}, "ours", "accuracy", k, n, ref))
    return [c for c in out if c]


def _table7(df: pd.DataFrame, blocks: list[Block], table: str = "table7") -> list[Cell]:
    out = []
    for _, r in df.iterrows():
        arm, source = r["arm"], r["source"]
        k, n = _frame_count(r, "substring.acc", "substring.n")
        ref = paper.TABLE7_ACCURACY.get(arm, {}).get(source)
        out.append(_make(table, {"arm": arm}, f"{source} acc", "accuracy", k, n, ref))
        k, n = _frame_count(r, "rate.stale.stale", "rate.stale.stale.n")
        ref = paper.TABLE7_STALE.get(arm, {}).get(source)
        out.append(_make(table, {"arm": arm}, f"{source} stale", "stale rate", k, n, ref))
    return [c for c in out if c]


# Appendix F at 6k: "37 of 133 gated candidates merged" (benchmarks/reports/write_audit.py)
_F_MERGED = Fraction(37, 133)


def _appendix_f(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    out = []
    if not {"arm", "stream", "gated", "merged"} <= set(df.columns):
        return []
    for _, r in df.iterrows():
        if r["arm"] != "pmem_state" or str(r["stream"]) != "6k" or pd.isna(r["gated"]):
            continue
        first = f"('{r['stream']}', '{r['arm']}')"
        n = int(r["gated"])
        k = int(r["merged"]) if r["merged"] == r["merged"] else None
        out.append(_make("appendix_f", {"": first}, "merged", "merged of gated", k, n, _F_MERGED))
    return [c for c in out if c]


# -- from the printed table -------------------------------------------------------------------


def _printed(cell: str, pattern: re.Pattern[str]) -> tuple[int | None, int]:
    m = pattern.match(cell.strip())
    if not m:
        return None, 0
    n = int(m["n"])
    return count_from_rate(float(m["acc"]), n, _decimals(m["acc"])), n


def _tables(blocks: list[Block]) -> list[Table]:
    return [b.table for b in blocks if b.kind == "table" and b.table is not None]


def _table8(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    columns = {"recovered (ours)": "recovered", "wrong = v2": "wrong", "lost": "lost"}
    out = []
    for t in _tables(blocks):
        if t.column("arm") is None or t.column("d") is None:
            continue
        for row in t.rows:
            arm, d = row[t.column("arm")], row[t.column("d")]
            ref = paper.TABLE8.get(arm, {})
            match = {"arm": arm, "d": d}
            for column, key in columns.items():
                j = t.column(column)
                if j is not None:
                    k, n = _printed(row[j], _RATE)
                    out.append(_make("table8", match, column, key, k, n, ref.get(f"{key}_d{d}")))
            j = t.column("v1 in store")
            if j is not None:
                k, n = _printed(row[j], _RATE)
                what = "v1 in store"
                out.append(
                    _make("table8", match, "v1 in store", what, k, n, ref.get("v1_in_store"))
                )
    return [c for c in out if c]


def _conflict(df: pd.DataFrame, blocks: list[Block]) -> list[Cell]:
    columns = {
        "flagged before (ours)": ("flagged before", "flagged_pre"),
        "settled after (ours)": ("settled after", "accuracy_post"),
    }
    out = []
    for t in _tables(blocks):
        if t.column("arm") is None:
            continue
        for row in t.rows:
            arm = row[t.column("arm")]
            for column, (what, key) in columns.items():
                j = t.column(column)
                if j is not None:
                    k, n = _printed(row[j], _RATE)
                    ref = paper.CONFLICT.get(arm, {}).get(key)
                    out.append(_make("conflict", {"arm": arm}, column, what, k, n, ref))
    return [c for c in out if c]


def inline_cells(name: str, blocks: list[Block]) -> list[Cell]:
    """Cells that print ours with its interval and n, then `/ paper` (LongMemEval's tables and
    any table that prints the same way): keyed by the row's first column."""
    out = []
    for t in _tables(blocks):
        for row in t.rows:
            for j, text in enumerate(row[1:], start=1):
                m = _INLINE.match(text.strip())
                if not m:
                    continue
                n = int(m["n"])
                k = count_from_rate(float(m["acc"]), n, _decimals(m["acc"]))
                match = {t.header[0]: row[0]}
                out.append(_make(name, match, t.header[j], t.header[j], k, n, float(m["ref"])))
    return [c for c in out if c]


_BY_TABLE: dict[str, Callable[[pd.DataFrame, list[Block]], list[Cell]]] = {
    "table6": _table6,
    "table6_single": _table6_single,
    "table7": _table7,
    "table7_peers": functools.partial(_table7, table="table7_peers"),
    "appendix_f": _appendix_f,
    "table8": _table8,
    "conflict": _conflict,
}

# Tables whose figures are no k of n: nothing to judge, and the page says why.
NO_VERDICT: dict[str, str] = {
    "haystack_growth": "the cells are token counts, not proportions: no binomial verdict",
    "longmemeval_local": "one instance, for which the paper prints no figure",
    "table11": "the write side's costs are counts and sizes, not proportions",
}


def cells_for(name: str, frame: pd.DataFrame | None, blocks: list[Block]) -> list[Cell]:
    """The judged cells of one table (its name, its run frame if any, its parsed Markdown)."""
    if name in _BY_TABLE:
        found = _BY_TABLE[name](frame if frame is not None else pd.DataFrame(), blocks)
    else:
        found = inline_cells(name, blocks)
    return sorted(found, key=lambda c: _position(c, blocks))


def _position(cell: Cell, blocks: list[Block]) -> tuple[int, int, int]:
    """Where a cell is printed (table, row, column), so verdicts list in the table's order;
    a cell the printed tables do not show sorts last."""
    for t_index, t in enumerate(_tables(blocks)):
        j = t.column(cell.column)
        if j is None:
            continue
        for r_index, row in enumerate(t.rows):
            if cell.matches(t, row):
                return (t_index, r_index, j)
    return (len(blocks), 0, 0)
