"""The embedder calibration (benchmarks/calibration/thresholds.py, scripts/calibrate_embedder.py):
precision and recall per threshold on hand-made sets whose answers are known, the criteria, the
key alignment on real template lines, the two replays (keys, turns), and the script end to end
on the scripted embedder (its word-hash vectors, served by the harness's own scripted server)."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.calibration import thresholds as cal
from benchmarks.factconsolidation import TEMPLATES, parse_context
from benchmarks.longmemeval import calibration as lme_pairs
from benchmarks.runner.types import Event

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import calibrate_embedder  # noqa: E402

SHARED_LME = ROOT.parent / "shared" / "data" / "longmemeval" / "extra"  # beside the repo


def item(score: float, positive: bool, kind: str = "") -> cal.Scored:
    return cal.Scored(score, positive, kind or ("positive" if positive else "negative"))


# -- the sweep ---------------------------------------------------------------------------------

HAND = [item(0.95, True), item(0.90, True), item(0.85, False), item(0.80, True), item(0.60, False)]


def test_the_sweep_counts_each_threshold_by_hand() -> None:
    points = {p.threshold: p for p in cal.sweep(HAND)}
    assert len(points) == 50 and min(points) == 0.5 and max(points) == 0.99
    at = points[0.85]  # passes at >= 0.85, as the arms compare
    assert (at.tp, at.fp, at.fn, at.tn) == (2, 1, 1, 1)
    assert at.precision == pytest.approx(2 / 3) and at.recall == pytest.approx(2 / 3)
    assert at.passed == {"negative": 1, "positive": 2}
    assert (points[0.9].tp, points[0.9].fp) == (2, 0) and points[0.9].f1 == pytest.approx(0.8)
    low = points[0.5]
    assert (low.tp, low.fp, low.recall, low.precision) == (3, 2, 1.0, 0.6)
    nothing = points[0.99]
    assert nothing.tp + nothing.fp == 0 and nothing.precision is None and nothing.f1 is None


def test_a_larger_recall_denominator_counts_unreachable_positives_as_misses() -> None:
    (p,) = cal.sweep(HAND, thresholds=[0.5], positives=5)
    assert (p.tp, p.fn, p.recall) == (3, 2, 0.6)
    with pytest.raises(ValueError, match="fewer than the 3 positive"):
        cal.sweep(HAND, positives=2)


def test_each_criterion_picks_the_point_it_says() -> None:
    points = cal.sweep(HAND)
    best = cal.choose(points, cal.Criterion("max_f1"))
    # F1 is 0.857 on the whole of (0.80, 0.85] (3/3 recall, 3/4 precision): the higher end
    assert best is not None and best.threshold == 0.80 and best.f1 == pytest.approx(6 / 7)
    precise = cal.choose(points, cal.Criterion("max_recall_at_precision", 1.0))
    assert precise is not None and precise.threshold == 0.90  # 2/2 right, the most recall
    found = cal.choose(points, cal.Criterion("max_threshold_at_recall", 1.0))
    assert found is not None and found.threshold == 0.80  # the highest keeping all three
    assert (
        cal.choose(cal.sweep(HAND, positives=9), cal.Criterion("max_threshold_at_recall", 0.5))
        is None
    )


def test_a_criterion_without_its_floor_is_refused() -> None:
    with pytest.raises(ValueError, match="a floor is needed"):
        cal.Criterion("max_threshold_at_recall")
    with pytest.raises(ValueError, match="choose one of"):
        cal.Criterion("best")
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        cal.Criterion("max_recall_at_precision", 1.5)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-1, 1, allow_nan=False), st.booleans()), min_size=1, max_size=40)
)
def test_the_sweep_is_consistent_at_every_threshold(rows: list[tuple[float, bool]]) -> None:
    items = [item(s, p) for s, p in rows]
    n_pos = sum(p for _, p in rows)
    points = cal.sweep(items)
    for p in points:
        assert p.tp + p.fn == n_pos and p.fp + p.tn == len(rows) - n_pos
        assert sum(p.passed.values()) == p.tp + p.fp
        assert p.tp == sum(1 for s, pos in rows if pos and s >= p.threshold)
    passed = [p.tp + p.fp for p in points]
    assert passed == sorted(passed, reverse=True)  # a higher threshold never passes more


# -- keys: alignment, labels, the replay ------------------------------------------------------

CONTEXT = "\n".join(
    [
        "Here is a list of facts:",
        "0. Thomas Kyd was born in the city of London.",
        "1. Buddhism was founded by Gautama Buddha.",
        "2. The capital of Romania is Bucharest.",
        "3. The capital of France is Paris.",
    ]
)
VOCAB = {
    t.relation: cal.relation_vocabulary(t.relation, f"{t.prefix} {t.middle} {t.suffix}")
    for t in TEMPLATES
}


def test_extracted_keys_align_to_the_fact_they_name() -> None:
    facts = parse_context(CONTEXT)
    items = [
        ("thomas_kyd_born_in_the_city_of_london", "London"),  # subject + relation words
        ("a_snake_case_identifier_naming_the_subject_and_the_attribute", "Paris"),  # no subject
        ("religion_of_buddhism", "Buddhism"),  # Buddhism's fact here is founded_by: no relation
        ("france", "Paris"),  # the subject alone, and the value is the object
        ("the_capital_of_romania_is_rajanpur", "Rajanpur"),  # a value in the key still names it
    ]
    got = cal.align_extraction(items, facts, VOCAB)
    assert [(f.subject, f.relation) if f else None for f in got] == [
        ("Thomas Kyd", "place_of_birth"),
        None,
        None,
        ("France", "capital"),
        ("Romania", "capital"),
    ]
    assert "born" in VOCAB["place_of_birth"] and "the" not in VOCAB["capital"]


def test_keys_stating_two_gold_keys_are_ambiguous() -> None:
    order, labels, ambiguous = cal.label_keys(
        [("a", ("S", "r")), ("junk", ("S", "r")), ("b", None), ("junk", ("T", "r")), ("a", None)]
    )
    assert order == ["a", "junk", "b"]
    assert labels == {"a": ("S", "r")} and ambiguous == {"junk"}


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_key_replay_compares_each_key_with_its_nearest_earlier_one() -> None:
    vectors = {
        "capital_of_france": unit(1, 0, 0),
        "junk": unit(0, 0, 1),
        "capital_of_romania": unit(1, 0.3, 0),  # nearest: france (same relation: a negative)
        "france_capital": unit(1, 0.05, 0),  # nearest: france (same gold: a positive)
        "romania_capital_city": unit(0, 0.1, 1),  # nearest: junk (unlabelled: not scored)
    }
    labels = {
        "capital_of_france": ("France", "capital"),
        "capital_of_romania": ("Romania", "capital"),
        "france_capital": ("France", "capital"),
        "romania_capital_city": ("Romania", "capital"),
    }
    out = cal.nearest_key_decisions(list(vectors), labels, vectors)
    assert [(d.a, d.b, d.kind) for d in out.decisions] == [
        ("capital_of_romania", "capital_of_france", "same_relation"),
        ("france_capital", "capital_of_france", "positive"),
    ]
    assert (out.mergeable, out.unscored, out.first) == (1, 2, 1)
    pairs = cal.key_pairs(list(vectors), labels, vectors)
    assert len(pairs) == 6 and sum(p.positive for p in pairs) == 2


def test_the_local_check_is_scored_against_the_gold() -> None:
    labels = {"a": ("S", "r"), "b": ("S", "r"), "c": ("T", "r")}
    got = cal.check_confusion([("a", "b", True), ("a", "c", True), ("a", "x", False)], labels)
    assert got["same_said_same"] == 1 and got["different_said_same"] == 1
    assert got["unlabelled"] == 1 and got["same_said_different"] == 0


# -- turns -------------------------------------------------------------------------------------


def test_turn_pairs_are_the_retrieved_pairs_b1_would_ask_about() -> None:
    events = [
        Event("t0", "user: my 5k best is 27:12", at="2023-05-01T10:00:00"),
        Event("t1", "assistant: nice", at="2023-05-01T10:00:00"),
        Event("t2", "user: new 5k best 25:50", at="2023-05-09T10:00:00"),
        Event("t3", "user: soccer on Friday", at="2023-05-09T10:00:00"),
    ]
    vectors = np.stack([unit(1, 0.1), unit(0.2, 1), unit(1, 0.2), unit(0.5, 1)])
    question = unit(1, 0)
    pairs = cal.turn_pairs(events, vectors, question, {"t0", "t2"}, k=3)
    # top-3: t0, t2, t3 (t1 least similar); same-date pairs (t2, t3) are never asked
    got = {(p.a, p.b): (p.kind, p.retrieved) for p in pairs}
    assert got == {
        ("t0", "t2"): ("positive", True),
        ("t0", "t3"): ("one_update_turn", True),
    }
    far = cal.turn_pairs(events, vectors, unit(0, 1), {"t0", "t2"}, k=1)
    assert [(p.a, p.b, p.retrieved) for p in far] == [("t0", "t2", False)]  # kept, not retrieved
    with pytest.raises(ValueError, match="not in the haystack"):
        cal.turn_pairs(events, vectors, question, {"t9"})


@pytest.mark.skipif(not SHARED_LME.exists(), reason="needs the shared LongMemEval extras")
def test_the_hand_labelled_update_turns_say_what_they_quote() -> None:
    instances, skipped = lme_pairs.load_instances(
        [str(SHARED_LME / "longmemeval_partial_instances.json")]
    )
    by_id = {i.question_id: i for i in instances}
    for qid, labels in lme_pairs.HAND_UPDATES.items():
        assert len(lme_pairs.update_turns(by_id[qid])) == len(labels)
    assert skipped  # the abstention records' invalid type: left out, each with its line


# -- the script, end to end on the scripted embedder -------------------------------------------


def test_the_script_writes_the_table_with_the_scripted_embedder(tmp_path: Path) -> None:
    out = tmp_path / "calibration"
    code = calibrate_embedder.main(
        [
            "--embedder", "scripted",
            "--lme", str(ROOT / "benchmarks/data/longmemeval/fixture.json"),
            "--cache", str(tmp_path / "cache.sqlite"),
            "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    md = (out / "embedder_scripted.md").read_text()
    assert "## Chosen thresholds" in md and "| soft_identity |" in md
    assert "## Sweep: key_decisions" in md and "## Sweep: turn_pairs" in md
    with (out / "embedder_scripted.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {r["population"] for r in rows} == {"key_decisions", "key_pairs", "turn_pairs"}
    assert len(rows) == 3 * 50
    with (out / "embedder_scripted_pairs.csv").open() as f:
        pairs = list(csv.DictReader(f))
    # the committed run's real keys: hundreds of decisions; the fixture's one update pair
    assert sum(r["population"] == "key_decisions" for r in pairs) > 200
    assert any(r["population"] == "turn_pairs" and r["positive"] == "1" for r in pairs)


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = calibrate_embedder.main(["--embedder", "scripted", "--lme", str(tmp_path / "no.json")])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no.json: no such file" in err


def test_the_local_profile_holds_the_committed_tables_choice() -> None:
    """The thresholds in configs/embedder/local.yaml are the ones the committed calibration
    table chose, and the profile cites the table."""
    profile_file = ROOT / "configs" / "embedder" / "local.yaml"
    profile = yaml.safe_load(profile_file.read_text())["thresholds"]
    table = (ROOT / "results" / "calibration" / "embedder_local.md").read_text()
    chosen = {
        m[1]: float(m[2])
        for m in re.finditer(r"^\| (\w+) \|[^\n]*?\| \*\*([0-9.]+)\*\* \|", table, re.M)
    }
    assert chosen == profile
    assert "results/calibration/embedder_local.md" in profile_file.read_text()
