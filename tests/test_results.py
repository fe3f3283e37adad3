"""Results a researcher can trust and inspect: the sample log (what the reader saw), the public
loader (`benchmarks.results`), and tables that a dry run or a smaller run cannot replace."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.reports.frame import collect, history_costs
from benchmarks.reports.tables import build, build_all
from benchmarks.results import NoRuns, export_runs, load_ingest, load_runs, load_summaries
from benchmarks.results.__main__ import main as results_main
from tests.bench import fake_run

SCRIPTED = ["llm=scripted", "embedder=scripted", "judge=scripted"]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real scripted run of Table 6 (P-Mem commit, L=2, 3 cases): its runs root."""
    root = tmp_path_factory.mktemp("dry") / "runs"
    args = ["experiment=table6", "arm=pmem_commit", "benchmark.L=2", "benchmark.cases=3"]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *args, *SCRIPTED, f"run.root={root}",
         "run.progress=false"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return root


def test_the_sample_log_keeps_what_the_reader_saw(dry_run: Path) -> None:
    (folder,) = (dry_run / "table6").iterdir()
    samples = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    predictions = [json.loads(x) for x in (folder / "predictions.jsonl").read_text().splitlines()]
    assert sorted(s["id"] for s in samples) == sorted(p["id"] for p in predictions)
    for sample in samples:
        context = sample["context"]
        assert context["chars"] == len(context["text"]) and context["ids"]
        (reader,) = [c for c in sample["calls"] if c["role"] == "reader"]
        sent = reader["messages"][-1]["content"]
        assert context["text"] in sent, "the reader's prompt holds the arm's read"
        assert sample["question"] in sent
        assert reader["reply"] == sample["prediction"]
    # per ingest: the writer's calls, each with its messages and raw reply
    calls = [
        json.loads(line)
        for f in sorted(folder.glob("snapshots/*/calls.jsonl"))
        for line in f.read_text().splitlines()
    ]
    writer = [c for c in calls if c["role"] == "writer"]
    # L=2: three events per case, one key call and one patch call each
    assert len(writer) == 3 * 3 * 2
    assert sum(c["schema"] == "key" for c in writer) == 3 * 3
    assert all(c["messages"] and "reply" in c and c["schema"] for c in writer)
    assert {c["role"] for c in calls} <= {"writer", "embedder"}


def test_the_loader_reads_every_run_as_dataframes_and_never_exits(dry_run: Path) -> None:
    with pytest.raises(NoRuns, match=r"only .* scripted"):
        load_summaries(dry_run)  # a dry run is not a result
    runs = load_summaries(dry_run, include_scripted=True)
    (row,) = runs.to_dict("records")
    assert row["experiment"] == "table6" and row["scripted"] and row["cases"] == 3
    assert row["profile"].startswith("scripted@") and row["location.n"] == 3
    q = load_runs(dry_run, "table6", include_scripted=True)
    assert len(q) == 3 and set(q["id"]) == {f"alfrev-L2-{i:03d}" for i in range(3)}
    assert {"location.correct", "substring.correct", "context_text", "calls"} <= set(q.columns)
    assert all(text in call[-1]["messages"][-1]["content"]
               for text, call in zip(q["context_text"], q["calls"], strict=True))  # fmt: skip
    with pytest.raises(NoRuns):
        load_runs(dry_run.parent / "nothing-here")


