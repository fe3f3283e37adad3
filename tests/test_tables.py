"""Tables are built from run folders alone: ours with intervals beside the paper's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.alfworld_revision.tables import store_names
from benchmarks.reports.frame import collect
from benchmarks.reports.registry import builders
from benchmarks.reports.tables import main
from benchmarks.results.loader import arm_key
from tests.bench import fake_run
from tests.peer_runs import table_row

TABLES = builders()


def test_table6_reports_ours_beside_the_paper_and_drops_superseded_runs(tmp_path, capsys) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", arm="pmem_commit", L=1, cases=20, correct=20)
    fake_run(runs, "b", arm="pmem_commit", L=2, cases=20, correct=10)  # superseded by c
    fake_run(runs, "c", arm="pmem_commit", L=2, cases=20, correct=19, started="2026-01-02T00:00:00")
    fake_run(runs, "d", arm="raw_topk", L=2, cases=20, correct=15)
    df = collect(runs, "table6")
    assert sorted(df["run"]) == ["a", "c", "d"]
    assert "table6/b is superseded" in capsys.readouterr().err
    md = TABLES["table6"](df, runs, tmp_path / "out")
    assert "| P-Mem commit | 100.0 [50–100] / 100.0 | 95.0 [50–100] / 100.0 |" in md.replace(
        "  ", ""
    )
    assert "75.0 [50–100] / 72.9" in md  # raw top-10 at L=2 beside the paper's 72.9
    assert (tmp_path / "out" / "figures" / "table6.png").stat().st_size > 0


def test_the_command_writes_markdown_and_csv(tmp_path) -> None:
    runs = tmp_path / "runs"
    fake_run(runs, "a", arm="raw_topk", L=1, cases=20, correct=20)
    assert main(["table6", "--runs", str(runs), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "tables" / "table6.md").read_text().startswith("# Table 6")
    assert "raw_topk" in (tmp_path / "out" / "tables" / "table6.csv").read_text()


def test_a_rebuild_never_silently_drops_a_committed_row(tmp_path, capsys) -> None:
    """Committed rows whose runs are elsewhere (never exported, or another sweep) survive a
    rebuild from fewer runs: nothing is written and the lost rows are named; --replace writes."""
    import shutil

    runs, out = tmp_path / "runs", tmp_path / "out"
    fake_run(runs, "a", arm="raw_topk", L=1, cases=20, correct=20)
    fake_run(runs, "b", arm="pmem_commit", L=1, cases=20, correct=19)
    fake_run(runs, "c", arm="pmem_commit", L=2, cases=20, correct=18)
    assert main(["table6", "--runs", str(runs), "--out", str(out)]) == 0
    committed = (out / "tables" / "table6.md").read_text()
    capsys.readouterr()

    shutil.rmtree(runs / "table6" / "b")
    shutil.rmtree(runs / "table6" / "c")
    fake_run(runs, "a2", arm="raw_topk", L=1, cases=20, correct=19, started="2026-01-02T00:00:00")
    assert main(["table6", "--runs", str(runs), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "2 row(s)" in err and "arm=pmem_commit" in err and "L=1" in err and "L=2" in err
    assert "--replace" in err and "Traceback" not in err
    assert (out / "tables" / "table6.md").read_text() == committed  # left as it was

    assert main(["all", "--runs", str(runs), "--out", str(out)]) == 0  # make tables: said, kept
    assert "left as it is" in capsys.readouterr().err
    assert (out / "tables" / "table6.md").read_text() == committed

    assert main(["table6", "--runs", str(runs), "--out", str(out), "--replace"]) == 0
    assert "pmem_commit" not in (out / "tables" / "table6.csv").read_text()

    fake_run(runs, "b2", arm="pmem_commit", L=1, cases=20, correct=20)  # a row comes back
    assert main(["table6", "--runs", str(runs), "--out", str(out)]) == 0  # adding needs no flag

    # a smoke run of fewer cases in a committed cell would weaken it: refused too
    shutil.rmtree(runs / "table6" / "b2")
    fake_run(runs, "b3", arm="pmem_commit", L=1, cases=5, correct=5)
    capsys.readouterr()
    assert main(["table6", "--runs", str(runs), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "arm=pmem_commit" in err and "L=1" in err and "(n 20 -> 5)" in err


def test_runs_made_here_join_the_committed_ones_of_their_profile(tmp_path, capsys) -> None:
    """`--with results/runs`: a peer run made on a machine that holds none of the table's other
    runs adds its row to the committed table instead of being refused; a run made here wins
    over its exported copy, and another profile's runs stay out."""
    committed, here, out = tmp_path / "results_runs", tmp_path / "runs", tmp_path / "out"
    fake_run(committed, "commit", arm="pmem_commit", L=1, cases=20, correct=19)
    fake_run(committed, "raw", arm="raw_topk", L=1, cases=20, correct=10)
    fake_run(committed, "cluster", arm="raw_tags", L=1, cases=20, correct=20, model="big")
    assert main(["table6", "--runs", str(committed), "--out", str(out)]) == 0
    assert "raw_tags" not in (out / "tables" / "table6.csv").read_text()  # another profile

    fake_run(here, "peer", arm="raw_recon", L=1, cases=20, correct=11)
    fake_run(here, "raw", arm="raw_topk", L=1, cases=20, correct=12)  # resumed here: wins
    capsys.readouterr()
    assert main(["table6", "--runs", str(here), "--out", str(out)]) == 2  # alone: loses rows
    assert "--with results/runs" in capsys.readouterr().err
    assert main(["table6", "--runs", str(here), "--with", str(committed), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"1 run(s) of {committed / 'table6'} join those of {here / 'table6'}" in err
    assert "1 of another profile left out" in err
    md = (out / "tables" / "table6.md").read_text()
    assert "Built from 3 run(s)" in md
    assert table_row(md, "raw_recon")["L=1"].startswith("55.0")
    assert table_row(md, "raw_topk")["L=1"].startswith("60.0")  # here's 12 of 20, not 10
    assert table_row(md, "pmem_commit")["L=1"].startswith("95.0")
    assert "raw_tags" not in md
    # the pool is a scratch folder of links: neither root gains or loses a folder
    assert sorted(p.name for p in (here / "table6").iterdir()) == ["peer", "raw"]
    assert sorted(p.name for p in (committed / "table6").iterdir()) == ["cluster", "commit", "raw"]

    with pytest.raises(SystemExit):  # --check compares with one root: the committed one
        main(["table6", "--check", "--runs", str(here), "--with", str(committed)])


def test_a_runs_row_carries_its_writer() -> None:
    arm = {"name": "pmem_materialized_full"}
    assert arm_key({"arm": arm, "writer": None}) == "pmem_materialized_full"
    assert arm_key({"arm": arm}) == "pmem_materialized_full"
    paper_35b = {"model": "Qwen/Qwen3.6-35B-A3B-FP8"}
    assert arm_key({"arm": arm, "writer": paper_35b}) == "pmem_materialized_full_35b"
    other = {"model": "qwen2.5-coder-1.5b-instruct"}
    assert (
        arm_key({"arm": arm, "writer": other})
        == "pmem_materialized_full@qwen2.5-coder-1.5b-instruct"
    )


# -- Table 8 and the conflict probe: the peers' store introspection ----------------------------


def fact(text: str, valid: bool, *former: str) -> dict:
    return {"text": text, "valid": valid, "former": list(former)}


def store(*facts: dict) -> dict:
    return {"store": "graphiti", "subject": "mug", "facts": list(facts)}


def fake_probe_run(root: Path, experiment: str, name: str, arm: str, questions: list) -> None:
    """A finished Table 8 / conflict run folder: one prediction and score line per question,
    each question `(id, golds, meta, context_meta, scores)`."""
    folder = root / experiment / name
    folder.mkdir(parents=True)
    bench = {"name": f"alfrev-{experiment}", "probe": experiment, "cases": len(questions) // 2}
    if experiment == "table8":
        bench["d"] = 0
    config = {"arm": {"name": arm}, "benchmark": bench, "llm": {"model": "m"}, "embedder": {}}
    manifest = {"config": config, "started_at": "2026-01-01T00:00:00"}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    summary = {"n": len(questions), "expected": len(questions), "complete": True, "scores": {}}
    summary["read"] = {"mean_chars": 50.0, "mean_tokens": 12.0, "tokens_exact": True}
    (folder / "summary.json").write_text(json.dumps(summary))
    preds, scores = [], []
    for qid, golds, meta, context_meta, score in questions:
        preds.append({"id": qid, "golds": golds, "meta": meta, "context_meta": context_meta})
        scores.append({"id": qid, **score})
    (folder / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))


def test_table8_reads_v1_in_store_from_the_peers_own_store(tmp_path) -> None:
    runs = tmp_path / "runs"
    meta = {"object": "mug", "gold_final": "desk 1"}
    v1, v2, other = "mug was in desk 1.", "mug has been moved to shelf 1.", "mug is in drawer 10."
    graphiti = [  # case a commits the error, then answers it; case b never commits it
        ("a-pre", ["shelf 1"], meta, {"introspection": store(fact(v1, False), fact(v2, True))},
         {"committed": {"correct": True}, "recovered": {}}),
        ("a", ["desk 1"], meta, {"introspection": store(fact(v1, False), fact(v2, False))},
         {"committed": {}, "recovered": {"correct": False, "outcome": "stale"}}),
        ("b-pre", ["shelf 1"], meta, {"introspection": store(fact(v1, True))},
         {"committed": {"correct": False}, "recovered": {}}),
        ("b", ["desk 1"], meta, {"introspection": store(fact(v1, True), fact(other, True))},
         {"committed": {}, "recovered": {"correct": True, "outcome": "correct"}}),
    ]  # fmt: skip
    fake_probe_run(runs, "table8", "g", "graphiti", graphiti)
    audit = {"events_seen": 3, "events_reached_cell": 3, "question_reached_cell": 1}
    commit = [
        ("a-pre", ["shelf 1"], meta, {**audit, "events_seen": 2, "events_reached_cell": 1},
         {"committed": {"correct": True}, "recovered": {}}),
        ("a", ["desk 1"], meta, {**audit, "retained_values": ["desk 1", "shelf 1"]},
         {"committed": {}, "recovered": {"correct": True, "outcome": "correct"}}),
        # b: v1 never reached the cell, so the retraction empties it (a writer error); c: the
        # cell holds v1 and the reader names another place (a reader error)
        ("b-pre", ["shelf 1"], meta, {**audit, "events_seen": 2, "events_reached_cell": 2},
         {"committed": {"correct": True}, "recovered": {}}),
        ("b", ["desk 1"], meta, {**audit, "cell_value": "", "retained_values": ["shelf 1"]},
         {"committed": {}, "recovered": {"correct": False, "outcome": "other"}}),
        ("c-pre", ["shelf 1"], meta, {**audit, "events_seen": 2, "events_reached_cell": 2},
         {"committed": {"correct": True}, "recovered": {}}),
        ("c", ["desk 1"], meta, {**audit, "cell_value": "desk 1", "retained_values": ["desk 1"]},
         {"committed": {}, "recovered": {"correct": False, "outcome": "stale"}}),
    ]  # fmt: skip
    fake_probe_run(runs, "table8", "p", "pmem_commit", commit)
    markdown = TABLES["table8"](collect(runs, "table8"), runs, tmp_path / "out")
    row = table_row(markdown, "graphiti")
    assert row["committed"] == "1/2" and row["committed (paper)"] == "96.4"
    assert row["wrong = v2"] == "100.0 (n=1)" and row["wrong (paper)"] == "–"  # paper: d=32
    assert row["recovered (paper)"] == "0.0" and row["v1 in store (paper)"] == "100.0"
    assert row["v1 in store"] == "100.0 (n=2)"  # invalidated in a, current in b
    assert row["v1 valid"] == "50.0 (n=2)" and row["v2 valid before"] == "50.0 (n=2)"
    pmem = table_row(markdown, "pmem_commit")
    assert pmem["committed"] == "3/3" and pmem["recovered (ours)"] == "33.3 (n=3)"
    assert pmem["v1 in store"] == "66.7 (n=3)" and pmem["v1 valid"] == "–"  # no store list
    assert "Rows with no paper figure" not in markdown  # both rows are the paper's
    # the commit arm's routing audit, over both episodes of each case, and its final-question
    # misses split by where they arose (a "-pre" question is not the recovered scorer's: no
    # miss); a peer keeps no cells
    routing = markdown.split("Commit routing and misses (")[1]
    row = table_row(routing, "pmem_commit")
    assert row["d"] == "0" and row["events to their cell"] == "93.3% of 15"
    assert row["questions to their cell"] == "100.0%"
    assert (row["misses"], row["writer errors"], row["reader errors"]) == ("2", "1", "1")
    assert "graphiti" not in routing


def test_the_conflict_table_reports_both_reports_valid_beside_the_papers_graphiti(
    tmp_path,
) -> None:
    runs = tmp_path / "runs"
    meta = {"object": "mug", "candidates": ["desk 1", "shelf 1"], "gold_final": "desk 1"}
    a, b = "mug is in desk 1.", "mug is in shelf 1."
    flagged = {"correct": False, "matches_final_gold": True, "store_contested": None}
    questions = [
        ("a-pre", meta["candidates"], meta, {"introspection": store(fact(a, True), fact(b, True))},
         {"flagged": flagged, "settled": {}}),
        ("a", ["desk 1"], meta, {}, {"flagged": {}, "settled": {"correct": True}}),
        ("b-pre", meta["candidates"], meta, {"introspection": store(fact(a, False), fact(b, True))},
         {"flagged": {**flagged, "matches_final_gold": False}, "settled": {}}),
        ("b", ["desk 1"], meta, {}, {"flagged": {}, "settled": {"correct": False}}),
    ]  # fmt: skip
    fake_probe_run(runs, "conflict", "g", "graphiti", questions)
    fake_probe_run(runs, "conflict", "m", "mem0", questions)
    markdown = TABLES["conflict"](collect(runs, "conflict"), runs, tmp_path / "out")
    row = table_row(markdown, "graphiti")
    assert row["both reports valid"] == "50.0 (n=2)" and row["both reports valid (paper)"] == "10.7"
    assert row["pre matches eventual gold"] == "50.0 (n=2)"
    assert row["pre matches eventual gold (paper)"] == "50.0"
    assert row["settled after (paper)"] == "39.3" and row["flagged before (paper)"] == "–"
    assert table_row(markdown, "mem0")["both reports valid (paper)"] == "–"
    assert "Rows with no paper figure (mem0) are ours" in markdown


def test_a_store_names_a_location_as_a_whole_name_and_reads_history() -> None:
    facts = store(fact("mug is in drawer 10.", True), fact("mug is in shelf 1.", False, "x"))
    assert store_names(facts, "drawer 1") is False  # "drawer 10" is another place
    assert store_names(facts, "drawer 10", valid_only=True) is True
    assert store_names(facts, "shelf 1") is True and not store_names(
        facts, "shelf 1", valid_only=True
    )
    mem0 = store(fact("mug is in shelf 1.", False, "mug was in desk 1."))  # UPDATE's old text
    assert (
        store_names(mem0, "desk 1") is True
        and store_names(mem0, "desk 1", valid_only=True) is False
    )
    assert store_names(None, "desk 1") is None  # an arm that lists no store


def test_a_store_places_the_object_only_where_a_fact_about_it_says_so() -> None:
    # the 1.5B writer's Graphiti hangs facts about other objects on the subject's edges
    towel = store(fact("Earlier observation: towel was in towelholder 1.", True))
    towel["subject"] = "candle"
    assert store_names(towel, "towelholder 1") is False
    assert store_names(towel, "towelholder 1", valid_only=True) is False
    # a move's origin is where the object was, not where it is
    moved = store(fact("Alex moved the mug from diningtable 2 to tvstand 1.", True))
    assert store_names(moved, "diningtable 2") is True  # the store holds v1 ...
    assert store_names(moved, "diningtable 2", valid_only=True) is False  # ... not as current
    assert store_names(moved, "tvstand 1", valid_only=True) is True
    unscoped = {"store": "graphiti", "subject": None, "facts": towel["facts"]}
    assert store_names(unscoped, "towelholder 1") is True  # no subject: the location alone


LOCATIONS = st.sampled_from(["desk 1", "desk 10", "shelf 1", "drawer 2"])
FACTS = st.lists(
    st.builds(
        lambda loc, valid, old: fact(
            f"mug is in {loc}.", valid, *([f"mug was in {old}."] if old else [])
        ),
        LOCATIONS,
        st.booleans(),
        st.one_of(st.none(), LOCATIONS),
    ),
    max_size=5,
)


@given(FACTS, LOCATIONS)
def test_a_value_valid_in_the_store_is_in_the_store(facts: list, value: str) -> None:
    listed = store(*facts)
    if store_names(listed, value, valid_only=True):
        assert store_names(listed, value)
    dropped = store(*(f for f in facts if not f["valid"]))  # the current facts removed
    assert store_names(dropped, value, valid_only=True) is False


@given(FACTS, LOCATIONS, st.sampled_from(["candle", "cup"]))
def test_facts_about_another_object_never_place_the_subject(
    facts: list, value: str, subject: str
) -> None:
    listed = {**store(*facts), "subject": subject}  # every fact names the mug
    assert store_names(listed, value) is False


def _commit_run(root: Path, name: str, arm: dict, reads: list[dict]) -> None:
    """A finished Table 6 commit run (L=2) whose questions read the cells given."""
    folder = root / "table6" / name
    folder.mkdir(parents=True)
    config = {
        "arm": arm,
        "benchmark": {"name": "alfrev-L2", "L": 2, "cases": len(reads)},
        "llm": {"model": "m", "revision": "r1"},
        "embedder": {"model": "e"},
    }
    (folder / "manifest.json").write_text(
        json.dumps({"config": config, "started_at": "2026-01-01T00:00:00"})
    )
    preds, scores, metas = [], [], []
    for i, r in enumerate(reads):
        meta = {
            "events_seen": 3,
            "events_routed": 3,
            "events_reached_cell": r["reached"],
            "question_reached_cell": int(r["reached"] == 3),
            "cell_value": r["cell"],
        }
        metas.append(meta)
        preds.append({"id": f"q{i}", "golds": ["desk 1"], "prediction": r["answer"],
                      "context_meta": meta})  # fmt: skip
        scores.append({"id": f"q{i}", "location": {"correct": r["answer"] == "desk 1"}})
    correct = sum(s["location"]["correct"] for s in scores)
    mean = {
        k: sum(m[k] for m in metas) / len(metas) for k in ("events_seen", "events_reached_cell")
    }
    summary = {
        "n": len(reads), "expected": len(reads), "complete": True,
        "scores": {"location": {"accuracy": correct / len(reads), "correct": correct,
                                "n": len(reads), "ci95": [0.0, 1.0]}},
        "read": {"mean_chars": 30.0, "mean_tokens": 8.0, "tokens_exact": True, "meta": mean},
    }  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "predictions.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))


def test_table6_reports_routing_and_splits_commit_misses(tmp_path) -> None:
    runs = tmp_path / "runs"
    commit = "baselines.pmem_arms.commit.PatchCommitArm"
    _commit_run(runs, "a", {"name": "pmem_commit", "_target_": commit, "routing": "identity"}, [
        {"cell": "desk 1", "answer": "desk 1", "reached": 3},
        {"cell": "desk 1", "answer": "desk", "reached": 3},  # the cell was right: a reader error
        {"cell": "shelf 2", "answer": "shelf 2", "reached": 1},  # a fork: a writer error
    ])  # fmt: skip
    # a commit run from before routing by the model's key: the oracle-routing row
    _commit_run(runs, "b", {"name": "pmem_commit", "_target_": commit}, [
        {"cell": "desk 1", "answer": "desk 1", "reached": 3},
    ])  # fmt: skip
    df = collect(runs, "table6")
    assert set(df["arm"]) == {"pmem_commit", "pmem_commit_label_routed"}
    md = TABLES["table6"](df, runs, tmp_path / "out")
    rows = {
        tuple(c.strip() for c in line.strip("|").split("|"))[:2]: [
            c.strip() for c in line.strip("|").split("|")
        ]
        for line in md.split("Commit routing and misses")[1].splitlines()
        if line.startswith("| P-Mem")
    }
    assert rows[("P-Mem commit", "2")][2:] == ["77.8% of 9", "66.7%", "2", "1", "1"]
    routed = rows[("P-Mem commit (oracle routing)", "2")]
    assert routed[2:] == ["100.0% of 3", "100.0%", "0", "0", "0"]


# -- Table 7: a peer's ingest stopped mid-stream (issue 15.4) ---------------------------------


def _table7_manifest(folder: Path, arm: str, model: str = "m", source: str = "sh_6k") -> None:
    folder.mkdir(parents=True)
    bench = {"name": f"factconsolidation_{source}", "source": source, "limit": 50}
    config = {"arm": {"name": arm}, "benchmark": bench, "llm": {"model": model}, "embedder": {}}
    manifest = {"config": config, "started_at": "2026-01-01T00:00:00"}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _stopped_ingest(folder: Path, units: list[dict]) -> None:
    snapshot = folder / "snapshots" / "factconsolidation_sh_6k"
    snapshot.mkdir(parents=True, exist_ok=True)
    paid = sum(u["paid"] for u in units)
    record = {"units_done": len(units), "units_total": 27, "wall_s": sum(u["s"] for u in units),
              "usage": {"writer": {"calls": paid}}, "units": units}  # fmt: skip
    (snapshot / "ingest_progress.json").write_text(json.dumps(record))


def test_table7_shows_a_stopped_ingest_as_a_labelled_partial_row(tmp_path) -> None:
    from benchmarks.results import export_runs, load_partial, loader
    from benchmarks.runner import pipeline

    # the loader reads what the runner writes (it may not import the runner: docs/architecture)
    assert loader.INGEST_PROGRESS == pipeline.INGEST_PROGRESS_FILE
    assert loader.SNAPSHOT_DONE == pipeline.SNAPSHOT_DONE

    runs = tmp_path / "runs"
    finished = runs / "table7_peers" / "raw"
    _table7_manifest(finished, "raw_facts")
    score = {"accuracy": 0.5, "ci95": [0.3, 0.7], "n": 50, "correct": 25}
    summary = {"n": 50, "expected": 50, "complete": True, "scores": {"substring": score},
               "read": {"mean_chars": 10.0, "mean_tokens": 3.0}}  # fmt: skip
    (finished / "summary.json").write_text(json.dumps(summary))
    # the first unit replayed from the cache after an earlier stop, two paid since
    units = [{"s": 0.5, "paid": 0, "cached": 18}, {"s": 250.0, "paid": 18, "cached": 0},
             {"s": 270.0, "paid": 20, "cached": 0}]  # fmt: skip
    _table7_manifest(runs / "table7_peers" / "g", "graphiti")
    _stopped_ingest(runs / "table7_peers" / "g", units)
    # a scripted dry run's stopped ingest never enters a paper table
    dry = runs / "table7_peers" / "dry"
    _table7_manifest(dry, "memoryos")
    manifest = json.loads((dry / "manifest.json").read_text())
    manifest["config"]["llm"]["server"] = {"_target_": "benchmarks.models.scripted.ScriptedServer"}
    (dry / "manifest.json").write_text(json.dumps(manifest))
    _stopped_ingest(dry, units)

    # another peer finished its ingest and is answering: 2 of its 50 questions so far
    answering = runs / "table7_peers" / "m"
    _table7_manifest(answering, "mem0")
    snapshot = answering / "snapshots" / "factconsolidation_sh_6k"
    snapshot.mkdir(parents=True)
    (snapshot / ".complete").touch()
    cost = {"wall_s": 2689.0, "usage": {"writer": {"calls": 695, "cache_hits": 3,
            "prompt_tokens": 150000, "completion_tokens": 535}}}  # fmt: skip
    (snapshot / "ingest.json").write_text(json.dumps(cost))
    (answering / "predictions.jsonl").write_text('{"id": "q1"}\n{"id": "q2"}\n')
    # its multi-hop run replays the same stream: the finished ingest's cost is the ingest cell
    _table7_manifest(runs / "table7_peers" / "m2", "mem0", source="mh_6k")
    _stopped_ingest(runs / "table7_peers" / "m2", units[:1])

    partial = load_partial(runs, "table7_peers")
    assert sorted(partial["arm"]) == ["graphiti", "mem0", "mem0", "memoryos"]
    stages = dict(zip(partial["run"], partial["stage"], strict=True))
    assert stages == {"g": "ingest", "m": "answer", "m2": "ingest", "dry": "ingest"}

    def built(root: Path) -> str:
        return TABLES["table7_peers"](collect(root, "table7_peers"), root, tmp_path / "out")

    markdown = built(runs)
    row = table_row(markdown, "graphiti")
    assert row["sh_6k acc"] == "partial: ingest 3/27 / 15"  # the paper's Graphiti figure beside
    assert row["ingest 6k"] == "partial: 3/27 units, 19 calls and 260 s per paid unit (median of 2)"
    assert "- `graphiti` on sh_6k: 3 of 27 units ingested; the rest is about 1.7 h more" in markdown
    assert "memoryos" not in markdown
    mem0 = table_row(markdown, "mem0")
    assert mem0["sh_6k acc"] == "partial: 2 of 50 answered, not yet scored / 36"
    assert mem0["ingest 6k"] == "695 (3) calls, 150,535 tok, 2,689 s"
    assert "- `mem0` on sh_6k: ingest finished; 2 of 50 questions answered" in markdown
    # each partial row names the command that lands in its folder: its source and its limit
    # (the Makefile's LIMIT defaults to 100, another config)
    resume = "`make reproduce-table7-peers TABLE7_PEERS=mem0 SOURCES=sh_6k LIMIT=50`"
    assert f"2 of 50 questions answered; {resume}" in markdown
    assert "TABLE7_PEERS=graphiti SOURCES=sh_6k LIMIT=50`" in markdown
    assert mem0["mh_6k acc"] == "partial: ingest 1/27 / 5"
    assert markdown.startswith("# Table 7, the peer systems' rows")
    assert table_row(markdown, "raw_facts")["sh_6k acc"].startswith("50 [30–70] (50)")

    # the export keeps what the table needs of the stopped run, and the table rebuilds the same
    export_runs(runs, tmp_path / "export", "table7_peers")
    kept = tmp_path / "export/table7_peers/g/snapshots/factconsolidation_sh_6k"
    assert (kept / "ingest_progress.json").exists()
    assert not (tmp_path / "export/table7_peers/dry").exists()
    assert built(tmp_path / "export") == markdown
    # the partial rows are rows of the table on disk: a rebuild from the same runs keeps them
    out = tmp_path / "cmd"
    assert main(["table7_peers", "--runs", str(runs), "--out", str(out)]) == 0
    assert main(["table7_peers", "--runs", str(runs), "--out", str(out)]) == 0

    # once a run finishes the cell, its row replaces the partial one
    (runs / "table7_peers" / "g" / "summary.json").write_text(json.dumps(summary))
    (answering / "summary.json").write_text(json.dumps(summary))
    (runs / "table7_peers" / "m2" / "summary.json").write_text(json.dumps(summary))
    assert "partial" not in built(runs)


def test_a_table_of_runs_none_finished_yet_is_its_partial_rows(tmp_path) -> None:
    """The peers' table before any peer has finished: `make tables` still writes it, every row
    labelled partial, the runs named as incomplete; a table of another kind is left alone."""
    from benchmarks.reports.tables import build

    runs = tmp_path / "runs"
    _table7_manifest(runs / "table7_peers" / "g", "graphiti")
    _stopped_ingest(runs / "table7_peers" / "g", [{"s": 250.0, "paid": 18, "cached": 0}])
    markdown = build("table7_peers", runs, tmp_path / "out")
    assert table_row(markdown, "graphiti")["sh_6k acc"] == "partial: ingest 1/27 / 15"
    assert "**Incomplete runs:** g" in markdown
    assert (tmp_path / "out/tables/table7_peers.md").read_text() == markdown + "\n"
    assert not (tmp_path / "out/figures/table7_peers.png").exists()  # no scores, no figure
    # the csv is portable: no folder of this machine in it (the data file goes by its name)
    header = (tmp_path / "out/tables/table7_peers.csv").read_text().splitlines()[0].split(",")
    assert "arm" in header and "folder" not in header and "path" not in header
    # a second peer finishes: the table now has a scored row, and keeps the partial one
    _table7_manifest(runs / "table7_peers" / "m", "memoryos")
    score = {"accuracy": 0.36, "ci95": [0.24, 0.5], "n": 50, "correct": 18}
    summary = {"n": 50, "expected": 50, "complete": True, "scores": {"substring": score},
               "read": {"mean_chars": 10.0, "mean_tokens": 3.0}}  # fmt: skip
    (runs / "table7_peers" / "m" / "summary.json").write_text(json.dumps(summary))
    markdown = build("table7_peers", runs, tmp_path / "out")  # not refused: no row is lost
    assert table_row(markdown, "memoryos")["sh_6k acc"].startswith("36 [24–50] (50)")
    assert table_row(markdown, "graphiti")["sh_6k acc"] == "partial: ingest 1/27 / 15"
