"""The judge audit: planted answers a judge must accept (the gold) or reject (another question's
gold), its false-accept and false-reject rates with intervals in every judged run; a lenient
judge is caught, a strict one too; Cohen's kappa for two judges."""

from __future__ import annotations

import asyncio
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import stats
from benchmarks.longmemeval.audit import SAMPLE, judge_agreement, kappa, plants, rates
from benchmarks.longmemeval.audit_runs import audit_runs
from benchmarks.models.scripted import ScriptedServer
from benchmarks.reports.frame import judge_audit_line

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "benchmarks/data/longmemeval/fixture.json"


def bench_judged(tmp_path: Path, server: ScriptedServer) -> Path:
    """A LongMemEval run on the four fixture questions, every model the scripted server's; its
    run folder."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner.cli", "experiment=table3",
         "arm=no_memory", "benchmark.types=null", f"benchmark.path={FIXTURE}",
         f"run.root={tmp_path / 'runs'}", "run.progress=false", "llm=openai",
         "llm.model=scripted", f"llm.base_url={server.base_url}", "embedder=scripted",
         "judge=vllm", "judge.model=scripted-judge", f"judge.base_url={server.base_url}"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return Path(out.stdout.split("run folder: ")[1].split()[0])


def judged_run(tmp_path: Path, reply: str) -> dict[str, Any]:
    """The audit of a run whose judge always says `reply`."""
    with ScriptedServer(default=reply, models=["scripted", "scripted-judge"]) as s:
        folder = bench_judged(tmp_path, s)
    cases = [json.loads(line) for line in (folder / "judge_audit.jsonl").open()]
    return {"audit": json.loads((folder / "summary.json").read_text())["judge_audit"],
            "cases": cases}  # fmt: skip


def test_a_judge_that_accepts_everything_is_caught(tmp_path: Path) -> None:
    run = judged_run(tmp_path, "yes")
    accept = run["audit"]["false_accept"]
    assert accept["errors"] == accept["n"] == 4 and accept["rate"] == 1.0
    assert accept["ci95"][0] > 0.5  # the interval says so too, with four questions
    assert run["audit"]["false_reject"]["errors"] == 0
    assert run["audit"]["questions"] == 4 and run["audit"]["judge"] == "scripted-judge"
    kinds = {(c["kind"], c["should_accept"], c["accepted"]) for c in run["cases"]}
    assert kinds == {("gold", True, True), ("other", False, True)}


def test_a_judge_that_rejects_everything_is_caught(tmp_path: Path) -> None:
    run = judged_run(tmp_path, "no")
    assert run["audit"]["false_reject"]["rate"] == 1.0
    assert run["audit"]["false_accept"]["rate"] == 0.0


def records(n: int, types: int = 2) -> list[dict[str, Any]]:
    return [
        {"id": f"q{i:03d}", "question": f"question {i}?", "golds": [f"gold {i}"],
         "prediction": "x", "meta": {"question_type": f"type{i % types}"}}
        for i in range(n)
    ]  # fmt: skip


def test_the_planted_answers_are_seeded_and_follow_the_type() -> None:
    found = plants(records(10))
    assert found == plants(records(10))  # the same questions, the same cases
    gold = [p for p in found if p.kind == "gold"]
    other = [p for p in found if p.kind == "other"]
    assert len(gold) == len(other) == 10
    assert all(p.record["prediction"] == p.record["golds"][0] for p in gold)
    for p in other:  # another question's gold, of the same type
        source = int(p.record["prediction"].split()[1])
        assert source != int(p.question_id[1:]) and source % 2 == int(p.question_id[1:]) % 2
    many = plants(records(SAMPLE * 3))
    assert len({p.question_id for p in many}) == SAMPLE


def test_rates_count_the_errors_of_each_kind() -> None:
    found = plants(records(6))
    verdicts = [(p, True) for p in found]  # accepts everything
    out = rates(verdicts)
    assert out["false_accept"]["errors"] == out["false_accept"]["n"] == 6
    assert out["false_reject"]["errors"] == 0
    assert rates([])["false_accept"] is None


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_kappa_is_one_for_agreement_and_bounded(pairs: list[tuple[bool, bool]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    k = kappa(a, b)
    assert k is None or -1.0 <= k <= 1.0
    if len(set(a)) == 2:
        assert kappa(a, a) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        kappa(a, [*b, True])


def audit_of(errors: int, n: int) -> dict[str, Any]:
    found = rates([(p, True) for p in plants(records(n))])
    accept = {"errors": errors, "n": n, "rate": errors / n}
    accept["ci95"] = list(stats.binomial_ci(errors, n))
    return {"judge": "j", "questions": n, "seed": 0, "false_accept": accept,
            "false_reject": found["false_reject"]}  # fmt: skip


def test_two_judges_are_compared_on_the_answers_they_share() -> None:
    ids, keys = ["q1", "q2", "q3"], ["paris", "two", "blue"]
    q = pd.DataFrame({
        "judge": ["a"] * 3 + ["b"] * 3, "file": ["f.json"] * 6, "id": ids * 2,
        "key": keys + keys[:2] + ["green"],  # b judged other words on q3: not shared
        "correct": [True, False, True, True, True, False],
        "by_hand": [True, False, None, None, None, None],
    })  # fmt: skip
    note = judge_agreement(q)
    assert "the same 2 answers (`a`, `b`)" in note and "disagree on q2." in note
    # a judge in step with the hand verdicts: κ 1; one that credits all: undefined
    assert "hand verdicts: 1.00 over 2 answers" in note
    assert "undefined" in judge_agreement(q.assign(correct=True, by_hand=True))
    assert judge_agreement(q[q["judge"] == "a"].assign(by_hand=None)) == ""


def test_a_table_caption_flags_a_judge_that_accepts_wrong_answers() -> None:
    judged = "model@x, embedder e, judge model@x"
    lenient = pd.DataFrame({"profile": [judged], "judge_audit": [audit_of(8, 20)]})
    line = judge_audit_line(lenient)
    assert "false accepts 8 of 20 (40% [" in line and "may accept wrong answers" in line
    strict = pd.DataFrame({"profile": [judged], "judge_audit": [audit_of(0, 200)]})
    assert "false accepts 0 of 200" in judge_audit_line(strict)
    assert "may accept" not in judge_audit_line(strict)  # [0, 1.9%]: inside the bound
    unaudited = pd.DataFrame({"profile": [judged]})
    assert "not recorded for these runs" in judge_audit_line(unaudited)
    assert judge_audit_line(pd.DataFrame({"profile": ["model@x, embedder e"]})) == ""


def test_an_exported_run_gets_the_audit_its_judge_would_have_recorded(tmp_path: Path) -> None:
    """A run recorded without an audit is audited by its own judge, from the manifest: the same
    cases and rates the runner records, written where the runner writes them."""
    with ScriptedServer(default="yes", models=["scripted", "scripted-judge"]) as s:
        exported = bench_judged(tmp_path, s)  # read as an export is read
        recorded = json.loads((exported / "summary.json").read_text())
        (exported / "judge_audit.jsonl").unlink()
        stripped = {k: v for k, v in recorded.items() if k != "judge_audit"}
        (exported / "summary.json").write_text(json.dumps(stripped, indent=2) + "\n")
        lines = asyncio.run(audit_runs(exported.parent, tmp_path / "audit-cache.sqlite"))
    assert len(lines) == 1 and "4 questions" in lines[0]
    again = json.loads((exported / "summary.json").read_text())
    assert again["judge_audit"] == recorded["judge_audit"]
    assert list(again) == list(recorded)  # where the runner puts it
    cases = gzip.decompress((exported / "judge_audit.jsonl.gz").read_bytes()).splitlines()
    assert len(cases) == 8
