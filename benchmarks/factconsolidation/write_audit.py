"""Appendix F's write-path audit: what the FactConsolidation state holds against the gold state.

For each P-Mem state run (runs/<experiment>/*, arm pmem_state*, its ingest snapshot) the current
cells are compared key by key with the template parse of the same stream (`audit_state`). Soft
identity on vs off is two runs of the same arm (``arm.soft_identity=null`` for off).

    python -m benchmarks.factconsolidation.write_audit [--runs runs] [--experiment table7] \
        [--out results/tables]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.factconsolidation import FactConsolidation, KeyHistory, gold_state
from benchmarks.factconsolidation.gold import words
from benchmarks.reports.document import markdown_table
from benchmarks.results.loader import (
    FRONTIER,
    PMEM_META,
    PMEM_STORE,
    NoRuns,
    frontier_cells,
    is_scripted,
)
from benchmarks.scoring.rules import normalize_answer
from pmem import Memory

STATE_TARGETS = ("baselines.pmem_arms.state.StateArm", "baselines.pmem_arms.state.OracleStateArm")
# Appendix F / B.4 at 6k, for the side-by-side table.
PAPER_6K = {"cells": 307, "cells_no_soft": 346, "keys": 239, "merged": 37, "gated": 133}


@dataclass(frozen=True, slots=True)
class Audit:
    keys: int
    overwritten: int
    cells: int
    survives: int
    stale_sibling: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "keys": self.keys,
            "cells": self.cells,
            "cells_per_key": round(self.cells / self.keys, 3) if self.keys else None,
            "survives_pct": round(100 * self.survives / self.keys, 1) if self.keys else None,
            "overwritten": self.overwritten,
            "stale_sibling_pct": (
                round(100 * self.stale_sibling / self.overwritten, 1) if self.overwritten else None
            ),
        }


def audit_state(
    cells: Iterable[tuple[str, str]], gold: Mapping[tuple[str, str], KeyHistory]
) -> Audit:
    """Compare current (key, value) cells with the gold state.

    A key **survives** when some current cell about its subject holds its gold current value
    (normalized as MemoryAgentBench normalizes answers; the gold contained in the cell's
    value). A **stale sibling** is, for a key overwritten at least once, some *other* current
    cell about the subject still holding a superseded value and not the current one: what soft
    identity exists to prevent (§3.3, F). Keys are free-form, so "about the subject" means every
    word of the subject appears in the cell's key: our rule; the paper does not print its own.
    The write path's operation counts and cells per template key (F: 346 cells for 239 keys at
    6k without merging) come with the run (`audit_run`).
    """
    cells = [(words(k), normalize_answer(v)) for k, v in cells]
    by_subject: dict[str, list[str]] = {}
    for subject, _ in gold:
        if subject not in by_subject:
            sw = words(subject)
            by_subject[subject] = [v for kw, v in cells if sw and sw <= kw]
    survives = stale = overwritten = 0
    for (subject, _), history in gold.items():
        values = by_subject[subject]
        current = normalize_answer(history.current)
        if any(current and current in v for v in values):
            survives += 1
        if history.overwritten:
            overwritten += 1
            old = {normalize_answer(o) for _, o in history.values[:-1]} - {current}
            if any(o and o in v and current not in v for v in values for o in old):
                stale += 1
    return Audit(len(gold), overwritten, len(cells), survives, stale)


def snapshot_cells(snapshot: Path) -> list[tuple[str, str]]:
    """A state snapshot's current cells as (key, value), in order of first arrival: its
    frontier records (frontier.jsonl in a run folder, .jsonl.gz in the export), else, for a
    run from before they were written, its store opened by the library."""
    cells = frontier_cells(snapshot)
    if cells is not None:
        return cells
    if not (snapshot / PMEM_STORE).exists():
        raise FileNotFoundError(f"{snapshot}: neither {FRONTIER}.jsonl(.gz) nor {PMEM_STORE}")
    with Memory(snapshot / PMEM_STORE) as memory:
        return [(c.key, c.value or "") for c in memory.frontier()]


def audit_run(run: Path) -> dict[str, Any] | None:
    """The audit of one run folder, or None if it is not a finished state-arm ingest."""
    manifest = json.loads((run / "manifest.json").read_text())
    cfg = manifest["config"]
    if cfg["arm"].get("_target_") not in STATE_TARGETS or is_scripted(cfg):
        return None  # not a state-arm store, or a scripted dry run (never a paper figure)
    bench = cfg["benchmark"]
    data = FactConsolidation(bench["source"], bench.get("path")).data
    rows = []
    for meta in sorted((run / "snapshots").glob(f"*/{PMEM_META}")):
        cells = snapshot_cells(meta.parent)
        stats = json.loads(meta.read_text()).get("stats", {})
        audit = audit_state(cells, gold_state(data.facts)).to_dict()
        decisions = stats.get("decisions", {})
        rows.append(
            {
                "arm": cfg["arm"]["name"],
                "writer": stats.get("writer"),
                "soft_identity": cfg["arm"].get("soft_identity"),
                "source": bench["source"],
                **audit,
                "facts": stats.get("facts"),
                "operations": sum(decisions.values()),
                "creates": decisions.get("create", 0),
                "revises": sum(n for d, n in decisions.items() if d != "create"),
                "gated": stats.get("gated"),
                "merged": stats.get("merged"),
                "noop_fallbacks": stats.get("annotation_fallbacks"),
                "extraction_failures": stats.get("extraction_failures"),
                "sh_stale_pct": _stale_rate(run),
                "started_at": manifest.get("started_at", ""),
                "run": run.name,
            }
        )
    return rows[0] if rows else None


def _stale_rate(run: Path) -> float | None:
    """The run's single-hop stale rate (%), when it scored one (B.4's StaleRate)."""
    summary = run / "summary.json"
    if not summary.exists():
        return None
    rate = (json.loads(summary.read_text()).get("rates") or {}).get("stale.stale")
    return round(100 * rate["rate"], 1) if rate else None


def collect_audits(runs: Path, experiment: str) -> pd.DataFrame:
    """One row per distinct store: runs that differ only in their read (iterative readout) or in
    the questions asked of the same stream (sh and mh share one) built the same state, so the
    newest single-hop run of each writer configuration and stream length stands for them."""
    rows = [
        row
        for folder in sorted((runs / experiment).glob("*/manifest.json"))
        if (row := audit_run(folder.parent)) is not None
    ]
    if not rows:
        raise NoRuns(
            f"no finished runs under {runs / experiment} with a P-Mem state store (arm "
            "pmem_state*): run table7 first"
        )
    df = pd.DataFrame(rows)
    df["stream"] = df["source"].str.split("_").str[1]
    df["soft_identity"] = (
        df["soft_identity"].astype(object).where(df["soft_identity"].notna(), "off")
    )
    df.loc[df["writer"] == "template-oracle", "soft_identity"] = "n/a"  # a parser: exact keys
    df["_sh"] = df["source"].str.startswith("sh")
    df["_single"] = ~df["arm"].str.endswith("_iter")  # the stale rate of the plain state read
    df = df.sort_values(["_sh", "_single", "started_at"])
    df = df.drop_duplicates(["writer", "soft_identity", "stream"], keep="last")
    return df.drop(columns=["_sh", "_single", "started_at"])


def write(runs: Path, experiment: str, out: Path) -> str:
    """Audit the experiment's state runs, write appendix_f.md and .csv into `out`; the markdown.
    `runs` is a live runs root or the committed export (results/runs), which carries each
    store's current cells. Raises `NoRuns` (writing nothing) when no state run is there."""
    df = collect_audits(runs, experiment)
    df = df.sort_values(["stream", "writer", "soft_identity"], key=lambda c: c.astype(str))
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "appendix_f.csv", index=False)
    shown = df.drop(columns=["run", "source"]).set_index(["stream", "arm"])
    paper = (
        "Paper at 6k (F, B.4): {keys} template keys; the extractor creates {cells_no_soft} cells "
        "without soft identity and {cells} with it ({merged} of {gated} gated candidates merged); "
        "single-hop stale 9.4% -> 4.7%."
    ).format(**PAPER_6K)
    text = (
        "# Appendix F: write-path audit (FactConsolidation)\n\n"
        + markdown_table(shown)
        + "\n\nsurvives_pct: keys whose gold current value some current cell about the subject "
        "holds; stale_sibling_pct: overwritten keys with a superseded value still current in "
        "another cell (benchmarks/factconsolidation/write_audit.py says how keys are matched).\n\n"
        + paper
        + "\n"
    )
    (out / "appendix_f.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.factconsolidation.write_audit",
        description="Appendix F's write-path audit of the FactConsolidation state runs.",
    )
    parser.add_argument(
        "--runs", type=Path, default=Path("runs"), help="a runs root, or results/runs"
    )
    parser.add_argument("--experiment", default="table7")
    parser.add_argument("--out", type=Path, default=Path("results/tables"))
    args = parser.parse_args(argv)
    try:
        print(write(args.runs, args.experiment, args.out))
    except NoRuns as err:
        print(f"write_audit: {err}; nothing written", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
