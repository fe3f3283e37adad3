"""Reports: tables per benchmark beside the paper's numbers, figures, and the write-path audit,
built from run folders without a model (`python -m benchmarks.reports <table>`; the registry is
benchmarks/reports/tables.py)."""
