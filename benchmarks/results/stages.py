"""Exported runs of one config at growing case counts: what `scripts/alfrev_peer_stages.sh` asks.

A peer's probe that outlasts a session runs in stages, `benchmark.cases` = 2, 4, … of the same
config; each case comes from its own seed, so a smaller run is the start of a larger one. Two
questions about `results/runs/<experiment>/` follow, answered here so the shell script holds no
logic of its own:

- which exported runs are the start of a larger exported run (drop them: one run a cell);
- whether a stage is already exported, at its case count or more (skip it: rerunning it answers
  from the response cache in a minute, but its re-export rewrites the run's manifest with a new
  start time and commit and the table with the same figures, a diff that says nothing).

Two runs are "the same config" when their manifests' configs are equal once `benchmark.cases` is
taken out: the whole resolved config, the model profile and revisions included.

    python -m benchmarks.results.stages drop-superseded results/runs/table8
    pmem-bench experiment=table8 arm=graphiti_alfrev benchmark.cases=4 --cfg job --resolve \\
        | python -m benchmarks.results.stages exported results/runs/table8
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml


def _cell(config: dict[str, Any]) -> tuple[str, int]:
    """A config's identity apart from its case count, and its case count."""
    benchmark = dict(config.get("benchmark") or {})
    cases = benchmark.pop("cases", None)
    if not isinstance(cases, int):
        raise ValueError("benchmark.cases: the config names no whole number of cases")
    return json.dumps({**config, "benchmark": benchmark}, sort_keys=True, default=str), cases


def _exported(folder: Path) -> list[tuple[str, int, Path]]:
    out = []
    for manifest in sorted(folder.glob("*/manifest.json")):
        config = json.loads(manifest.read_text(encoding="utf-8")).get("config") or {}
        try:
            cell, cases = _cell(config)
        except ValueError:
            continue  # not a staged benchmark (no case count): never part of a stage series
        out.append((cell, cases, manifest.parent))
    return out


def superseded(folder: Path) -> list[tuple[int, Path]]:
    """The exported runs under `folder` that are the first cases of a larger exported run of
    the same config, with their case counts."""
    by_cell: dict[str, list[tuple[int, Path]]] = {}
    for cell, cases, run in _exported(folder):
        by_cell.setdefault(cell, []).append((cases, run))
    return [old for runs in by_cell.values() for old in sorted(runs)[:-1]]


def exported(folder: Path, config: dict[str, Any]) -> Path | None:
    """A finished exported run of `config` with at least its cases, if there is one."""
    cell, cases = _cell(config)
    done = [
        (n, run)
        for other, n, run in _exported(folder)
        if other == cell and n >= cases and (run / "summary.json").exists()
    ]
    return max(done)[1] if done else None


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
        help="exit 0 naming the exported run that covers the config on stdin (the YAML of "
        "`pmem-bench … --cfg job --resolve`), 1 when none does",
    )
    done.add_argument("folder", type=Path, help="results/runs/<experiment>")
    args = p.parse_args(argv)
    if args.command == "drop-superseded":
        for cases, run in superseded(args.folder):
            print(f"dropping {run} ({cases} cases): the first cases of a larger exported run")
            shutil.rmtree(run)
        return 0
    try:
        config = yaml.safe_load(sys.stdin)
        if not isinstance(config, dict):
            raise ValueError("stdin: expected the YAML mapping `pmem-bench --cfg job` prints")
        run = exported(args.folder, config)
    except (ValueError, yaml.YAMLError) as err:
        print(f"stages: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    if run is None:
        return 1
    print(run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
