"""The haystack-growth frame the LongMemEval notebook draws."""

from __future__ import annotations

import pandas as pd

from benchmarks.reports.notebook import Table


def haystack_frame(table: Table) -> pd.DataFrame:
    """The growth sweep's frame with each run's measured haystack (the builder's `growth_frame`,
    from the prediction records) when its run folders have them; else the frame as it is, and
    `figures.haystack_sizes` reads the sweep's `sessions`."""
    if table.runs is None:
        return table.frame
    from benchmarks.longmemeval.tables.growth import growth_frame

    try:
        return growth_frame(table.frame, table.runs)
    except FileNotFoundError:  # the committed export keeps its records gzipped
        return table.frame
