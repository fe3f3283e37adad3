"""The paper's claims as checks (`benchmarks.reports.claims`): paired outcomes of the same
questions get the exact McNemar test, different questions Fisher's, and each claim a verdict
(holds / does not hold / not run) that follows from the runs, never from the paper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import stats
from benchmarks.reports import claims
from benchmarks.reports.claims import Claim, Side, evaluate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def run(root: Path, arm: str, L: int, outcomes: list[bool], *, prefix: str = "q") -> None:
    """A finished Table 6 run folder whose question i was answered right iff outcomes[i]."""
    folder = root / "table6" / f"{arm}__alfrev-L{L}__{prefix}"
    folder.mkdir(parents=True)
    n = len(outcomes)
    config = {
        "arm": {"name": arm},
        "benchmark": {"name": f"alfrev-L{L}", "L": L, "cases": n},
        "llm": {"model": "m", "revision": "r1"},
        "embedder": {"model": "e"},
    }
    manifest = {"config": config, "started_at": "2026-12-07T00:00:00+00:00"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    summary = {
        "n": n, "expected": n, "complete": True,
        "scores": {"location": {"accuracy": sum(outcomes) / n, "correct": sum(outcomes), "n": n,
                                "ci95": [0.0, 1.0]}},
    }  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary))
    ids = [f"{prefix}{i}" for i in range(n)]
    (folder / "predictions.jsonl").write_text(
        "".join(json.dumps({"id": i, "golds": ["x"], "prediction": "x"}) + "\n" for i in ids)
    )
    (folder / "scores.jsonl").write_text(
        "".join(json.dumps({"id": i, "location": {"correct": ok}}) + "\n"
                for i, ok in zip(ids, outcomes, strict=True))
    )  # fmt: skip


def claim(a: Side, b: Side, direction: str = ">", **more) -> Claim:
    outcome = more.pop("outcome", "location.correct")
    return Claim("c", "§4.2.1", "a beats b", "table6", a, b, outcome, direction=direction,
                 command="make reproduce-table6", **more)  # fmt: skip


def test_a_paired_claim_that_holds(tmp_path: Path) -> None:
    a = [True] * 18 + [False] * 2
    b = [True] * 4 + [False] * 16
    run(tmp_path, "pmem_commit", 8, a)
    run(tmp_path, "raw_topk", 8, b)
    row = evaluate(claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8})), tmp_path)
    assert row["verdict"] == "holds" and row["direction"] == "as claimed"
    assert row["n"] == 20 and row["test"].startswith("McNemar")
    assert row["effect"] == pytest.approx(70.0)
    assert row["p"] == pytest.approx(stats.mcnemar_exact(a, b).p_value)
    assert row["ci_low"] <= 70.0 <= row["ci_high"]


def test_the_opposite_direction_does_not_hold(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 18 + [False] * 2)
    run(tmp_path, "raw_topk", 8, [True] * 4 + [False] * 16)
    lower = claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8}), "<")
    row = evaluate(lower, tmp_path)
    assert row["verdict"] == "does not hold" and row["direction"] == "opposite"


def test_the_right_direction_without_significance_does_not_hold(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 11 + [False] * 9)
    run(tmp_path, "raw_topk", 8, [True] * 10 + [False] * 10)
    row = evaluate(claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8})), tmp_path)
    assert row["direction"] == "as claimed" and row["p"] > 0.05
    assert row["verdict"] == "does not hold"


def test_different_questions_are_compared_unpaired(tmp_path: Path) -> None:
    a, b = [True] * 19 + [False], [True] * 5 + [False] * 15
    run(tmp_path, "raw_topk", 1, a, prefix="one")
    run(tmp_path, "raw_topk", 8, b, prefix="eight")
    row = evaluate(claim(Side("raw_topk", {"L": 1}), Side("raw_topk", {"L": 8})), tmp_path)
    assert row["test"].startswith("Fisher") and row["n"] == "20 / 20"
    assert row["p"] == pytest.approx(stats.fisher_exact(a, b))
    assert row["verdict"] == "holds"


def test_a_side_without_runs_is_not_run_and_names_its_command(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 20)
    row = evaluate(claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8})), tmp_path)
    assert row["verdict"] == "not run" and row["command"] == "make reproduce-table6"
    assert evaluate(claim(Side("a"), Side("b")), tmp_path / "nothing")["verdict"] == "not run"


def test_the_written_table_counts_the_verdicts(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 18 + [False] * 2)
    run(tmp_path, "raw_topk", 8, [True] * 4 + [False] * 16)
    held = claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8}))
    missing = claim(Side("pmem_commit", {"L": 1}), Side("raw_topk", {"L": 1}))
    md = claims.write(tmp_path, tmp_path / "results", [held, missing])
    assert "1 hold, 0 do not hold, 1 not run, of 2 claims" in md
    csv = (tmp_path / "results" / "tables" / "claims.csv").read_text().splitlines()
    assert csv[0].split(",")[:4] == ["claim", "section", "statement", "arms"]
    assert claims.check(tmp_path, tmp_path / "results", [held, missing])[0]
    (tmp_path / "results" / "tables" / "claims.md").write_text(md.replace("1 hold", "2 hold"))
    assert not claims.check(tmp_path, tmp_path / "results", [held, missing])[0]


def test_a_claim_of_no_difference_holds_only_inside_its_margin(tmp_path: Path) -> None:
    same = [True] * 10 + [False] * 10
    run(tmp_path, "pmem_commit", 1, same)
    run(tmp_path, "raw_topk", 1, same)
    sides = (Side("pmem_commit", {"L": 1}), Side("raw_topk", {"L": 1}))
    row = evaluate(claim(*sides, "=", margin=5.0), tmp_path)
    assert row["verdict"] == "holds" and row["direction"] == "within ±5"
    with pytest.raises(ValueError, match="needs its margin"):
        claim(*sides, "=")
    with pytest.raises(ValueError, match="direction"):
        claim(*sides, ">=")


def test_a_measurement_is_compared_by_the_sign_test(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 1, [True] * 12)
    run(tmp_path, "raw_topk", 1, [True] * 12)
    chars = claim(
        Side("pmem_commit", {"L": 1}),
        Side("raw_topk", {"L": 1}),
        "<",
        outcome=lambda q: q["run"].str.startswith("raw").map({True: 600, False: 30}),
    )
    row = evaluate(chars, tmp_path)
    assert row["unit"] == "value" and row["test"].startswith("sign test")
    assert (row["a_value"], row["b_value"], row["effect"]) == (30.0, 600.0, -570.0)
    assert row["p"] == pytest.approx(2 * 0.5**12) and row["verdict"] == "holds"


def test_numpy_outcomes_count_like_python_ones(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 20)
    run(tmp_path, "raw_topk", 8, [False] * 20)
    as_numpy = claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8}),
                     outcome=lambda q: q["location.correct"].astype("bool"))  # fmt: skip
    row = evaluate(as_numpy, tmp_path)
    assert row["verdict"] == "holds" and row["unit"] == "%" and row["n"] == 20


def test_a_smaller_run_of_the_same_questions_is_paired_on_them(tmp_path: Path) -> None:
    run(tmp_path, "pmem_commit", 8, [True] * 20)
    run(tmp_path, "raw_topk", 8, [False] * 8)  # its first 8 questions
    row = evaluate(claim(Side("pmem_commit", {"L": 8}), Side("raw_topk", {"L": 8})), tmp_path)
    assert row["test"].startswith("McNemar") and row["n"] == 8
    assert row["p"] == pytest.approx(2 * 0.5**8)
