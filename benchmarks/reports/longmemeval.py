"""The paper's LongMemEval tables (3, 4, 5, 9, 10, 11, the haystack growth, every arm on the
shipped instance) under one name, and their command.

    python -m benchmarks.reports table3 [--runs runs] [--out results]

(`python -m benchmarks.reports.longmemeval table3` is the same command.) Why a module of its
own: the LongMemEval builders are split by what they read, a module each (longmemeval_accuracy:
the scored tables; longmemeval_cost: Table 11's write side; longmemeval_growth: the read-only
growth sweep; longmemeval_shipped: every arm on the shipped instance; longmemeval_common: the
per-question records and paired statistics they share), and this module gathers them where
callers have always imported them from. It sits above the registry
(benchmarks/reports/tables.py), which imports the builder modules and never this one, so
`build` and `main` here are the registry's own.
"""

from __future__ import annotations

from benchmarks.reports import (
    longmemeval_accuracy,
    longmemeval_cost,
    longmemeval_growth,
    longmemeval_shipped,
)
from benchmarks.reports.frame import Builder, collect, header, history_costs, per_question
from benchmarks.reports.longmemeval_accuracy import (
    BUDGETED,
    split_budget,
    table3,
    table4,
    table5,
    table9,
    table10,
)
from benchmarks.reports.longmemeval_common import (
    CELLS,
    CLASS_ORDER,
    by_class,
    label,
    ordered,
    outcomes,
    paired,
    paired_block,
    pct_cell,
    questions,
    regime,
    run_rate,
    with_ref,
)
from benchmarks.reports.longmemeval_cost import break_even, table11
from benchmarks.reports.longmemeval_growth import growth_frame, haystack_growth, haystack_sizes
from benchmarks.reports.longmemeval_shipped import REAL_INSTANCE, longmemeval_local
from benchmarks.reports.tables import build, main

__all__ = [
    "BUDGETED",
    "CELLS",
    "CLASS_ORDER",
    "REAL_INSTANCE",
    "TABLES",
    "break_even",
    "build",
    "by_class",
    "collect",
    "growth_frame",
    "haystack_growth",
    "haystack_sizes",
    "header",
    "history_costs",
    "label",
    "longmemeval_local",
    "main",
    "ordered",
    "outcomes",
    "paired",
    "paired_block",
    "pct_cell",
    "per_question",
    "questions",
    "regime",
    "run_rate",
    "split_budget",
    "table3",
    "table4",
    "table5",
    "table9",
    "table10",
    "table11",
    "with_ref",
]

# LongMemEval's tables only (benchmarks.reports.tables.TABLES holds every benchmark's).
TABLES: dict[str, Builder] = {
    **longmemeval_accuracy.TABLES,
    **longmemeval_cost.TABLES,
    **longmemeval_growth.TABLES,
    **longmemeval_shipped.TABLES,
}

if __name__ == "__main__":
    raise SystemExit(main())
