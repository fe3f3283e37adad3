"""Where a wrong answer was lost: ALFWorld-Revision's stage rule on attempts built by hand (one
per stage), on generated attempts (a right answer has no stage, a wrong one exactly one), and on
the committed runs (every wrong answer carries the stage the rule gives; `show --stage`)."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.alfworld_revision.stages import failure_stage, needed_events
from benchmarks.factconsolidation.stages import failure_stage as fc_stage
from benchmarks.longmemeval.stages import failure_stage as lme_stage
from benchmarks.reports import failures as report
from benchmarks.reports.frame import collect, stage_section
from benchmarks.results import load_runs
from benchmarks.results.__main__ import main as results_main
from benchmarks.results.loader import frontiers
from benchmarks.runner.failures import FAILURE_STAGES, Attempt, attribute, stage_counts
from benchmarks.scoring import hand_verdicts

ROOT = Path(__file__).resolve().parents[1]
CHAIN = ["c-e00", "c-e03", "c-e07"]  # the record, then two updates: now in "drawer 2"
META = {
    "probe": "chains",
    "phase": "final",
    "expect": "value",
    "object": "mug",
    "target_event_ids": CHAIN,
    "target_locations": ["shelf 1", "desk 1", "drawer 2"],
}


def location(outcome: str) -> dict[str, Any]:
    return {"location": {"correct": outcome == "correct", "stale": outcome == "stale",
                         "outcome": outcome}}  # fmt: skip


def cell(value: str | None, reached: int = 3, routed: int = 3, home: int = 1) -> dict[str, Any]:
    return {"cell_value": value, "cell_status": "active" if value else "empty",
            "events_routed": routed, "events_reached_cell": reached,
            "question_reached_cell": home}  # fmt: skip


def attempt(answer: str, outcome: str, **fields: Any) -> Attempt:
    return Attempt(id="c", question="where is the mug now?", golds=("drawer 2",),
                   prediction=answer, question_meta=fields.pop("meta", META),
                   scores=location(outcome), **fields)  # fmt: skip


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (attempt("drawer 2", "correct", read_meta=cell("drawer 2")), None),
        (attempt("desk 1", "stale", read_meta=cell("desk 1")), "write"),
        (attempt("nothing", "other", read_meta=cell(None)), "write"),
        (attempt("desk 1", "stale", read_meta=cell("desk 1", reached=2)), "route"),
        (attempt("nowhere", "other", read_meta=cell(None, home=0)), "route"),
        (attempt("desk 1", "stale", read_meta=cell("drawer 2")), "stale"),
        (attempt("drawer", "other", read_meta=cell("drawer 2")), "reader"),
        (attempt("desk 1", "stale", read_ids=("c-e00", "c-e03")), "retrieval"),
        (attempt("desk 1", "stale", read_ids=tuple(CHAIN)), "stale"),
        (attempt("drawer 2 or desk 1", "hedged", read_ids=tuple(CHAIN)), "reader"),
        (attempt("desk 1", "stale"), "unattributed"),  # no sample log: no read to look at
        (attempt("desk 1", "stale", read_text="The mug is in desk 1.",
                 read_meta={"introspection": {"facts": [{"text": "The mug is in desk 1.",
                                                         "valid": True}]}}), "write"),
        (attempt("desk 1", "stale", read_text="The mug is in desk 1.",
                 read_meta={"introspection": {"facts": [{"text": "Mug: drawer 2",
                                                         "valid": True}]}}), "retrieval"),
    ],
)  # fmt: skip
def test_each_stage_is_reached_by_its_case(case: Attempt, expected: str | None) -> None:
    found = failure_stage(case)
    assert (found and found[0]) == expected, found


def test_a_conflict_the_store_did_not_hold_open_is_a_write_failure() -> None:
    meta = {**META, "expect": "conflict", "candidates": ["desk 1", "drawer 2"]}
    flagged = {"flagged": {"correct": False, "one_sided": True}}
    committed = Attempt(
        "c-pre", "q", ("desk 1", "drawer 2"), "desk 1", meta,
        "[mug.location] desk 1", ("mug.location",), cell("desk 1"), flagged,
    )  # fmt: skip
    assert failure_stage(committed) == (
        "write",
        "every event reached the cell, which holds 'desk 1', not desk 1 or drawer 2",
    )
    held = {**cell("desk 1"), "cell_status": "contested"}
    shown = "[mug.location] desk 1 (contested: drawer 2)"
    read_both = Attempt("c-pre", "q", ("desk 1", "drawer 2"), "desk 1", meta, shown,
                        ("mug.location",), held, flagged)  # fmt: skip
    assert failure_stage(read_both)[0] == "reader"  # type: ignore[index]


def test_the_events_an_answer_needs_follow_the_probe() -> None:
    assert needed_events(META) == ["c-e07"]
    retraction = {**META, "probe": "retraction"}
    assert needed_events(retraction) == CHAIN
    assert needed_events({**retraction, "phase": "pre_retraction"}) == ["c-e03"]
    assert needed_events({**META, "expect": "conflict"}) == CHAIN[:2]


outcomes = st.sampled_from(["correct", "hedged", "stale", "distractor", "other"])
reads = st.one_of(
    st.builds(cell, st.sampled_from([None, "drawer 2", "desk 1", "shelf 1"]),
              st.integers(0, 3), st.just(3), st.integers(0, 1)),
    st.fixed_dictionaries({"introspection": st.fixed_dictionaries(
        {"facts": st.lists(st.fixed_dictionaries(
            {"text": st.sampled_from(["mug: drawer 2", "mug: desk 1"]), "valid": st.booleans()}),
            max_size=3)})}),
    st.just({}),
)  # fmt: skip


@given(outcomes, reads, st.none() | st.lists(st.sampled_from(CHAIN), unique=True).map(tuple))
def test_a_right_answer_has_no_stage_and_a_wrong_one_exactly_one(
    outcome: str, read: dict[str, Any], ids: tuple[str, ...] | None
) -> None:
    case = attempt("x", outcome, read_meta=read, read_ids=ids, read_text="mug: drawer 2")
    found = failure_stage(case)
    assert (found is None) == (outcome == "correct")
    if found is not None:
        assert found[0] in FAILURE_STAGES and found[1]
    counts = stage_counts(attribute(failure_stage, [case]), 1)
    assert counts["wrong"] == sum(counts["by_stage"].values()) == int(found is not None)


def test_every_wrong_answer_of_the_committed_runs_carries_its_stage() -> None:
    ok, why = report.check(ROOT / "results/runs", ROOT / "results")
    assert ok, why
    df = load_runs(ROOT / "results/runs", "table6")
    wrong = df[~df["location.correct"].astype(bool)]
    assert len(wrong) and wrong["stage"].isin(FAILURE_STAGES).all()
    assert df[df["location.correct"].astype(bool)]["stage"].isna().all()


def test_each_table_and_the_figure_show_the_stages(tmp_path: Path) -> None:
    df = collect(ROOT / "results/runs", "table6")
    stages = df[[f"stage.{s}" for s in FAILURE_STAGES]]
    assert (stages.sum(axis=1) == df["stage.wrong"]).all() and df["stage.wrong"].sum() > 0
    section = stage_section(df)
    assert section and section in (ROOT / "results/tables/table6.md").read_text()
    assert section.count("\n| ") == len(df) + 1  # a row per run under the header
    # the breakdown's figure is checked like its table: a redrawn byte is caught
    shutil.copytree(ROOT / "results" / report.TABLE, tmp_path / report.TABLE)
    png = tmp_path / report.TABLE / f"{report.TABLE}.png"
    png.write_bytes(png.read_bytes()[:-1] + b"\0")
    ok, why = report.check(ROOT / "results/runs", tmp_path)
    assert not ok and f"{report.TABLE}.png" in why


def test_show_lists_the_cases_of_one_stage(capsys: pytest.CaptureFixture[str]) -> None:
    run = next((ROOT / "results/runs/table6").glob("raw_topk__alfrev-L8__*"))
    assert results_main(["show", str(run), "--stage", "stale", "--chars", "80"]) == 0
    out = capsys.readouterr().out
    shown = out.count("  stage:    stale: ")
    assert shown == out.count("\n── ") + out.startswith("── ") and shown >= 10
    assert results_main(["show", str(run), "--stage", "write"]) == 0
    assert "stage:" not in capsys.readouterr().out


def fc(answer: str, correct: bool, **fields: Any) -> Attempt:
    meta = {"hop": "single", "key": ["goaltender", "sport"], "current": "pesäpallo",
            "superseded": ["ice hockey"], "stale_scoreable": True}  # fmt: skip
    scores = {"substring": {"correct": correct}, "stale": {"stale": fields.pop("stale", False)}}
    return Attempt("q", "Which sport is goaltender associated with?", ("pesäpallo",), answer,
                   meta, scores=scores, **fields)  # fmt: skip


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (fc("pesäpallo", True, read_text="x"), None),
        (fc("ice hockey", False, read_text="goaltender: pesäpallo",
            memory=(("goaltender_sport", "ice hockey"), ("pesapallo_club", "pesäpallo"))),
         "write"),  # the gold sits only under another subject's key
        (fc("ice hockey", False, read_text="goaltender: ice hockey",
            memory=(("goaltender_sport", "pesäpallo"),)), "retrieval"),
        (fc("ice hockey", False, stale=True, read_text="goaltender: pesäpallo, ice hockey",
            memory=(("goaltender_sport", "pesäpallo"),)), "stale"),
        (fc("football", False, read_text="The goaltender plays pesäpallo."), "reader"),
        (fc("football", False), "unattributed"),
    ],
)  # fmt: skip
def test_factconsolidation_stages_follow_the_gold_state(
    case: Attempt, expected: str | None
) -> None:
    found = fc_stage(case)
    assert (found and found[0]) == expected, found


def test_an_oracle_writer_never_loses_an_answer_at_write() -> None:
    """The template-oracle writer stores every gold fact: a write stage there would be the
    rule's error, not the writer's."""
    df = load_runs(ROOT / "results/runs", "table7")
    oracle = df[df["arm"].str.startswith("pmem_state_oracle")]
    assert len(oracle) and oracle["stage"].notna().any()
    assert not (oracle["stage"] == "write").any()
    assert (df[df["arm"] == "pmem_state"]["stage"] == "write").any()


def test_the_runner_attributes_a_state_run_with_its_store(tmp_path: Path) -> None:
    """After scoring, the runner writes stages.jsonl and summary.json's counts, and a state
    arm's rule sees the store's current cells (its snapshot's frontier, by episode)."""
    root = tmp_path / "runs"
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.runner", "experiment=table7",
         "arm=pmem_state_oracle", "run.limit=3", f"run.root={root}", "llm=scripted",
         "embedder=scripted", "run.progress=false"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    (folder,) = (root / "table7").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    counts = summary["failure_stages"]
    correct = summary["scores"]["substring"]["correct"]
    assert counts["answered"] == 3 and counts["wrong"] == 3 - correct
    assert counts["wrong"] == sum(counts["by_stage"].values())
    lines = (folder / "stages.jsonl").read_text().splitlines()
    assert len(lines) == counts["wrong"]
    episodes = {json.loads(p)["episode"] for p in (folder / "predictions.jsonl").open()}
    memories = frontiers(folder)
    assert episodes <= set(memories) and all(memories[e] for e in episodes)


def _wrong_by_hand() -> tuple[str, str]:
    """(question id, answer) of an answer read by hand as wrong."""
    with hand_verdicts.LONGMEMEVAL_LOCAL.open(newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["verdict"] == "wrong")
    return row["question_id"], row["answer"]


HAND = _wrong_by_hand()


def lme(answer: str, correct: bool, read: str | None, **fields: Any) -> Attempt:
    evidence = [{"content": "I moved to Lisbon last spring and love the tram rides.",
                 "role": "user", "session_id": "answer_1", "turn_index": 0}]  # fmt: skip
    meta = {"question_id": fields.pop("qid", "q1"),
            "question_type": fields.pop("kind", "knowledge-update"),
            "evidence": evidence, "abstention": fields.pop("abstention", False)}  # fmt: skip
    judge = {"judge": {"correct": correct, "template": "knowledge-update", "reply": "no"}}
    return Attempt("q1", "Where do I live?", ("Lisbon",), answer, meta, read_text=read,
                   scores=judge, **fields)  # fmt: skip


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (lme("Lisbon", True, "user: I moved to Lisbon last spring"), None),
        (lme(HAND[1], True, "x", qid=HAND[0]), "judge"),  # credited; wrong by hand
        (lme("Porto", False, "user: I moved to Lisbon last spring and love the tram rides."),
         "reader"),
        (lme("Porto", False, "[2023/05/01 (Mon) 10:00] user: I like trains."), "retrieval"),
        (lme("Porto", False, ""), "retrieval"),
        (lme("Porto", False, "", read_meta={"memories": 0}), "write"),
        (lme("Porto", False, "Tracked state:\nhome_city: Porto"), "unattributed"),
        # a facts arm: the gold in the read, in no cell of the whole store, in a cell not read
        (lme("Porto", False, "Tracked state:\nhome_city: Lisbon"), "reader"),
        (lme("Porto", False, "home_city: Porto", read_ids=("home_city",),
             read_meta={"cells": 1}), "write"),
        (lme("Porto", False, "tram: 28", memory=(("tram", "28"), ("home", "Lisbon"))),
         "retrieval"),
        (lme("Porto", False, "tram: 28", memory=(("tram", "28"), ("home", "Porto"))), "write"),
        (lme("Porto", False, "tram: 28", memory=(("tram", "28"),), kind="multi-session"),
         "unattributed"),  # a derived answer: no one fact to trace
        (lme("Porto", False, "user: hi", abstention=True), "reader"),
        (lme("Porto", False, None), "unattributed"),
    ],
)  # fmt: skip
def test_longmemeval_stages_follow_the_evidence_and_the_hand_verdicts(
    case: Attempt, expected: str | None
) -> None:
    found = lme_stage(case)
    assert (found and found[0]) == expected, found
