"""Build the paper's tables from run folders: ours (n, 95% interval) beside the paper's numbers.

    python -m benchmarks.reports table6 [--runs runs] [--out results]

(`python -m benchmarks.reports.tables table6` is the same command.) Reads
runs/<experiment>/*/{manifest,summary}.json only (so tables can be rebuilt any time without a
model), writes results/tables/<name>.md and .csv, and a figure where one helps.

Why a module of its own: this is the one registry of every benchmark's table builders (ALFWorld
revision, FactConsolidation, LongMemEval) and the command over it. The builders live in a module
per benchmark and the run frame they share in benchmarks/reports/frame.py; this module imports
them all and nothing imports it back, so the imports run one way. The shared names are
re-exported here, where callers have always imported them from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.reports import (
    alfworld,
    factconsolidation,
    longmemeval_accuracy,
    longmemeval_cost,
    longmemeval_growth,
    longmemeval_shipped,
)
from benchmarks.reports.alfworld import by_parameter, conflict, table6, table6_single, table8
from benchmarks.reports.factconsolidation import table7
from benchmarks.reports.frame import (
    BENCH_META,
    INTERVAL_CELLS,
    RATE_CELLS,
    Builder,
    arm_key,
    cell,
    collect,
    format_cost,
    header,
    ingest_cost,
    latest_per_config,
    per_question,
)

__all__ = [
    "BENCH_META",
    "INTERVAL_CELLS",
    "RATE_CELLS",
    "TABLES",
    "Builder",
    "arm_key",
    "build",
    "by_parameter",
    "cell",
    "collect",
    "conflict",
    "format_cost",
    "header",
    "ingest_cost",
    "latest_per_config",
    "main",
    "per_question",
    "table6",
    "table6_single",
    "table7",
    "table8",
]

# Every table by experiment name: FactConsolidation and ALFWorld's, then LongMemEval's (§4.1,
# B.1, C, D, E).
TABLES: dict[str, Builder] = {
    **factconsolidation.TABLES,
    **alfworld.TABLES,
    **longmemeval_accuracy.TABLES,
    **longmemeval_cost.TABLES,
    **longmemeval_growth.TABLES,
    **longmemeval_shipped.TABLES,
}


def build(name: str, runs: Path, out: Path) -> str:
    """Collect an experiment's runs, build its table, write the .md and .csv; the markdown."""
    df = collect(runs, name)
    md = TABLES[name](df, runs, out)
    tables = out / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    (tables / f"{name}.md").write_text(md + "\n")
    df.to_csv(tables / f"{name}.csv", index=False)
    return md


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("table", choices=sorted(TABLES))
    p.add_argument("--runs", type=Path, default=Path("runs"))
    p.add_argument("--out", type=Path, default=Path("results"))
    args = p.parse_args(argv)
    print(build(args.table, args.runs, args.out))
    print(f"\nwrote {args.out / 'tables' / args.table}.md and .csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
