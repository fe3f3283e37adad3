"""Appendix F in the FactConsolidation notebook: the write-path audit, and its figures beside
the paper's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.results import NoRuns

# Appendix F at 6k: single-hop stale rate (%) with soft identity off, then on ("cuts single-hop
# stale rates from 9.4% to 4.7% at 6k"); the cell counts are write_audit.PAPER_6K.
F_STALE_6K = {"off": 9.4, "on": 4.7}


def appendix_f(root: Path) -> tuple[pd.DataFrame, str]:
    """Appendix F's write-path audit of the FactConsolidation state runs: audited from the
    user's runs/table7 snapshots when there are any, else the committed
    results/tables/appendix_f.csv; and where it came from."""
    from benchmarks.factconsolidation.write_audit import collect_audits  # opens the stores (pmem)

    runs = root / "runs"
    if (runs / "table7").is_dir():
        try:
            return collect_audits(runs, "table7"), "audited from the snapshots under runs/table7/"
        except NoRuns as err:
            print(f"appendix_f: {err}")
    csv = root / "results" / "tables" / "appendix_f.csv"
    return pd.read_csv(csv), f"the committed {csv.relative_to(root)} (no state-arm snapshots)"


def appendix_f_beside_paper(audit: pd.DataFrame, stream: str = "6k") -> pd.DataFrame:
    """Appendix F's figures at 6k beside ours: cells with and without soft identity, merges
    among gated candidates, and the single-hop stale rate soft identity off and on."""
    from benchmarks.factconsolidation.write_audit import PAPER_6K

    at = audit[audit["stream"].astype(str) == stream].set_index("arm")

    def ours(arm: str, column: str) -> Any:
        if arm not in at.index or column not in at or pd.isna(at.loc[arm, column]):
            return None
        return at.loc[arm, column]

    rows = [
        ("template keys", ours("pmem_state", "keys"), PAPER_6K["keys"]),
        ("cells, soft identity on", ours("pmem_state", "cells"), PAPER_6K["cells"]),
        ("cells, soft identity off", ours("pmem_state_nosoft", "cells"), PAPER_6K["cells_no_soft"]),
        ("gated candidates", ours("pmem_state", "gated"), PAPER_6K["gated"]),
        ("merged", ours("pmem_state", "merged"), PAPER_6K["merged"]),
        ("sh stale %, soft off", ours("pmem_state_nosoft", "sh_stale_pct"), F_STALE_6K["off"]),
        ("sh stale %, soft on", ours("pmem_state", "sh_stale_pct"), F_STALE_6K["on"]),
    ]
    table = pd.DataFrame(rows, columns=[f"at {stream}", "ours", "paper"]).set_index(f"at {stream}")
    return table
