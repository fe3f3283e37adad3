"""Tables are built from run folders alone: ours with intervals beside the paper's numbers."""

from __future__ import annotations

from benchmarks.reports.tables import TABLES, arm_key, collect, main
from tests.bench import fake_run


def test_table6_reports_ours_beside_the_paper_and_drops_superseded_runs(tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", arm="pmem_commit", L=1, cases=20, correct=20)
    fake_run(runs, "b", arm="pmem_commit", L=2, cases=20, correct=10)  # superseded by c
    fake_run(runs, "c", arm="pmem_commit", L=2, cases=20, correct=19, started="2026-01-02T00:00:00")
    fake_run(runs, "d", arm="raw_topk", L=2, cases=20, correct=15)
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
    fake_run(runs, "a", arm="raw_topk", L=1, cases=20, correct=20)
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
