"""Every printed cell that has both our k of n and the paper's figure, with its verdict.

A benchmark's table says which cells it judges (`registry.Table.cells`), from its run frame
(exact counts per run) or from the printed table (a rate to 0.1% and its n give k exactly);
tables that print ours, its interval and n, then `/ paper` are read by `inline_cells`. A cell
is keyed by its printed row and column, so the page can badge the cell it judges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pandas as pd

from benchmarks.reports import registry
from benchmarks.reports.markdown import Block, Table
from benchmarks.reports.names import display_name
from benchmarks.reports.verdict import Verdict, as_probability, verdict
from benchmarks.stats import binomial_ci

__all__ = ["Cell", "cells_for", "count_from_rate"]

# "52.6 [48–57] (500) / 52.6" (LongMemEval's with_ref cells), also with "n=" and a tail (";")
_INLINE = re.compile(
    r"^(?P<acc>\d+(?:\.\d+)?) \[\d+–\d+\] \((?:n=)?(?P<n>\d+)\) / (?P<ref>\d+(?:\.\d+)?)(?:;.*)?$"
)
# "84.2 (n=19)": a rate and its n (Table 8, the conflict probe)
RATE = re.compile(r"^(?P<acc>\d+(?:\.\d+)?) \((?:n=)?(?P<n>\d+)\)$")


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


def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def make_cell(
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
    # a table prints its arms by display name (document.markdown_table): match them so
    match = {c: display_name(v) if c == "arm" else v for c, v in match.items()}
    return Cell(table, tuple(match.items()), column, what, k, n, p, verdict(k, n, p))


# -- from the run frame -----------------------------------------------------------------------


def frame_count(row: pd.Series, rate: str, n: str) -> tuple[int | None, int]:
    value, size = row.get(rate), row.get(n)
    if value is None or size is None or value != value or size != size:
        return None, 0
    return count_from_rate(float(value), int(size)), int(size)


# -- from the printed table -------------------------------------------------------------------


def printed(cell: str, pattern: re.Pattern[str]) -> tuple[int | None, int]:
    m = pattern.match(cell.strip())
    if not m:
        return None, 0
    n = int(m["n"])
    return count_from_rate(float(m["acc"]), n, decimals(m["acc"])), n


def printed_tables(blocks: list[Block]) -> list[Table]:
    return [b.table for b in blocks if b.kind == "table" and b.table is not None]


def inline_cells(name: str, blocks: list[Block]) -> list[Cell]:
    """Cells that print ours with its interval and n, then `/ paper` (LongMemEval's tables and
    any table that prints the same way): keyed by the row's first column."""
    out = []
    for t in printed_tables(blocks):
        for row in t.rows:
            for j, text in enumerate(row[1:], start=1):
                m = _INLINE.match(text.strip())
                if not m:
                    continue
                n = int(m["n"])
                k = count_from_rate(float(m["acc"]), n, decimals(m["acc"]))
                match = {t.header[0]: row[0]}
                out.append(make_cell(name, match, t.header[j], t.header[j], k, n, float(m["ref"])))
    return [c for c in out if c]


def no_verdict(name: str) -> str:
    """Why the page judges none of a table's cells."""
    spec = registry.table(name)
    if spec is not None and spec.no_verdict:
        return spec.no_verdict
    return "no cell here has both our k of n and a paper figure"


def cells_for(name: str, frame: pd.DataFrame | None, blocks: list[Block]) -> list[Cell]:
    """The judged cells of one table (its name, its run frame if any, its parsed Markdown)."""
    spec = registry.table(name)
    if spec is not None and spec.cells is not None:
        found = spec.cells(frame if frame is not None else pd.DataFrame(), blocks)
    else:
        found = inline_cells(name, blocks)
    return sorted(found, key=lambda c: _position(c, blocks))


def _position(cell: Cell, blocks: list[Block]) -> tuple[int, int, int]:
    """Where a cell is printed (table, row, column), so verdicts list in the table's order;
    a cell the printed tables do not show sorts last."""
    for t_index, t in enumerate(printed_tables(blocks)):
        j = t.column(cell.column)
        if j is None:
            continue
        for r_index, row in enumerate(t.rows):
            if cell.matches(t, row):
                return (t_index, r_index, j)
    return (len(blocks), 0, 0)
