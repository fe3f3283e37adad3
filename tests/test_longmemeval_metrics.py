"""LongMemEval's official metrics and the official eval-results export.

The expectations are the official script's own output: ``print_qa_metrics.py``
(xiaowu0162/LongMemEval @ 9e0b455f4ef0e2ab8f2e582289761153549043fc, src/evaluation, the
newest commit; the file is unchanged since b11ff72, 2024-10-12) was run once, unmodified and
with no stubs (it imports only sys, json and numpy), by the project's .venv Python (numpy
2.4.6) on the two files ``write_export`` writes for ``synthetic_run()`` (eval-results.jsonl and
eval-references.json; their sha256 are pinned below):

    python print_qa_metrics.py eval-results.jsonl eval-references.json

Its printout is ``OFFICIAL_PRINTOUT`` below, quoted as it came. So the test checks both that
our aggregation is the script's and that our export is a file the script reads.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.longmemeval import (
    EVAL_RESULTS,
    OFFICIAL_TYPES,
    REFERENCES,
    LongMemEval,
    format_metrics,
    metrics_from_files,
    official_metrics,
)
from benchmarks.longmemeval.export import ExportError, export_run, write_export

OFFICIAL_MODEL = "gpt-4o-2024-08-06"  # print_qa_metrics.py asserts this judge name

# LongMemEval-S's type sizes (500 questions) and abstention ids per type (30 in all).
SIZES = {
    "single-session-user": 70,
    "single-session-preference": 30,
    "single-session-assistant": 56,
    "multi-session": 133,
    "temporal-reasoning": 133,
    "knowledge-update": 78,
}
ABSTENTIONS = {"single-session-user": 6, "multi-session": 12, "temporal-reasoning": 6,
               "knowledge-update": 6}  # fmt: skip
# A different accuracy per type, so the task average and the overall differ.
RATES = {
    "single-session-user": 0.81,
    "single-session-preference": 0.37,
    "single-session-assistant": 0.66,
    "multi-session": 0.42,
    "temporal-reasoning": 0.35,
    "knowledge-update": 0.69,
}
SEED = 15

OFFICIAL_PRINTOUT = """
Evaluation results by task:
\tsingle-session-user: 0.7286 (70)
\tsingle-session-preference: 0.3667 (30)
\tsingle-session-assistant: 0.6429 (56)
\tmulti-session: 0.3534 (133)
\ttemporal-reasoning: 0.3008 (133)
\tknowledge-update: 0.6282 (78)

Task-averaged Accuracy: 0.5034
Overall Accuracy: 0.468
Abstention Accuracy: 0.5 (30)"""

OFFICIAL = {
    "by_type": {
        "single-session-user": 0.7286,
        "single-session-preference": 0.3667,
        "single-session-assistant": 0.6429,
        "multi-session": 0.3534,
        "temporal-reasoning": 0.3008,
        "knowledge-update": 0.6282,
    },
    "task_averaged": 0.5034,
    "overall": 0.468,
    "abstention": 0.5,
    "abstention_n": 30,
}
# The two files the script read (sha256), so a rerun of it can be checked against the same input.
FILES_SHA256 = {
    EVAL_RESULTS: "2948ee63293bc26759b5686916d57a3fd29b69f07a8d286a7e6ecbaa89181795",
    REFERENCES: "7f290404304e84d4a28169dcf6690a7423766238db47998ccd97bc1e5b231861",
}


def synthetic_run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """500 seeded verdicts as the runner records them: prediction records (with the question's
    meta), score rows of the official judge scorer, and the run's config."""
    rng = random.Random(SEED)
    predictions, scores = [], []
    for qtype, size in SIZES.items():
        for i in range(size):
            qid = f"q{len(predictions):03d}" + ("_abs" if i < ABSTENTIONS.get(qtype, 0) else "")
            correct = rng.random() < RATES[qtype]
            predictions.append(
                {
                    "id": qid,
                    "question": f"question {qid}?",
                    "golds": [f"answer {i}"],
                    "prediction": f"hypothesis {qid}",
                    "meta": {"question_id": qid, "question_type": qtype},
                }
            )
            scores.append({"id": qid, "judge": {"correct": correct, "reply": "yes" * correct}})
    config = {
        "scorers": {"judge": {"_target_": "benchmarks.longmemeval.judge.LongMemEvalJudge"}},
        "judge": {"model": OFFICIAL_MODEL},
    }
    return predictions, scores, config


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_our_figures_on_our_export_are_the_official_scripts(tmp_path: Path) -> None:
    predictions, scores, config = synthetic_run()
    exported = write_export(tmp_path, predictions, scores, config)
    for name, sha in FILES_SHA256.items():  # the very files the official script was run on
        assert hashlib.sha256((tmp_path / name).read_bytes()).hexdigest() == sha
    m = metrics_from_files(
        read_lines(tmp_path / EVAL_RESULTS), json.loads((tmp_path / REFERENCES).read_text())
    )
    assert m == exported.metrics
    assert m.by_type == OFFICIAL["by_type"]
    assert m.type_n == SIZES
    assert m.task_averaged == OFFICIAL["task_averaged"]
    assert m.overall == OFFICIAL["overall"]
    assert (m.abstention, m.abstention_n) == (OFFICIAL["abstention"], OFFICIAL["abstention_n"])
    assert format_metrics(m) == OFFICIAL_PRINTOUT
    # the three differ, as they do on the real set: overall is not the task average
    assert abs(m.task_averaged - m.overall) > 0.03


