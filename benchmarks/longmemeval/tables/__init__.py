"""LongMemEval's tables (§4.1 Tables 3-5, Appendices C-E Tables 9-11, §4.1.1's haystack growth,
every arm on the shipped instances), one module per kind of read: `accuracy` (the scored
tables), `cost` (Table 11's write side), `growth` (the read-only growth sweep), `shipped` (the
shipped real instances); `common` holds the per-question records and paired statistics."""

from __future__ import annotations

from benchmarks.longmemeval.figures import plot_haystack_growth
from benchmarks.longmemeval.tables.accuracy import table3, table4, table5, table9, table10
from benchmarks.longmemeval.tables.cost import table11
from benchmarks.longmemeval.tables.growth import haystack_growth
from benchmarks.longmemeval.tables.shipped import longmemeval_local
from benchmarks.reports.registry import Table

__all__ = ["TABLES"]

TABLES = [
    Table("table3", 80, table3),
    Table("table4", 90, table4),
    Table("table5", 100, table5),
    Table("table9", 110, table9),
    Table("table10", 120, table10),
    Table(
        "table11", 130, table11,
        no_verdict="the write side's costs are counts and sizes, not proportions",
    ),
    Table(
        "haystack_growth", 140, haystack_growth, figure=plot_haystack_growth,
        no_verdict="the cells are token counts, not proportions: no binomial verdict",
    ),
    Table(
        "longmemeval_local", 150, longmemeval_local,
        no_verdict="one instance, for which the paper prints no figure",
    ),
]  # fmt: skip
