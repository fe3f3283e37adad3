"""The judge audit of runs exported before it: each run's judge, started as the run started it
(from its manifest; its calls through the response cache), on the run's planted answers
(`audit.judge_audit`), written where the runner writes it. One audit per judge and question
set, shared by every run of that set.

    python -m benchmarks.longmemeval.audit_runs results/runs/longmemeval_local [--cache FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

from benchmarks.longmemeval.audit import judge_audit
from benchmarks.longmemeval.export import judge_scorer
from benchmarks.models.cache import ResponseCache
from benchmarks.models.usage import UsageMeter
from benchmarks.results.loader import read_only, read_typed, summary_with
from benchmarks.results.records import Prediction
from benchmarks.runner.stack import ModelStack

AUDIT_FILE = "judge_audit.jsonl.gz"


def _write_run(folder: Path, found: dict[str, Any], cases: list[dict[str, Any]]) -> None:
    """The audit into an exported run: its cases (gzipped, same bytes for the same cases) and
    summary.json's ``judge_audit`` where the runner puts it, every other key as it was."""
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    (folder / AUDIT_FILE).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    text = summary_with(folder, judge_audit=found)
    (folder / "summary.json").write_text(text, encoding="utf-8")


async def audit_runs(experiment: Path, cache: Path) -> list[str]:
    """Audit every judged, answered run under `experiment` with the judge its manifest names
    (started as the run started it; calls through `cache`): one audit per judge and question
    set, written into each run of that set. Returns a line per audit."""
    done: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}
    stacks: dict[str, ModelStack] = {}
    lines = []
    with ResponseCache(str(cache)) as responses:
        try:
            for summary in sorted(experiment.glob("*/summary.json")):
                folder = summary.parent
                config = json.loads((folder / "manifest.json").read_text())["config"]
                if judge_scorer(config) is None or read_only(folder):
                    continue
                records = [p.to_json() for p in read_typed(folder, "predictions", Prediction)]
                judge_key = json.dumps(config.get("judge"), sort_keys=True)
                key = judge_key + json.dumps(sorted(str(r["id"]) for r in records))
                if key not in done:
                    if judge_key not in stacks:
                        stacks[judge_key] = ModelStack(config, responses, UsageMeter(), folder)
                    judge = await stacks[judge_key].get("judge")
                    done[key] = await judge_audit(records, judge)
                    found = done[key][0]
                    lines.append(
                        f"{found['judge']}: {found['questions']} questions, false accepts "
                        f"{found['false_accept']}, false rejects {found['false_reject']}"
                    )
                _write_run(folder, *done[key])
        finally:
            for stack in stacks.values():
                await stack.close()
                stack.stop_servers()
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.longmemeval.audit_runs",
        description="Record the judge audit of exported judged runs (their judge is started as "
        "the run started it).",
    )
    p.add_argument("experiment", type=Path, help="e.g. results/runs/longmemeval_local")
    p.add_argument("--cache", type=Path, default=Path("runs/cache.sqlite"))
    args = p.parse_args(argv)
    for line in asyncio.run(audit_runs(args.experiment, args.cache)):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
