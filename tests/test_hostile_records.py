"""Records a user (or a crash, or another tool) left malformed in a run folder are set aside like
a torn line, never a crash; a benchmark that asks two questions under one id is refused at load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.results.records import Prediction
from benchmarks.runner.cli import check_question_ids
from benchmarks.runner.runs import RunFolder
from benchmarks.runner.types import Episode, InputError, Question

GOOD = {"id": "q1", "golds": ["x"], "prediction": "x"}
BAD = [
    {"id": None, "golds": ["x"]},
    {"id": "q2"},  # no golds: nothing to score it against
    {"id": "q3", "golds": "x"},
    {"id": "q4", "golds": ["x"], "context_chars": "many"},
    {"id": 5, "golds": ["x"]},
]


def test_malformed_predictions_are_set_aside_and_the_good_ones_kept(tmp_path: Path) -> None:
    run = RunFolder(tmp_path)
    lines = [GOOD, *BAD, {**GOOD, "id": "q9"}]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    kept = run.predictions.read()
    assert [p.id for p in kept] == ["q1", "q9"]
    rejected = (tmp_path / "predictions.jsonl.rejected").read_text().splitlines()
    assert len(rejected) == len(BAD)
    assert all("not a record" in json.loads(r)["problem"] for r in rejected)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


FIELDS = ["id", "golds", "prediction", "meta", "context_chars", "context_tokens", "episode", "x"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(FIELDS), json_values))
def test_any_json_object_is_a_prediction_or_has_a_named_problem(data: dict) -> None:
    """The contract of the reader: `problem` names what is wrong, or the record reads."""
    if Prediction.problem(data) is None:
        record = Prediction.from_json(data, "predictions.jsonl")
        assert isinstance(record.id, str) and (
            record.golds is None or isinstance(record.golds, list)
        )


def test_two_questions_with_one_id_are_refused_at_load() -> None:
    q = Question("dup", "where?", ("a",))
    episodes = [Episode("e1", (), (q,)), Episode("e2", (), (Question("ok", "?", ("b",)), q))]
    with pytest.raises(InputError, match=r"question id 'dup' appears twice"):
        check_question_ids("mine", episodes)
    check_question_ids("mine", episodes[:1])


def test_a_run_resumes_past_malformed_lines(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "benchmarks.runner", "experiment=smoke", "llm=scripted",
            "run.progress=false", f"run.root={tmp_path / 'runs'}"]  # fmt: skip
    first = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    (predictions,) = (tmp_path / "runs" / "smoke").glob("*/predictions.jsonl")
    with predictions.open("a") as f:
        for record in BAD:
            f.write(json.dumps(record) + "\n")
    again = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "6/6 questions answered" in again.stdout
    assert "Traceback" not in again.stderr
