"""The tables' figures: one headless matplotlib figure per file, written where the table says.

Why a module: every table builder draws the same way (no display, 150 dpi, tight layout, the
folder made, the figure closed so a long `make tables` does not hold them all), so that lives
here once and a builder only draws.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def figure(path: Path, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """``with figure(path, figsize=...) as (fig, ax):`` draw, and on exit the figure is laid
    out, saved to `path` (its folder made) and closed. `subplots` go to `plt.subplots`."""
    import matplotlib

    matplotlib.use("Agg")  # headless: tables are built on clusters and in CI
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(**subplots)
    try:
        yield fig, ax
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150)
    finally:
        plt.close(fig)
