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

# LongMemEval's official files (LME=<folder>) on the paper's profile; without LME the generated
# fixture only checks the plumbing
LME = "PROFILE=vllm LME=<folder of the official LongMemEval files>"

TABLES = [
    Table("table3", 80, table3, command=f"make reproduce-table3 {LME}"),
    Table("table4", 90, table4, command=f"make reproduce-table4 {LME}"),
    Table("table5", 100, table5, command=f"make reproduce-table5 {LME}"),
    Table("table9", 110, table9, command=f"make reproduce-table9 {LME}"),
    Table("table10", 120, table10, command=f"make reproduce-table10 {LME}"),
    Table(
        "table11", 130, table11, command=f"make reproduce-table11 {LME}",
        no_verdict="the write side's costs are counts and sizes, not proportions",
    ),
    Table(
        "haystack_growth", 140, haystack_growth, figure=plot_haystack_growth,
        command=f"make reproduce-growth {LME}",
        no_verdict="the cells are token counts, not proportions: no binomial verdict",
    ),
    Table(
        "longmemeval_local", 150, longmemeval_local,
        command="bash benchmarks/longmemeval/local.sh",
        no_verdict="one instance, for which the paper prints no figure",
    ),
]  # fmt: skip
