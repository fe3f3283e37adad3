"""``python -m benchmarks.reports <table> [--runs runs] [--out results]``: the one command that
builds any of the paper's tables (benchmarks/reports/tables.py holds the registry). Without the
harness extra it ends in one line naming it (`benchmarks.extras.run_cli`)."""

from benchmarks.extras import run_cli

if __name__ == "__main__":
    prog = "python -m benchmarks.reports"
    raise SystemExit(run_cli(prog, "benchmarks.reports.tables:main", prog=prog))
