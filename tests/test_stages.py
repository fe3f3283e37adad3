"""Staged peer runs (benchmarks/alfworld_revision/peer_stages.sh): which exported runs a
larger one contains, whether a stage is already exported, and the script itself: its stages,
its skips on a rerun, the dump it keeps and a stop."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from benchmarks.models.cache import KIND_GROUPS
from benchmarks.results.stages import covering, exported_runs, main, superseded
from tests.bench import fake_run

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "alfworld_revision" / "peer_stages.sh"
SCRIPTED = "llm=scripted embedder=scripted judge=scripted run.progress=false"


def _runs(root: Path) -> Path:
    fake_run(root, "a2", arm="graphiti", L=1, cases=2, correct=1)
    fake_run(root, "a4", arm="graphiti", L=1, cases=4, correct=2)
    fake_run(root, "b2", arm="graphiti", L=1, cases=2, correct=1, model="other")
    fake_run(root, "b6", arm="graphiti", L=1, cases=6, correct=3, model="other", complete=False)
    return root / "table6"


def _config(folder: Path, cases: int, **llm: object) -> dict:
    config = json.loads((folder / "manifest.json").read_text())["config"]
    benchmark = {**config["benchmark"], "cases": cases}
    return {**config, "benchmark": benchmark, "llm": {**config["llm"], **llm}}


def _names(runs) -> list[str]:
    return sorted(r.folder.name for r in runs)


def test_only_a_larger_complete_run_of_the_same_config_supersedes(tmp_path: Path) -> None:
    table = _runs(tmp_path)
    assert _names(superseded(exported_runs(table))) == ["a2"], (
        "b2 is another model's run, and its larger run b6 stopped mid-way: kept"
    )
    assert main(["drop-superseded", str(table)]) == 0
    assert sorted(p.name for p in table.iterdir()) == ["a4", "b2", "b6"]
    assert superseded(exported_runs(table)) == []
    assert exported_runs(tmp_path / "none") == [], "no folder yet: no runs"


def test_a_stage_is_exported_when_a_complete_run_has_its_cases_or_more(tmp_path: Path) -> None:
    table = _runs(tmp_path)
    runs = exported_runs(table)

    def found(folder: str, cases: int, **llm: object) -> str | None:
        run = covering(runs, _config(table / folder, cases, **llm))
        return run.folder.name if run else None

    assert found("a2", 2) == "a4", "the larger run covers it"
    assert found("a4", 4) == "a4"
    assert found("a4", 3, timeout_s=5, server={"threads": 16}) == "a4", "how a model is called"
    assert found("a4", 6) is None, "6 cases: not run yet"
    assert found("a4", 4, revision="r2") is None, "another model revision: another run"
    assert found("b2", 2) == "b2"
    assert found("b2", 6) is None, "b6 stopped mid-way: its stage runs again"


def test_the_cli_reads_the_config_pmem_bench_prints(tmp_path: Path, capsys, monkeypatch) -> None:
    table = _runs(tmp_path)
    for cases in (3, 5):
        monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(_config(table / "a4", cases))))
        assert main(["exported", str(table)]) == 0
    assert capsys.readouterr().out.splitlines() == [str(table / "a4")], "5 cases: nothing"
    monkeypatch.setattr("sys.stdin", io.StringIO("- not\n- a config\n"))
    assert main(["exported", str(table)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "stages: stdin: expected the YAML mapping `pmem-bench --cfg job` prints"
    ]
    (table / "a4" / "summary.json").write_text("{not json")
    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(_config(table / "a4", 3))))
    assert main(["exported", str(table)]) == 2, "a damaged summary is said, not taken as absent"
    assert capsys.readouterr().err.startswith("stages: ")


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    """The script run from `tmp_path` on the scripted models, P-Mem's commit arm at d=0."""
    return {
        **os.environ,
        "ARM": "pmem_commit",
        "DISTANCES": "0",
        "STEP": "1",
        "CASES": "2",
        "BENCH": f"{sys.executable} -m benchmarks.runner",
        "RESULTS": f"{sys.executable} -m benchmarks.results",
        "PY": sys.executable,
        "OVERRIDES": SCRIPTED,
        **more,
    }


def _workdir(tmp_path: Path) -> Path:
    table = tmp_path / "results" / "runs" / "table8"
    table.mkdir(parents=True)
    committed = sorted((REPO / "results" / "runs" / "table8").glob("raw_topk__*d0__*"))
    assert committed, "the committed Table 8 raw_topk run (the table rebuild needs a row)"
    shutil.copytree(committed[0], table / committed[0].name)
    return table


def _chat_entries(cache: Path) -> int:
    with sqlite3.connect(cache) as db:
        query = "SELECT COUNT(*) FROM responses WHERE kind IN (?, ?)"
        return int(db.execute(query, KIND_GROUPS["chat"]).fetchone()[0])


