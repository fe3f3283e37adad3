"""Tables are built from run folders alone: ours with intervals beside the paper's numbers."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.reports.tables import TABLES, arm_key, collect, main


def fake_run(root: Path, name: str, arm: str, L: int, correct: int, n: int, started: str) -> None:
    folder = root / "table6" / name
    folder.mkdir(parents=True)
    config = {
        "arm": {"name": arm},
        "benchmark": {"name": f"alfrev-L{L}", "L": L, "cases": n},
        "llm": {"model": "m"},
        "embedder": {"model": "e"},
    }
    (folder / "manifest.json").write_text(json.dumps({"config": config, "started_at": started}))
    summary = {
        "n": n,
        "expected": n,
        "complete": True,
        "scores": {
            "location": {"accuracy": correct / n, "correct": correct, "n": n, "ci95": [0.5, 1.0]}
        },
        "read": {"mean_chars": 30.0, "mean_tokens": 8.0, "tokens_exact": True},
    }
    (folder / "summary.json").write_text(json.dumps(summary))


def test_table6_reports_ours_beside_the_paper_and_drops_superseded_runs(tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", "pmem_commit", 1, 20, 20, "2026-01-01T00:00:00")
    fake_run(runs, "b", "pmem_commit", 2, 10, 20, "2026-01-01T00:00:00")  # superseded below
    fake_run(runs, "c", "pmem_commit", 2, 19, 20, "2026-01-02T00:00:00")
    fake_run(runs, "d", "raw_topk", 2, 15, 20, "2026-01-01T00:00:00")
    df = collect(runs, "table6")
    assert sorted(df["run"]) == ["a", "c", "d"]
    assert "table6/b is superseded" in capsys.readouterr().err
    md = TABLES["table6"](df, runs, tmp_path / "out")
    assert "| pmem_commit | 100.0 [50–100] / 100.0 | 95.0 [50–100] / 100.0 |" in md.replace(
        "  ", ""
    )
    assert "75.0 [50–100] / 72.9" in md  # raw top-10 at L=2 beside the paper's 72.9
    assert (tmp_path / "out" / "figures" / "table6.png").stat().st_size > 0


def test_the_command_writes_markdown_and_csv(tmp_path) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", "raw_topk", 1, 20, 20, "2026-01-01T00:00:00")
    assert main(["table6", "--runs", str(runs), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "tables" / "table6.md").read_text().startswith("# Table 6")
    assert "raw_topk" in (tmp_path / "out" / "tables" / "table6.csv").read_text()


def test_a_runs_row_carries_its_writer() -> None:
    arm = {"name": "pmem_materialized_full"}
    assert arm_key({"arm": arm, "writer": None}) == "pmem_materialized_full"
    assert arm_key({"arm": arm}) == "pmem_materialized_full"
    paper_35b = {"model": "Qwen/Qwen3.6-35B-A3B-FP8"}
    assert arm_key({"arm": arm, "writer": paper_35b}) == "pmem_materialized_full_35b"
    other = {"model": "qwen2.5-coder-1.5b-instruct"}
    assert (
        arm_key({"arm": arm, "writer": other})
        == "pmem_materialized_full@qwen2.5-coder-1.5b-instruct"
    )
