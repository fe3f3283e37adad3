"""The LongMemEval command line: fetch the official files, check a file, print its figures,
export a run's verdicts in the official shape and aggregate them as the official script does.

    python -m benchmarks.longmemeval fetch [--variant s|oracle|s_cleaned] [--dest DIR]
    python -m benchmarks.longmemeval stats [--path FILE] [--json]
    python -m benchmarks.longmemeval export RUN_DIR [--out DIR] [--json]
    python -m benchmarks.longmemeval metrics EVAL_RESULTS REF_FILE [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks.longmemeval.export import ExportError, export_run
from benchmarks.longmemeval.hub import VARIANTS, DownloadError, default_dest, fetch, hub_offline
from benchmarks.longmemeval.loader import load
from benchmarks.longmemeval.schema import SchemaError
from benchmarks.longmemeval.stats import (
    OfficialMetrics,
    format_metrics,
    format_stats,
    instance_stats,
    metrics_from_files,
)

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
    export_p = sub.add_parser(
        "export", help="a run folder's verdicts as official eval-results, and their metrics"
    )
    export_p.add_argument("run_dir", type=Path, help="a LongMemEval run folder")
    export_p.add_argument("--out", type=Path, default=None, help="folder (default: the run's)")
    export_p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    metrics_p = sub.add_parser(
        "metrics", help="print_qa_metrics.py's figures for an eval-results file"
    )
    metrics_p.add_argument("eval_results", type=Path, help="eval-results JSON lines")
    metrics_p.add_argument("ref_file", type=Path, help="the data file or eval-references.json")
    metrics_p.add_argument("--json", action="store_true", help="print the metrics as JSON")
    return parser


def _read_json_or_lines(path: Path) -> list[dict]:
    """A JSON list or JSON lines, as evaluate_qa.py accepts either."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError:
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    return data if isinstance(data, list) else [data]


def _print_metrics(metrics: OfficialMetrics, as_json: bool) -> None:
    print(json.dumps(metrics.to_dict(), indent=2) if as_json else format_metrics(metrics))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "fetch":
        offline = args.offline or hub_offline()
        code, report = fetch(args.variant, args.dest or default_dest(), offline=offline)
        print(report, file=sys.stdout if code == 0 else sys.stderr)
        return code
    if args.command == "export":
        try:
            exported = export_run(args.run_dir, args.out)
        except (ExportError, OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {exported.results} ({exported.lines} lines) and {exported.references}")
        _print_metrics(exported.metrics, args.json)
        return 0
    if args.command == "metrics":
        try:
            metrics = metrics_from_files(
                _read_json_or_lines(args.eval_results), _read_json_or_lines(args.ref_file)
            )
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except (KeyError, TypeError) as exc:
            print(
                f"error: {args.eval_results} / {args.ref_file}: missing field {exc}",
                file=sys.stderr,
            )
            return 2
        _print_metrics(metrics, args.json)
        return 0
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
