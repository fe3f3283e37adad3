"""``python -m benchmarks.factconsolidation stats``: the figures the released data gives."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from benchmarks.factconsolidation.facts import UnparsedFact
from benchmarks.factconsolidation.load import SOURCES, UnknownSource, load, normalize_source
from benchmarks.factconsolidation.stats import format_table, source_stats
from benchmarks.runner.types import InputError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.factconsolidation",
        description="MemoryAgentBench FactConsolidation: figures the released data gives.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    stats = sub.add_parser("stats", help="facts, keys, overwritten keys, stale denominator")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.add_argument("--source", action="append", help="a source (repeatable); default all")
    stats.add_argument("--path", help="a local Conflict_Resolution JSON, or 'hf' for the hub")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        sources = [normalize_source(s) for s in args.source] if args.source else list(SOURCES)
        loaded = [load(s, args.path) for s in sources]
    except (UnknownSource, UnparsedFact, InputError) as exc:  # InputError: the file, the hub
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = [source_stats(d) for d in loaded]
    if args.json:
        payload = {
            "file": loaded[0].origin,
            "sha256": loaded[0].sha256,
            "sources": [s.to_json() for s in stats],
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(format_table(stats))
    return 0
