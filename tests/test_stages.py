"""Staged peer runs (scripts/alfrev_peer_stages.sh): which exported runs a larger one contains,
and whether a stage is already exported, so a rerun of the script goes on where it stopped."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import yaml

from benchmarks.models.cache import KIND_GROUPS, ResponseCache
from benchmarks.results.stages import exported, main, superseded
from tests.bench import fake_run


def _runs(root: Path) -> Path:
    fake_run(root, "a2", arm="graphiti", L=1, cases=2, correct=1)
    fake_run(root, "a4", arm="graphiti", L=1, cases=4, correct=2)
    fake_run(root, "b2", arm="graphiti", L=1, cases=2, correct=1, model="other")
    fake_run(root, "c6", arm="mem0", L=1, cases=6, correct=3, complete=False)
    (root / "table6" / "c6" / "summary.json").unlink()  # stopped mid-way: no summary
    return root / "table6"


def _config(folder: Path, cases: int) -> dict:
    config = json.loads((folder / "manifest.json").read_text())["config"]
    return {**config, "benchmark": {**config["benchmark"], "cases": cases}}


def test_only_the_start_of_a_larger_run_of_the_same_config_is_superseded(tmp_path: Path) -> None:
    table = _runs(tmp_path)
    assert superseded(table) == [(2, table / "a2")], "b2 is another model's run: kept"
    assert main(["drop-superseded", str(table)]) == 0
    assert sorted(p.name for p in table.iterdir()) == ["a4", "b2", "c6"]
    assert superseded(table) == []


def test_a_stage_is_exported_when_a_finished_run_has_its_cases_or_more(tmp_path: Path) -> None:
    table = _runs(tmp_path)
    assert exported(table, _config(table / "a2", 2)) == table / "a4", "the larger run covers it"
    assert exported(table, _config(table / "a4", 4)) == table / "a4"
    assert exported(table, _config(table / "a4", 6)) is None, "6 cases: not run yet"
    assert exported(table, _config(table / "b2", 4)) is None, "the other model's run has 2"
    assert exported(table, _config(table / "c6", 6)) is None, "unfinished: never skipped"


def test_the_cli_reads_the_config_pmem_bench_prints(tmp_path: Path, capsys, monkeypatch) -> None:
    table = _runs(tmp_path)
    for cases, code in ((3, 0), (5, 1)):
        monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(_config(table / "a4", cases))))
        assert main(["exported", str(table)]) == code
    assert capsys.readouterr().out.strip() == str(table / "a4")
    monkeypatch.setattr("sys.stdin", io.StringIO("- not\n- a config\n"))
    assert main(["exported", str(table)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "stages: stdin: expected the YAML mapping `pmem-bench --cfg job` prints"
    ]


def test_the_composed_config_is_the_one_a_run_records(tmp_path: Path) -> None:
    """What the script compares, `pmem-bench … --cfg job --resolve`, is the config a run writes
    to its manifest (a dry run writes the manifest and stops), so an exported stage is found."""
    root = tmp_path / "runs"
    args = ["experiment=table8", "arm=pmem_commit", "benchmark.d=32", f"run.root={root}"]
    args += ["run.dry_run=true"]
    bench = [sys.executable, "-m", "benchmarks.runner"]
    done = subprocess.run([*bench, *args, "benchmark.cases=2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = (root / "table8").iterdir()
    (run / "summary.json").write_text("{}")  # as if it had finished
    for cases, code in ((1, 0), (2, 0), (3, 1)):
        cfg = subprocess.run(
            [*bench, *args, f"benchmark.cases={cases}", "--cfg", "job", "--resolve"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        found = subprocess.run(
            [sys.executable, "-m", "benchmarks.results.stages", "exported", str(root / "table8")],
            input=cfg.stdout, capture_output=True, text=True,
        )  # fmt: skip
        assert (found.returncode, found.stdout.strip()) == (code, str(run) if code == 0 else "")


def test_the_stage_script_runs_each_stage_and_dumps_what_it_paid(tmp_path: Path) -> None:
    """The script end to end on the scripted models (a dry run: never exported, so each stage
    runs), from a folder of its own: its stages run and its paid calls land in DUMP."""
    repo = Path(__file__).resolve().parents[1]
    table = tmp_path / "results" / "runs" / "table8"
    table.mkdir(parents=True)  # a committed run, so the table rebuild has a row to build
    shutil.copytree(next((repo / "results" / "runs" / "table8").glob("raw_topk__*d0__*")),
                    table / "raw_topk")  # fmt: skip
    bin_ = Path(sys.executable).parent
    env = {
        **os.environ,
        "ARM": "pmem_commit",
        "DISTANCES": "0",
        "STEP": "1",
        "CASES": "2",
        "BENCH": f"{sys.executable} -m benchmarks.runner",
        "RESULTS": f"{sys.executable} -m benchmarks.results",
        "PY": sys.executable,
        "OVERRIDES": "llm=scripted embedder=scripted judge=scripted run.progress=false",
        "DUMP": str(tmp_path / "d.jsonl.gz"),
        "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        ["bash", str(repo / "scripts" / "alfrev_peer_stages.sh")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert [line for line in done.stdout.splitlines() if line.startswith("== ")] == [
        "== pmem_commit, table8 (benchmark.d=0), 1 cases",
        "== pmem_commit, table8 (benchmark.d=0), 2 cases",
    ]
    with ResponseCache(tmp_path / "fresh.sqlite") as fresh:
        added, _ = fresh.load(tmp_path / "d.jsonl.gz")
    with sqlite3.connect(tmp_path / "runs" / "cache.sqlite") as paid:
        (chat,) = paid.execute(
            "SELECT COUNT(*) FROM responses WHERE kind IN (?, ?)", KIND_GROUPS["chat"]
        ).fetchone()
    assert added == chat > 0, "every chat call the stages paid is in the dump"
    bad = subprocess.run(
        ["bash", str(repo / "scripts" / "alfrev_peer_stages.sh")],
        cwd=tmp_path, env={**env, "DUMP": "calls.json"}, capture_output=True, text=True,
    )  # fmt: skip
    assert (bad.returncode, bad.stderr.strip()) == (
        2,
        "DUMP=calls.json: a dump is a .jsonl.gz file, e.g. results/cache/<date>-<run>.jsonl.gz",
    )
