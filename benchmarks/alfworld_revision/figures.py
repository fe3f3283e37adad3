"""Table 6's figure: accuracy as revisions accumulate, ours beside the paper's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchmarks.alfworld_revision import paper
from benchmarks.reports.figures import accuracy_by_parameter


def plot_table6(df: pd.DataFrame, path: Path) -> None:
    """Table 6 (§4.2.1) from its per-run frame: accuracy as revisions accumulate."""
    accuracy_by_parameter(
        df,
        "location",
        "L",
        paper.TABLE6_ACCURACY,
        path,
        "Table 6: accuracy as revisions accumulate",
        reference_n=140,
        xlabel="L (revisions per fact)",
    )
