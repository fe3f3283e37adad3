"""Run folders for tests: `pmem-bench` run as a user runs it (a subprocess on the scripted
profile), and `fake_run`, a finished run folder written directly, for the table rules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPTED = ("llm=scripted", "embedder=scripted", "judge=scripted", "run.progress=false")


def pmem_bench(root: Path, *overrides: str, cwd: Path | None = None) -> str:
    """One scripted run (or `-m` sweep) under `root`; its stdout. Fails the test with the end
    of stderr when the run fails."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *overrides, *SCRIPTED, f"run.root={root}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def fake_run(root: Path, name: str, *, arm: str, L: int, cases: int, correct: int,
             model: str = "m", started: str = "2026-01-01T00:00:00",
             complete: bool = True) -> None:  # fmt: skip
    """A finished Table 6 run folder (manifest, summary, one scored question) with `correct`
    of its cases right; the summary's interval is a fixed [50, 100]."""
    folder = root / "table6" / name
    folder.mkdir(parents=True)
    config = {
        "arm": {"name": arm},
        "benchmark": {"name": f"alfrev-L{L}", "L": L, "cases": cases},
        "llm": {"model": model, "revision": "r1"},
        "embedder": {"model": "e"},
    }
    n = cases if complete else cases - 1
    (folder / "manifest.json").write_text(json.dumps({"config": config, "started_at": started}))
    summary = {
        "n": n,
        "expected": cases,
        "complete": complete,
        "scores": {
            "location": {"accuracy": correct / n, "correct": correct, "n": n, "ci95": [0.5, 1.0]}
        },
        "read": {"mean_chars": 30.0, "mean_tokens": 8.0, "tokens_exact": True},
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "predictions.jsonl").write_text(
        json.dumps({"id": "q1", "golds": ["desk 1"], "prediction": "desk 1"}) + "\n"
    )
    (folder / "scores.jsonl").write_text(json.dumps({"id": "q1", "location": {"correct": True}}))