def test_the_export_is_the_official_eval_results_shape_and_round_trips(tmp_path: Path) -> None:
    predictions, scores, config = synthetic_run()
    write_export(tmp_path, predictions, scores, config)
    lines = read_lines(tmp_path / EVAL_RESULTS)
    assert len(lines) == 500
    for line in lines:  # evaluate_qa.py's entry: the hypothesis line plus autoeval_label
        assert set(line) == {"question_id", "hypothesis", "autoeval_label"}
        assert set(line["autoeval_label"]) == {"model", "label"}
        assert line["autoeval_label"]["model"] == OFFICIAL_MODEL
        assert isinstance(line["autoeval_label"]["label"], bool)
    by_id = {p["id"]: p for p in predictions}
    verdict = {s["id"]: s["judge"]["correct"] for s in scores}
    assert {x["question_id"]: (x["hypothesis"], x["autoeval_label"]["label"]) for x in lines} == {
        i: (by_id[i]["prediction"], verdict[i]) for i in by_id
    }
    refs = json.loads((tmp_path / REFERENCES).read_text())
    assert {r["question_id"]: r["question_type"] for r in refs} == {
        i: p["meta"]["question_type"] for i, p in by_id.items()
    }
    assert all(set(r) == {"question_id", "question_type", "question", "answer"} for r in refs)


def test_a_run_folder_exports_from_its_records(tmp_path: Path) -> None:
    predictions, scores, config = synthetic_run()
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"config": config}))
    packed = "".join(json.dumps(p) + "\n" for p in predictions).encode()  # a committed export
    (run / "predictions.jsonl.gz").write_bytes(gzip.compress(packed))
    (run / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores[:-1]))
    exported = export_run(run)
    assert exported.results == run / EVAL_RESULTS and exported.lines == 499  # one not scored
    assert exported.metrics.n == 499
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.longmemeval", "metrics", str(run / EVAL_RESULTS),
         str(run / REFERENCES)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.rstrip("\n") == format_metrics(exported.metrics)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["scorers"] = {"substring": {"_target_": "x.SubstringMatch"}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ExportError, match=r"no LongMemEvalJudge among the run's scorers"):
        export_run(run)
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.longmemeval", "export", str(run)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_the_official_rules_on_edge_cases() -> None:
    # a missing type makes the official task average nan (None), as np.mean over a nan does
    m = official_metrics([("a", "knowledge-update", True), ("b_abs", "knowledge-update", False)])
    assert m.by_type["knowledge-update"] == 0.5 and m.by_type["multi-session"] is None
    assert m.task_averaged is None and m.task_averaged_present == 0.5
    assert (m.overall, m.abstention, m.abstention_n) == (0.5, 0.0, 1)
    assert "\tmulti-session: nan (0)" in format_metrics(m)
    # '_abs' anywhere in the id, as the script tests it; the question also counts in its type
    m = official_metrics([("x_abs_1", "multi-session", True)])
    assert (m.abstention_n, m.type_n["multi-session"]) == (1, 1)
    assert official_metrics([]).overall is None
    with pytest.raises(ValueError, match="question_type 'chit-chat' is not one of"):
        official_metrics([("a", "chit-chat", True)])
    with pytest.raises(ValueError, match="not in the references"):
        metrics_from_files([{"question_id": "z", "autoeval_label": {"label": True}}], [])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(OFFICIAL_TYPES), st.booleans(), st.booleans()),
        min_size=1,
        max_size=60,
    )
)
def test_overall_is_the_share_correct_and_types_partition_it(rows) -> None:
    labels = [(f"q{i}" + ("_abs" if a else ""), t, c) for i, (t, c, a) in enumerate(rows)]
    m = official_metrics(labels)
    assert m.n == len(labels) == sum(m.type_n.values())
    assert m.overall == round(sum(c for _, _, c in labels) / len(labels), 4)
    for t in OFFICIAL_TYPES:
        got = [c for _, q, c in labels if q == t]
        assert m.by_type[t] == (round(sum(got) / len(got), 4) if got else None)
    assert m.abstention_n == sum(a for _, _, a in rows)
    assert (m.task_averaged is None) == (len({t for t, _, _ in rows}) < len(OFFICIAL_TYPES))


def test_the_benchmark_hook_writes_the_export_and_the_summary_figures(tmp_path: Path) -> None:
    predictions, scores, config = synthetic_run()
    extra = LongMemEval().on_scored(tmp_path, predictions, scores, config)
    figures = extra["longmemeval"]
    assert figures["overall"] == OFFICIAL["overall"]
    assert figures["task_averaged"] == OFFICIAL["task_averaged"]
    assert figures["by_type"]["multi-session"] == {"accuracy": 0.3534, "n": 133}
    assert (tmp_path / EVAL_RESULTS).exists() and figures["eval_results"] == EVAL_RESULTS
    # a run without the official judge (a read-only sweep) gets nothing
    assert LongMemEval().on_scored(tmp_path / "x", predictions, scores, {"scorers": {}}) == {}