def test_a_dry_run_never_replaces_a_committed_table(dry_run: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "results"
    (out / "tables").mkdir(parents=True)
    committed = out / "tables" / "table6.md"
    committed.write_text("# Table 6 (the committed one)\n")
    assert build_all(dry_run, out) == {
        "table6": f"no paper runs under {dry_run / 'table6'}: only scripted dry runs; "
        f"{out / 'tables' / 'table6'}.md left as it is"
    }
    assert committed.read_text() == "# Table 6 (the committed one)\n"
    assert sorted(p.name for p in out.rglob("*") if p.is_file()) == ["table6.md"]
    assert "scripted dry run(s) set aside" in capsys.readouterr().err
    assert build_all(tmp_path / "no-runs", out) == {}
    assert "no finished runs" in capsys.readouterr().err
    # asked for explicitly, a dry-run table says what it is
    md = build("table6", dry_run, tmp_path / "dry", include_scripted=True)
    assert "Scripted dry runs: not model results" in md


def test_a_smaller_or_other_profile_run_never_replaces_a_cell(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    for L in (1, 2, 4, 8):
        fake_run(runs, f"full-L{L}", arm="pmem_commit", L=L, cases=20, correct=20)
    # a newer 5-case check of one cell, and a newer run on another model
    fake_run(runs, "check", arm="pmem_commit", L=4, cases=5, correct=0, started="2026-02-01")
    fake_run(runs, "other", arm="pmem_commit", L=2, cases=20, correct=1, model="x",
             started="2026-02-01")  # fmt: skip
    df = collect(runs, "table6")
    assert sorted(df["run"]) == ["full-L1", "full-L2", "full-L4", "full-L8"]
    err = capsys.readouterr().err
    assert "built from the 5 run(s) of profile m@r1, embedder e" in err
    assert "table6/check is superseded by a run with more cases (full-L4: 20 vs 5)" in err
    assert "set aside 1 run(s) of profile x@r1, embedder e" in err and ": other" in err
    md = build("table6", runs, tmp_path / "out")
    assert "Built from 4 run(s) of profile `m@r1, embedder e`, 20 cases per cell." in md
    # arms run at other sizes by design are kept, and the header names them
    fake_run(runs, "long", arm="raw_topk", L=1, cases=10, correct=5)
    assert "20 cases per cell (raw_topk 10)." in build("table6", runs, tmp_path / "out")
    only_x = collect(runs, "table6", profile="x")
    assert list(only_x["run"]) == ["other"]
    with pytest.raises(NoRuns, match="no runs of profile 'y'"):
        collect(runs, "table6", profile="y")


def test_a_complete_run_beats_a_newer_incomplete_one(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "done", arm="raw_topk", L=2, cases=20, correct=15)
    fake_run(runs, "partial", arm="raw_topk", L=2, cases=20, correct=3, complete=False,
             started="2026-03-01")  # fmt: skip
    assert list(collect(runs, "table6")["run"]) == ["done"]
    assert "table6/partial is superseded by a complete run (done)" in capsys.readouterr().err


def test_export_is_what_the_loader_reads_and_is_byte_stable(tmp_path: Path, dry_run: Path) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", arm="pmem_commit", L=1, cases=20, correct=20)
    dest = tmp_path / "results" / "runs"
    (exported,) = export_runs(runs, dest, "table6")
    first = (exported / "predictions.jsonl.gz").read_bytes()
    export_runs(runs, dest, "table6")
    assert (exported / "predictions.jsonl.gz").read_bytes() == first
    assert json.loads(gzip.decompress(first))["prediction"] == "desk 1"
    q = load_runs(dest)
    assert list(q["id"]) == ["q1"] and bool(q["location.correct"].iloc[0])
    assert export_runs(dry_run, tmp_path / "dry-export", "table6") == [], "never a dry run"
    # what each attempt paid travels with the run
    stop = {"outcome": "stopped", "stopped": "KeyboardInterrupt('signal 15')", "usage": {}}
    (runs / "table6" / "a" / "attempts.jsonl").write_text(json.dumps(stop) + "\n")
    export_runs(runs, dest, "table6")
    assert json.loads(gzip.decompress((exported / "attempts.jsonl.gz").read_bytes())) == stop


def test_an_export_replaces_its_earlier_one_and_never_a_finished_one_with_less(
    tmp_path: Path, caplog
) -> None:
    """A run exported while it went (its progress record) and again once finished leaves no
    progress behind; the same config begun again elsewhere never replaces a finished export."""
    runs, dest = tmp_path / "runs", tmp_path / "results" / "runs"
    fake_run(runs, "a", arm="pmem_commit", L=1, cases=20, correct=20)
    folder, exported = runs / "table6" / "a", dest / "table6" / "a"
    summary = (folder / "summary.json").read_text()
    (folder / "summary.json").unlink()
    progress = folder / "snapshots" / "s" / "ingest_progress.json"
    progress.parent.mkdir(parents=True)
    progress.write_text(json.dumps({"units_done": 3, "units_total": 27}))
    assert export_runs(runs, dest, "table6") == [exported]
    assert (exported / "snapshots/s/ingest_progress.json").exists()
    assert not (exported / "summary.json").exists()

    progress.unlink()
    (folder / "summary.json").write_text(summary)
    assert export_runs(runs, dest, "table6") == [exported]
    assert (exported / "summary.json").read_text() == summary
    assert not (exported / "snapshots/s/ingest_progress.json").exists()

    (folder / "summary.json").unlink()  # begun again on another machine, not yet finished
    assert export_runs(runs, dest, "table6") == []
    assert (exported / "summary.json").read_text() == summary
    assert "its finished export" in caplog.text and "is kept" in caplog.text


def test_the_command_line_shows_a_runs_samples(dry_run: Path, capsys) -> None:
    (folder,) = (dry_run / "table6").iterdir()
    assert results_main(["show", str(folder), "--calls", "--id", "alfrev-L2-000"]) == 0
    out = capsys.readouterr().out
    assert "alfrev-L2-000" in out and "question: where is the" in out and "reader scripted" in out
    assert results_main(["show", str(dry_run)]) == 2
    assert "not a finished run folder" in capsys.readouterr().err
    assert results_main(["list", "--runs", str(dry_run)]) == 2  # only a dry run: says so
    assert "scripted" in capsys.readouterr().err


def test_the_ingest_calls_load_and_travel_with_the_export(dry_run: Path, tmp_path: Path) -> None:
    calls = load_ingest(dry_run, include_scripted=True)
    writer = calls[calls["role"] == "writer"]
    assert len(writer) == 9 * 2 and writer["snapshot"].nunique() == 3  # key + patch calls
    assert all("Observation:" in m[-1]["content"] for m in writer["messages"])
    (folder,) = (dry_run / "table6").iterdir()
    assert results_main(["show", str(folder), "--ingest", "--chars", "200"]) == 0
    # a copy made as the export makes it (the export itself never takes a dry run)
    manifest = json.loads((folder / "manifest.json").read_text())
    for role in ("llm", "embedder", "judge"):
        manifest["config"][role].pop("server", None)
    copy = tmp_path / "runs" / "table6" / folder.name
    copy.mkdir(parents=True)
    for name in ("summary.json", "predictions.jsonl", "scores.jsonl", "samples.jsonl"):
        (copy / name).write_bytes((folder / name).read_bytes())
    (copy / "manifest.json").write_text(json.dumps(manifest))
    for snap in (folder / "snapshots").iterdir():
        (copy / "snapshots" / snap.name).mkdir(parents=True)
        for name in ("calls.jsonl", "ingest.json", "store.sqlite"):
            (copy / "snapshots" / snap.name / name).write_bytes((snap / name).read_bytes())
    (exported,) = export_runs(tmp_path / "runs", tmp_path / "export", "table6")
    assert (exported / "ingest_calls.jsonl.gz").exists()
    again = load_ingest(tmp_path / "export")
    assert list(again["reply"]) == list(calls["reply"])
    assert len(load_runs(tmp_path / "export")) == 3
    # each history's ingest record travels (what a table's cost columns read), its store not
    kept = sorted(p.relative_to(exported).as_posix() for p in (exported / "snapshots").rglob("*"))
    assert kept == sorted(
        x for s in (folder / "snapshots").iterdir() for x in (f"snapshots/{s.name}",
                                                              f"snapshots/{s.name}/ingest.json")
    )  # fmt: skip
    costs, exported_costs = history_costs(copy), history_costs(exported)
    assert exported_costs["writer_calls"].sum() == costs["writer_calls"].sum() == 18
    assert list(exported_costs["wall_s"]) == list(costs["wall_s"])


def test_a_dry_run_writes_nothing_into_results(tmp_path: Path) -> None:
    """Table 4's question-class scorer keeps a store under results/; a scripted run's
    classifications go under its run root instead (the config says where)."""
    from tests.test_experiments import overrides_for

    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", *overrides_for("table4"), "run.root=runs"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert not (tmp_path / "results").exists()
    assert (tmp_path / "runs" / "dry-run" / "longmemeval_classes.jsonl").read_text().strip()
    (manifest,) = (tmp_path / "runs" / "table4").glob("*/manifest.json")
    stores = [
        s.get("store") for s in json.loads(manifest.read_text())["config"]["scorers"].values()
    ]
    assert "runs/dry-run/longmemeval_classes.jsonl" in stores


# JSON leaves these line separators unescaped in a text, and str.splitlines splits at them
SEPARATORS = "one\u2028two\u2029three\x85four"


def test_a_record_holding_a_unicode_line_separator_is_read_whole(tmp_path: Path) -> None:
    """A reply or a haystack turn may hold U+2028, U+2029 or U+0085; a reader splitting lines
    at them dropped the record as 'not a record' (a table on one question fewer, silently)."""
    from benchmarks.results.loader import ingest_calls, read_records
    from benchmarks.runner.runs import JsonLines

    folder = tmp_path / "run"
    folder.mkdir()
    records = JsonLines(folder / "predictions.jsonl", required=("id",))
    records.append({"id": "q1", "prediction": SEPARATORS})
    records.append({"id": "q2", "prediction": "plain"})
    assert [r["prediction"] for r in read_records(folder, "predictions")] == [SEPARATORS, "plain"]
    assert [r["id"] for r in records.read()] == ["q1", "q2"]  # the runner's own reader agrees
    _pack_like_the_export(folder / "predictions.jsonl")
    (folder / "predictions.jsonl").unlink()
    assert [r["prediction"] for r in read_records(folder, "predictions")] == [SEPARATORS, "plain"]
    snapshot = folder / "snapshots" / "e1"
    snapshot.mkdir(parents=True)
    JsonLines(snapshot / "calls.jsonl").append({"role": "writer", "reply": SEPARATORS})
    assert [c["reply"] for c in ingest_calls(folder)] == [SEPARATORS]


def _pack_like_the_export(path: Path) -> None:
    path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))


