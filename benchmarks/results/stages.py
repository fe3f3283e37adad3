"""Exported runs of one config at growing case counts: which to drop, which stages to skip.

A staged peer run (`benchmarks/alfworld_revision/peer_stages.sh`) repeats one config at growing
`benchmark.cases`, each case from its own seed, so a smaller run is the start of a larger one.
Two runs are the same config when their `identity.semantic_config` less `benchmark.cases` match.

    python -m benchmarks.results.stages drop-superseded results/runs/table8
    pmem-bench experiment=table8 arm=graphiti_alfrev benchmark.cases=4 --cfg job --resolve \\
        | python -m benchmarks.results.stages exported results/runs/table8
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmarks.results.identity import semantic_config


@dataclass(frozen=True)
class Exported:
    """One exported run as a stage series sees it."""

    cell: str  # its identity apart from the case count
    cases: int
    complete: bool  # finished with every case answered (summary.json says so)
    folder: Path


def cell_of(config: dict[str, Any]) -> tuple[str, int]:
    """A config's identity apart from its case count, and its case count.

    The identity is the run's `semantic_config`: what decides the results, so not `run.*`,
    thread counts or endpoints.
    """
    identity = semantic_config(config)
    benchmark = dict(identity.get("benchmark") or {})
    cases = benchmark.pop("cases", None)
    if not isinstance(cases, int) or isinstance(cases, bool):
        raise ValueError("benchmark.cases: the config names no whole number of cases")
    return json.dumps({**identity, "benchmark": benchmark}, sort_keys=True, default=str), cases


def exported_runs(folder: Path) -> list[Exported]:
    """The exported runs under `folder` that belong to a stage series (a benchmark with a case
    count); a folder that does not exist holds none."""
    out = []
    for manifest in sorted(folder.glob("*/manifest.json")):
        config = json.loads(manifest.read_text(encoding="utf-8")).get("config") or {}
        try:
            cell, cases = cell_of(config)
        except ValueError:
            continue  # not a staged benchmark: never part of a stage series
        summary = manifest.parent / "summary.json"
        complete = summary.exists() and bool(
            json.loads(summary.read_text(encoding="utf-8")).get("complete")
        )
        out.append(Exported(cell, cases, complete, manifest.parent))
    return out


def superseded(runs: list[Exported]) -> list[Exported]:
    """The runs that are the first cases of a larger complete run of the same config. Only a
    complete run supersedes: a larger run stopped mid-way never costs a finished one. They are
    dropped, so each cell has one run."""
    return [
        run
        for run in runs
        if any(o.cell == run.cell and o.complete and o.cases > run.cases for o in runs)
    ]


def covering(runs: list[Exported], config: dict[str, Any]) -> Exported | None:
    """The complete run of `config` with the most cases, at least its own, if there is one.

    A stage so covered is skipped: rerunning it answers from the response cache in a minute,
    but its re-export rewrites the run's manifest with a new start time and commit and the
    table with the same figures, a diff that says nothing.
    """
    cell, cases = cell_of(config)
    done = [r for r in runs if r.cell == cell and r.complete and r.cases >= cases]
    return max(done, key=lambda r: r.cases) if done else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.results.stages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    drop = sub.add_parser("drop-superseded", help="delete exported runs a larger one contains")
    drop.add_argument("folder", type=Path, help="results/runs/<experiment>")
    done = sub.add_parser(
        "exported",
        help="print the exported run that covers the config on stdin (the YAML of "
        "`pmem-bench … --cfg job --resolve`); print nothing when none does",
    )
    done.add_argument("folder", type=Path, help="results/runs/<experiment>")
    args = p.parse_args(argv)
    try:
        runs = exported_runs(args.folder)
        if args.command == "drop-superseded":
            for run in superseded(runs):
                print(f"dropping {run.folder} ({run.cases} cases): the first cases of a larger run")
                shutil.rmtree(run.folder)
            return 0
        config = yaml.safe_load(sys.stdin)
        if not isinstance(config, dict):
            raise ValueError("stdin: expected the YAML mapping `pmem-bench --cfg job` prints")
        found = covering(runs, config)
    except (OSError, ValueError, yaml.YAMLError) as err:  # a JSON error is a ValueError
        print(f"stages: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    if found is not None:
        print(found.folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
