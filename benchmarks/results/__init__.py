"""Run folders as pandas DataFrames: `load_summaries` (a row per run), `load_runs` (a row per
question, with what the reader saw), `load_ingest` (a row per model call of the ingests),
`export_runs` (the committed copy under results/runs/).

    python -m benchmarks.results show runs/table6/<run> [--id ID] [--wrong]

prints a run's samples as a person reads them. The loader never exits the interpreter: it raises
`NoRuns`."""

from benchmarks.results.loader import (
    NoRuns,
    arm_key,
    case_count,
    export_runs,
    is_scripted,
    load_ingest,
    load_partial,
    load_runs,
    load_summaries,
    profile_of,
)

__all__ = [
    "NoRuns",
    "arm_key",
    "case_count",
    "export_runs",
    "is_scripted",
    "load_ingest",
    "load_partial",
    "load_runs",
    "load_summaries",
    "profile_of",
]
