"""``python -m benchmarks.reports <table> [--runs runs] [--out results]``: the one command that
builds any of the paper's tables (benchmarks/reports/tables.py holds the registry)."""

from benchmarks.reports.tables import main

if __name__ == "__main__":
    raise SystemExit(main(prog="python -m benchmarks.reports"))
