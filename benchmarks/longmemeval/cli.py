"""The LongMemEval command line: fetch the official files, check a file, print its figures.

    python -m benchmarks.longmemeval fetch [--variant s|oracle|s_cleaned] [--dest DIR]
    python -m benchmarks.longmemeval stats [--path FILE] [--json]

``fetch`` downloads a pinned file, or says which URL to put where when no hub is reachable;
``stats`` checks a file against the official schema and prints what ``stats`` computes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.longmemeval.hub import VARIANTS, DownloadError, default_dest, fetch, hub_offline
from benchmarks.longmemeval.loader import load
from benchmarks.longmemeval.schema import SchemaError
from benchmarks.longmemeval.stats import format_stats, instance_stats

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.longmemeval",
        description="LongMemEval: fetch the official files, check a file, print its figures.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fetch_p = sub.add_parser("fetch", help="download or check an official file")
    fetch_p.add_argument("--variant", choices=list(VARIANTS), default="s_cleaned")
    fetch_p.add_argument("--dest", type=Path, default=None, help="folder (default: the cache)")
    fetch_p.add_argument("--offline", action="store_true", help="never try to download")
    stats_p = sub.add_parser("stats", help="question types, abstentions, haystack sizes")
    stats_p.add_argument("--path", help="a haystack file (default: the shipped S instance)")
    stats_p.add_argument("--variant", choices=list(VARIANTS), default="s")
    stats_p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "fetch":
        offline = args.offline or hub_offline()
        code, report = fetch(args.variant, args.dest or default_dest(), offline=offline)
        print(report, file=sys.stdout if code == 0 else sys.stderr)
        return code
    try:
        loaded = load(args.path, args.variant)
    except (SchemaError, FileNotFoundError, DownloadError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stats = instance_stats(loaded.instances)
    if args.json:
        print(json.dumps({"file": loaded.origin, "sha256": loaded.sha256, **stats}, indent=2))
    else:
        print(format_stats(stats, loaded.origin, loaded.sha256))
    return 0
