"""A run folder's records as types (benchmarks.results.records): what the runner writes reads
back the same through the loader, every new record carries its schema version, the committed
runs (which have none) read as schema 0, and a newer schema is refused in one line naming the
file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks.results import load_runs, load_summaries
from benchmarks.results.__main__ import main as results_main
from benchmarks.results.loader import read_manifest, read_records, read_summary, read_typed
from benchmarks.results.records import (
    SCHEMA_KEY,
    SCHEMA_VERSION,
    Manifest,
    Prediction,
    ReadContext,
    Sample,
    SchemaError,
    Score,
    Summary,
)
from benchmarks.runner.runs import RunFolder, manifest

COMMITTED = Path(__file__).resolve().parents[1] / "results" / "runs" / "table6"
CONFIG = {
    "arm": {"name": "raw_topk"},
    "benchmark": {"name": "alfrev-L1", "L": 1, "cases": 1},
    "llm": {"model": "m", "revision": "r1"},
    "embedder": {"model": "e"},
}


def records() -> tuple[Prediction, Sample, Score, Summary, Manifest]:
    prediction = Prediction(
        id="q1",
        episode="e1",
        question="Where is the mug?",
        golds=["desk 1"],
        meta={"case": 1},
        prediction="desk 1",
        context_chars=12,
        context_tokens=4,
        context_tokens_exact=True,
        context_items=1,
        context_meta={"coverage": 1.0},
    )
    sample = Sample(
        id="q1",
        episode="e1",
        question="Where is the mug?",
        golds=["desk 1"],
        prediction="desk 1",
        context=ReadContext(text="mug: desk 1", ids=["c1"], chars=12, tokens=4, meta={}),
        calls=[{"role": "reader", "reply": "desk 1"}],
    )
    score = Score(id="q1", scorers={"location": {"correct": True}})
    summary = Summary(
        n=1,
        expected=1,
        complete=True,
        scores={"location": {"accuracy": 1.0, "correct": 1, "n": 1, "ci95": [0.2, 1.0]}},
        read={"mean_chars": 12.0, "mean_tokens": 4.0, "tokens_exact": True},
        extra={"figures": {"official": 1.0}},
        run="runs/table6/x",
        usage={},
        wall_s=1.5,
        earlier_attempts={"n": 0, "stopped": 0, "usage": {}, "wall_s": 0.0},
        rescore=False,
        read_only=False,
    )
    made = manifest(CONFIG, {"sha256": "abc"}, {"answer": "Answer: {context}"})
    return prediction, sample, score, summary, made


def write_run(folder: Path) -> tuple[Prediction, Sample, Score, Summary, Manifest]:
    """A finished run folder written by the runner's own writers."""
    folder.mkdir(parents=True)
    run = RunFolder(folder)
    prediction, sample, score, summary, made = records()
    run.write_record("manifest.json", made)
    run.samples.append(sample)
    run.predictions.append(prediction)
    run.scores.rewrite([score])
    run.write_record("summary.json", summary)
    return prediction, sample, score, summary, made


