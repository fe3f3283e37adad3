"""`pmem-results list` fits the terminal: no line wider than COLUMNS (100 where stdout is no
terminal), every run still listed (named whole where it fits, else by its head and its hash),
and `--wide` the full table with every value whole."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.results import load_summaries
from benchmarks.results.__main__ import main as results_main
from tests.bench import fake_run

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "results" / "runs"
LONG_MODEL = "a-very-long-model-name-" * 4


def listed(capsys, *args: str) -> list[str]:
    assert results_main(["list", *args]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Table 6 runs with long names, of two profiles (so a profile column), one unfinished."""
    root = tmp_path / "runs"
    arm = "pmem_commit_with_a_name_long_enough_to_need_cutting_at_any_width"
    for i, L in enumerate((1, 2, 4)):
        fake_run(root, f"{arm}__alfrev-L{L}__{i:010d}", arm="pmem_commit", L=L, cases=20,
                 correct=10)  # fmt: skip
    fake_run(root, "short__alfrev-L8__9999999999", arm="raw_topk", L=8, cases=20, correct=5,
             model=LONG_MODEL, complete=False)  # fmt: skip
    return root


@pytest.mark.parametrize("columns", [100, 80, 40])
def test_every_line_fits_and_every_run_is_listed(runs: Path, columns: int, capsys,
                                                  monkeypatch) -> None:  # fmt: skip
    monkeypatch.setenv("COLUMNS", str(columns))
    lines = listed(capsys, "--runs", str(runs))
    assert lines and all(len(line) <= columns for line in lines), max(lines, key=len)
    for run in load_summaries(runs)["run"]:
        shown = run if len(run) + 4 <= columns // 2 else run[-10:]  # the hash survives a cut
        assert sum(shown in line for line in lines) == 1, run
    assert any("19/20" in line for line in lines)  # the unfinished run says how far it got
    assert lines[0].startswith("table6  (4 runs, 2 profiles)")


def test_without_a_terminal_or_columns_it_fits_100(runs: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    width = shutil.get_terminal_size((100, 24)).columns  # 100 unless pytest -s in a terminal
    assert all(len(line) <= width for line in listed(capsys, "--runs", str(runs)))


def test_the_committed_runs_fit_100_columns_each_named_whole(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    lines = listed(capsys, "--runs", str(COMMITTED))
    assert max(map(len, lines)) <= 100
    df = load_summaries(COMMITTED)
    firsts = [line.split()[:1] for line in lines]
    for run, times in df["run"].value_counts().items():
        assert firsts.count([run]) == times, run
    for experiment in df["experiment"].unique():
        assert sum(line.startswith(f"{experiment}  (") for line in lines) == 1, experiment


def test_wide_keeps_every_value_whole(runs: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    lines = listed(capsys, "--runs", str(runs), "--wide")
    assert max(map(len, lines)) > 100
    assert lines[0].split()[:5] == ["experiment", "run", "profile", "n", "expected"]
    for run, profile in load_summaries(runs)[["run", "profile"]].itertuples(index=False):
        (line,) = [line for line in lines if run in line]
        assert profile in line