def test_a_tables_columns_hold_no_folder_of_the_machine(tmp_path: Path) -> None:
    """A benchmark setting that is an absolute path (the single-revision rewrites file) shows
    by its file name, as the data file does: a committed csv is the same on every machine."""
    runs = tmp_path / "runs"
    fake_run(runs, "a", arm="pmem_commit", L=1, cases=20, correct=20)
    manifest_file = runs / "table6" / "a" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["config"]["benchmark"].update(
        rewrites="/work/main/results/alfworld/single_revision_local.jsonl",
        path="/data/alfworld/cases.jsonl",
    )
    manifest_file.write_text(json.dumps(manifest))
    row = load_summaries(runs).iloc[0]
    assert row["rewrites"] == "single_revision_local.jsonl" and row["data"] == "cases.jsonl"
    assert "path" not in row.index and row["folder"] == str(runs / "table6" / "a")


def test_export_finished_only_leaves_a_stopped_run_behind(tmp_path: Path, capsys, caplog) -> None:
    """`pmem-results export --finished-only`: a run stopped mid-ingest, or one that finished with
    a question unanswered, gets no folder (so a rebuilt table has no "Incomplete runs" line for
    it); without the flag each is exported, the stopped one as its progress, and the command
    says so."""
    runs, dest = tmp_path / "runs", tmp_path / "results" / "runs"
    fake_run(runs, "done", arm="pmem_commit", L=1, cases=20, correct=20)
    fake_run(runs, "short", arm="pmem_commit", L=2, cases=20, correct=18, complete=False)
    fake_run(runs, "stopped", arm="raw_topk", L=1, cases=20, correct=3)
    stopped = runs / "table6" / "stopped"
    (stopped / "summary.json").unlink()
    progress = stopped / "snapshots" / "s" / "ingest_progress.json"
    progress.parent.mkdir(parents=True)
    progress.write_text(json.dumps({"units_done": 3, "units_total": 27}))
    args = ["export", "table6", "--runs", str(runs), "--to", str(dest)]

    assert results_main([*args, "--finished-only"]) == 0
    assert sorted(p.name for p in (dest / "table6").iterdir()) == ["done"]
    out = capsys.readouterr().out
    assert "done" in out and "stopped" not in out and "short" not in out
    said = f"{runs / 'table6' / 'short'} answered 19 of its 20 questions: left behind"
    assert said in caplog.text

    assert results_main(args) == 0
    assert (dest / "table6" / "short" / "summary.json").exists()
    assert (dest / "table6" / "stopped" / "snapshots/s/ingest_progress.json").exists()
    assert "stopped (unfinished: its progress only)" in capsys.readouterr().out