def _cases(run: Path) -> int:
    return json.loads((run / "manifest.json").read_text())["config"]["benchmark"]["cases"]


def _stages(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("== ", "   already"))]


def test_the_script_runs_each_stage_dumps_its_calls_and_skips_what_is_exported(
    tmp_path: Path,
) -> None:
    """Scripted runs are never exported, so the first invocation runs both stages; its runs,
    copied where an export puts them (the config a run records is the one the script composes),
    make a second invocation skip both."""
    table = _workdir(tmp_path)
    env = _env(tmp_path, DUMP=str(tmp_path / "d.jsonl.gz"))
    run = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert _stages(run.stdout) == [
        "== pmem_commit, table8 (benchmark.d=0), 1 cases",
        "== pmem_commit, table8 (benchmark.d=0), 2 cases",
    ]
    # the page is rebuilt with the table (what the committed-report test checks)
    assert "P-Mem reproduction report" in (tmp_path / "results" / "report.html").read_text()
    dumped = gzip.decompress((tmp_path / "d.jsonl.gz").read_bytes()).splitlines()
    assert len(dumped) == _chat_entries(tmp_path / "runs" / "cache.sqlite") > 0

    for folder in (tmp_path / "runs" / "table8").iterdir():
        shutil.copytree(folder, table / folder.name, ignore=shutil.ignore_patterns("snapshots"))
    env["OVERRIDES"] = SCRIPTED.replace("run.progress=false", "run.progress=true")
    again = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env={**env, "DUMP": ""},
                           capture_output=True, text=True, timeout=600)  # fmt: skip
    assert again.returncode == 0, again.stderr[-3000:]
    (two,) = [f for f in table.glob("pmem_commit__*") if _cases(f) == 2]
    skip = f"   already exported complete ({Path('results/runs/table8') / two.name}): skipped"
    assert _stages(again.stdout) == [
        "== pmem_commit, table8 (benchmark.d=0), 1 cases",
        skip,  # the 2-case run holds the 1-case stage's case
        "== pmem_commit, table8 (benchmark.d=0), 2 cases",
        skip,
    ]

    bad = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=60)  # fmt: skip
    assert (bad.returncode, bad.stderr.strip()) == (
        2,
        f"DUMP={tmp_path / 'd.jsonl.gz'}: exists; name a new dump (each holds the calls of one "
        "invocation)",
    )


def _pkill_f(pattern: str) -> int:
    """SIGTERM to every process whose command line holds `pattern`, as `pkill -f` sends it (the
    docs' way to stop a background run): the script and its dump timer, a copy of it."""
    hits = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if pattern.encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), signal.SIGTERM)
                hits += 1
        except (OSError, ValueError):
            continue  # gone meanwhile
    return hits


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds processes in /proc")
def test_a_stopped_script_stops_its_run_and_dumps_what_it_paid(tmp_path: Path) -> None:
    """`pkill -f` mid-stage: the stage's pmem-bench stops too (its stop record says SIGTERM),
    the script exits 143, and the calls paid are dumped before the run is waited for and once
    more after (the timer, stopped by the same pkill, takes no dump away)."""
    _workdir(tmp_path)
    script = tmp_path / "stages.sh"  # its own path, so the pkill reaches this test's copy only
    shutil.copyfile(SCRIPT, script)
    env = _env(tmp_path, CASES="140", STEP="140", DUMP=str(tmp_path / "d.jsonl.gz"),
               DISTANCES="32")  # fmt: skip
    proc = subprocess.Popen(["bash", str(script)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 300
    answered = list((tmp_path / "runs").glob("table8/*/predictions.jsonl"))
    while not (answered and answered[0].stat().st_size) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.2)
        answered = list((tmp_path / "runs").glob("table8/*/predictions.jsonl"))
    assert _pkill_f(str(script)) == 2, "the script and its dump timer"
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err[-3000:]
    assert [
        line.split(" entries")[0] for line in out.splitlines() if line.startswith("wrote ")
    ] == ["wrote " + str(_chat_entries(tmp_path / "runs" / "cache.sqlite"))] * 2, (
        "dumped before the run is waited for and after"
    )
    (folder,) = (tmp_path / "runs" / "table8").iterdir()
    assert json.loads((folder / "stopped.json").read_text()).get("signal") == "SIGTERM"
    assert not (folder / "summary.json").exists(), "stopped before its 280 questions"
    dumped = gzip.decompress((tmp_path / "d.jsonl.gz").read_bytes()).splitlines()
    assert len(dumped) == _chat_entries(tmp_path / "runs" / "cache.sqlite") > 0
