"""Run folders as pandas DataFrames: `load_summaries` (a row per run), `load_runs` (a row per
question, with what the reader saw), `load_ingest` (a row per model call of the ingests),
`export_runs` (the committed copy under results/runs/).

    python -m benchmarks.results show runs/table6/<run> [--id ID] [--wrong]

prints a run's samples as a person reads them. The loader never exits the interpreter: it raises
`NoRuns`.

The names are the loader's, imported on first use: the package itself needs no pandas, so
`pmem-results` (``__main__``) starts without the harness installed and says what is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name in __all__:
        from benchmarks.results import loader

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