def test_records_round_trip_through_the_runner_and_the_loader(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "table6" / "raw_topk__alfrev-L1__0"
    prediction, sample, score, summary, made = write_run(folder)
    run = RunFolder(folder)
    assert run.predictions.read() == [prediction]
    assert run.samples.read() == [sample]
    assert run.scores.read() == [score]
    assert run.read_record("summary.json", Summary) == summary
    assert run.read_record("manifest.json", Manifest) == made
    assert read_typed(folder, "predictions", Prediction) == [prediction]
    assert read_typed(folder, "samples", Sample) == [sample]
    assert read_typed(folder, "scores", Score) == [score]
    assert read_summary(folder) == summary and read_manifest(folder) == made
    # a benchmark's own figures stay where the runner always wrote them: after `read`
    keys = list(json.loads((folder / "summary.json").read_text()))
    assert keys.index("figures") == keys.index("read") + 1
    (row,) = load_runs(tmp_path / "runs", "table6").to_dict("records")
    assert (row["prediction"], row["location.correct"], row["context_ids"]) == ("desk 1", 1, ["c1"])
    assert SCHEMA_KEY not in {c.split(".")[0] for c in row}  # the version is no scorer
    assert load_summaries(tmp_path / "runs")["location.acc"].tolist() == [100.0]


def test_new_files_carry_the_schema_version(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "table6" / "run"
    write_run(folder)
    for name in ("predictions", "samples", "scores"):
        lines = (folder / f"{name}.jsonl").read_text().splitlines()
        assert lines and all(json.loads(x)[SCHEMA_KEY] == SCHEMA_VERSION == 1 for x in lines)
    for name in ("summary.json", "manifest.json"):
        written = json.loads((folder / name).read_text())
        assert next(iter(written)) == SCHEMA_KEY and written[SCHEMA_KEY] == 1, name


def test_a_committed_run_without_a_version_reads_as_schema_0() -> None:
    folder = sorted(p for p in COMMITTED.iterdir() if (p / "summary.json").exists())[0]
    summary_json = json.loads((folder / "summary.json").read_text())
    manifest_json = json.loads((folder / "manifest.json").read_text())
    assert SCHEMA_KEY not in summary_json and SCHEMA_KEY not in manifest_json
    summary, made = read_summary(folder), read_manifest(folder)
    assert summary.schema == made.schema == 0
    # read as it is: the record's JSON is the file's, bar the version
    assert summary.to_json() == {SCHEMA_KEY: 0, **summary_json}
    assert list(summary.to_json())[1:] == list(summary_json)
    assert made.to_json() == {SCHEMA_KEY: 0, **manifest_json}
    for name, kind in (("predictions", Prediction), ("samples", Sample), ("scores", Score)):
        raw = read_records(folder, name)
        typed = read_typed(folder, name, kind)
        assert raw and len(typed) == len(raw), name
        assert all(r.schema == 0 for r in typed), name
        assert [{SCHEMA_KEY: 0, **r} for r in raw] == [t.to_json() for t in typed], name


def test_a_file_without_a_version_loads_as_schema_0(tmp_path: Path) -> None:
    folder = tmp_path / "table6" / "old"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"config": CONFIG}))
    (folder / "predictions.jsonl").write_text(json.dumps({"id": "q1", "prediction": "x"}) + "\n")
    (prediction,) = read_typed(folder, "predictions", Prediction)
    assert prediction.schema == 0 and prediction.prediction == "x" and prediction.golds is None
    assert read_manifest(folder).schema == 0 and read_manifest(folder).config == CONFIG


@pytest.mark.parametrize("name", ["predictions", "scores", "samples", "summary", "manifest"])
def test_a_newer_schema_is_refused_in_one_line_naming_the_file(tmp_path: Path, name: str) -> None:
    runs = tmp_path / "runs"
    folder = runs / "table6" / "raw_topk__alfrev-L1__0"
    write_run(folder)
    if name in ("summary", "manifest"):
        path = folder / f"{name}.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), SCHEMA_KEY: 99}))
    else:
        path = folder / f"{name}.jsonl"
        (line,) = path.read_text().splitlines()
        path.write_text(json.dumps({**json.loads(line), SCHEMA_KEY: 99}) + "\n")
    run = RunFolder(folder)
    readers = {  # the loader's, and the runner's (a resumed run reads these back)
        "predictions": [lambda: load_runs(runs, "table6"), run.predictions.read],
        "scores": [lambda: load_runs(runs, "table6"), run.scores.read],
        "samples": [lambda: load_runs(runs, "table6"), run.samples.read],
        "summary": [lambda: load_summaries(runs), lambda: run.read_record(path.name, Summary)],
        "manifest": [lambda: load_runs(runs), lambda: run.read_record(path.name, Manifest)],
    }
    for read in readers[name]:
        with pytest.raises(SchemaError) as refused:
            read()
        message = str(refused.value)
        assert "\n" not in message and message.startswith(f"{path}: record schema 99 is newer")
    assert path.exists()  # refused, never set aside: a newer harness's record is no damage


def test_a_newer_schema_in_an_export_names_the_packed_file(tmp_path: Path) -> None:
    folder = tmp_path / "table6" / "run"
    write_run(folder)
    (line,) = (folder / "predictions.jsonl").read_text().splitlines()
    packed = folder / "predictions.jsonl.gz"
    packed.write_bytes(
        gzip.compress((json.dumps({**json.loads(line), SCHEMA_KEY: 2}) + "\n").encode())
    )
    (folder / "predictions.jsonl").unlink()
    with pytest.raises(SchemaError, match=f"{packed}: record schema 2 is newer"):
        read_records(folder, "predictions")


def test_pmem_results_says_a_newer_schema_in_one_line(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    folder = runs / "table6" / "run"
    write_run(folder)
    summary = folder / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()), SCHEMA_KEY: 99}))
    assert results_main(["list", "--runs", str(runs)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"results: {summary}: record schema 99")


def test_a_version_that_is_no_number_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match=r"x\.jsonl: schema '1' is not a record schema version"):
        Prediction.from_json({"id": "q", SCHEMA_KEY: "1"}, tmp_path / "x.jsonl")
    with pytest.raises(SchemaError, match="a summary record without complete"):
        Summary.from_json({"n": 1, "expected": 1, "scores": {}}, "summary.json")
