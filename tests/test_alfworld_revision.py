"""ALFWorld-Revision generator (paper §4.2, Appendices B.2-B.3): chain properties, determinism,
game harvesting, the retraction and conflict probes, the single-revision variant, the CLI.

The chain-property tests run on the scene-inventory source (`source="scenes"`, any case index);
the default valid_seen source (the paper's 140 games) has its own tests in
tests/test_alfworld_valid_seen.py and is the default the CLI and probe tests here exercise."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import alfworld_revision as ar
from benchmarks.runner.types import Episode

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ar.SAMPLE_GAME_DIR
FAST = settings(max_examples=40, deadline=None)

seeds = st.integers(min_value=0, max_value=2**32)
lengths = st.sampled_from(ar.SUPPORTED_L)
indices = st.integers(min_value=0, max_value=400)


def mentions(text: str, location: str) -> bool:
    """Whole-name match: "cabinet 1" is not mentioned by "cabinet 10"."""
    return re.search(rf"(?<![\w]){re.escape(location)}(?![\w])", text) is not None


def chains_of(case: ar.Case) -> dict[int, list[dict]]:
    chains: dict[int, list[dict]] = defaultdict(list)
    for e in case.events:
        chains[e["chain"]].append(e)
    return chains


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "benchmarks.alfworld_revision", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)


# ---------------------------------------------------------------------------------------------
# B.2 chains: properties
# ---------------------------------------------------------------------------------------------


@FAST
@given(L=lengths, k=indices, seed=seeds)
def test_every_chain_has_L_moves_over_distinct_locations(L: int, k: int, seed: int) -> None:
    case = ar.chain_case(L, k, seed=seed, source="scenes")
    chains = chains_of(case)
    assert sorted(chains) == list(range(1 + ar.DEFAULT_DISTRACTORS))
    assert len({events[0]["object"] for events in chains.values()}) == len(chains)
    assert len(case.events) == (1 + ar.DEFAULT_DISTRACTORS) * (L + 1)  # 5 stale + 5L updates
    inv = ar.scene_inventories()[case.scene]
    types = dict(inv.objects)
    for events in chains.values():
        stale, moves = events[0], events[1:]
        obj = stale["object"]
        assert stale["kind"] == "stale_record" and len(moves) == L
        assert stale["text"] == f"Earlier observation: {obj} was in {stale['to']}."
        path = [stale["to"]]
        for step, move in enumerate(moves, start=1):
            assert move["kind"] == "update" and move["step"] == step
            assert move["from"] == path[-1]  # each move starts where the last one ended
            assert (
                move["text"] == f"Update: {obj} has been moved from {move['from']} to {move['to']}."
            )
            path.append(move["to"])
        assert len(set(path)) == L + 1
        allowed = set(inv.admissible(types[obj]))  # VAL_RECEPTACLE_OBJECTS holds
        assert set(path) <= allowed


@FAST
@given(L=lengths, k=indices, seed=seeds)
def test_merge_keeps_chain_order_and_gold_is_last_target_location(
    L: int, k: int, seed: int
) -> None:
    case = ar.chain_case(L, k, seed=seed, source="scenes")
    assert [e["arrival"] for e in case.events] == list(range(len(case.events)))
    assert len({e["id"] for e in case.events}) == len(case.events)
    for events in chains_of(case).values():
        assert [e["step"] for e in events] == list(range(L + 1))  # arrival order = chain order
    target = chains_of(case)[0]
    assert case.gold == target[-1]["to"]
    assert case.target_event_ids == [e["id"] for e in target]
    assert case.intermediate_locations == [e["to"] for e in target[:-1]]
    assert not set(case.distractor_locations) & {e["to"] for e in target}
    assert case.question == f"where is the {case.object} now?"
    assert case.key == f"{case.object}.location"
    assert case.record == {
        "object": case.object,
        "key": case.key,
        "location": target[0]["to"],
        "location_rule": "alfworld-admissible",
        "scene": case.scene,
    }
    assert case.record_source == "alfworld-scene-inventories"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(), max_size=9), max_size=6), seeds)
def test_merge_queues_is_an_order_preserving_interleaving(
    queues: list[list[int]], seed: int
) -> None:
    merged = ar.merge_queues(random.Random(seed), queues)
    assert len(merged) == sum(map(len, queues))
    for i, queue in enumerate(queues):
        assert [item for j, item in merged if j == i] == queue


@FAST
@given(L=lengths, seed=seeds, other=seeds)
def test_same_seed_same_cases_different_seed_different_cases(L: int, seed: int, other: int) -> None:
    first = ar.generate(L, cases=3, seed=seed)
    assert first == ar.generate(L, cases=3, seed=seed)
    assert ar.dumps(first) == ar.dumps(ar.generate(L, cases=3, seed=seed))
    if other != seed:
        assert ar.dumps(first) != ar.dumps(ar.generate(L, cases=3, seed=other))


def test_case_k_does_not_depend_on_the_number_of_cases() -> None:
    assert ar.generate(4, cases=6)[5] == ar.generate(4, cases=9)[5] == ar.chain_case(4, 5)


@pytest.mark.parametrize(
    "probe",
    [
        lambda n: ar.retraction_probe(0, cases=n),
        lambda n: ar.retraction_probe(32, cases=n),
        lambda n: ar.conflict_probe(cases=n),
    ],
    ids=["retraction-d0", "retraction-d32", "conflict"],
)
def test_a_smaller_probe_run_is_the_start_of_a_larger_one(probe) -> None:
    # what lets a peer's hours-long probe be committed in stages: `benchmark.cases=6` is the
    # first 6 cases of `benchmark.cases=20`, so the larger run answers those from the cache
    assert probe(3) == probe(7)[:3]


def test_scene_casts_pair_across_L() -> None:
    """Case k uses the same scene, objects and starting records at every L."""
    casts = {
        L: [
            (c.scene, c.object, c.record["location"])
            for c in ar.generate(L, cases=8, source="scenes")
        ]
        for L in ar.SUPPORTED_L
    }
    assert casts[1] == casts[2] == casts[4] == casts[8]


def test_default_sweep_size_and_ids() -> None:
    cases = ar.generate(8)
    assert len(cases) == ar.DEFAULT_CASES == 140
    assert [c.id for c in cases] == [f"alfrev-L8-{k:03d}" for k in range(140)]
    assert all(c.seed == 42 for c in cases)


@pytest.mark.parametrize("bad", [0, 3, 16, -1, "8", 8.0, True])
def test_unsupported_L_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match=r"L=.*not supported.*1, 2, 4, 8"):
        ar.generate(bad)  # type: ignore[arg-type]


def test_case_json_round_trip() -> None:
    case = ar.chain_case(2, 7)
    row = json.loads(ar.dumps([case]))
    assert ar.Case.from_json(row) == case


# ---------------------------------------------------------------------------------------------
# Real ALFWorld games
# ---------------------------------------------------------------------------------------------


def test_harvest_sample_game_reads_the_inreceptacle_facts() -> None:
    text = (SAMPLE / "initial_state.pddl").read_text()
    init = text[text.index("(:init") : text.index("(:goal")]
    game = ar.harvest_game(SAMPLE)
    assert len(game.facts) == init.count("(inReceptacle ") == 44
    assert game.floor_plan == "FloorPlan14"
    assert game.task_object == "potato"
    by_ids = {(f["object_id"], f["receptacle_id"]): f for f in game.facts}
    tomato = (
        "Tomato_bar__plus_00_dot_51_bar__plus_00_dot_96_bar__plus_00_dot_84",
        "CounterTop_bar__plus_00_dot_99_bar__plus_00_dot_95_bar__plus_01_dot_02",
    )
    lettuce = (
        "Lettuce_bar__minus_00_dot_79_bar__plus_00_dot_85_bar__minus_01_dot_59",
        "Fridge_bar__minus_00_dot_53_bar__plus_00_dot_00_bar__minus_01_dot_55",
    )
    sponge = (
        "DishSponge_bar__plus_01_dot_10_bar__plus_00_dot_76_bar__minus_01_dot_71",
        "Sink_bar__plus_01_dot_10_bar__plus_00_dot_91_bar__minus_01_dot_60_bar_SinkBasin",
    )
    bowl = (
        "Bowl_bar__plus_01_dot_81_bar__plus_02_dot_13_bar__plus_01_dot_16",
        "Cabinet_bar__plus_01_dot_66_bar__plus_02_dot_30_bar__plus_01_dot_31",
    )
    for ids in (tomato, lettuce, sponge, bowl):
        assert f"(inReceptacle {ids[0]} {ids[1]})" in init
    assert (by_ids[tomato]["object"], by_ids[tomato]["receptacle"]) == ("tomato", "countertop 1")
    assert (by_ids[lettuce]["object"], by_ids[lettuce]["receptacle"]) == ("lettuce", "fridge 1")
    assert by_ids[sponge]["receptacle"] == "sinkbasin 1"
    assert by_ids[sponge]["receptacle_type"] == "SinkBasin"
    # Eight cabinets; ALFWorld's Demangler numbers the last of the sorted ids 1.
    assert (by_ids[bowl]["object"], by_ids[bowl]["receptacle"]) == ("bowl", "cabinet 1")
    assert game.record == {"object": "potato", "key": "potato.location", "location": "countertop 2"}
    for f in game.facts:
        assert re.fullmatch(r"[a-z]+", f["object"])
        assert re.fullmatch(r"[a-z]+ \d+", f["instance"])
        assert re.fullmatch(r"[a-z]+ \d+", f["receptacle"])
    assert len(game.receptacles) == 20
    assert {n for n, _ in game.receptacles} >= {"cabinet 8", "stoveburner 4", "toaster 1"}


def test_alfworld_names_follow_the_demangler() -> None:
    ids = [
        "CounterTop_bar__plus_00_dot_99_bar__plus_00_dot_95_bar__plus_01_dot_02",
        "CounterTop_bar__plus_00_dot_99_bar__plus_00_dot_95_bar__minus_01_dot_52",
        "Sink_bar__plus_01_dot_10_bar__plus_00_dot_91_bar__minus_01_dot_60_bar_SinkBasin",
        "Sink_bar__plus_01_dot_10_bar__plus_00_dot_91_bar__minus_01_dot_60",
        "PotatoType",
    ]
    assert ar.alfworld_names(ids) == {
        ids[0]: "countertop 1",
        ids[1]: "countertop 2",  # "_minus_" sorts first and takes the highest number
        ids[2]: "sinkbasin 1",
        ids[3]: "sink 1",
    }
    assert ar.mangle("Cabinet|+00.68|-00.50|-02.20") == ids[0].replace(
        "CounterTop_bar__plus_00_dot_99_bar__plus_00_dot_95_bar__plus_01_dot_02",
        "Cabinet_bar__plus_00_dot_68_bar__minus_00_dot_50_bar__minus_02_dot_20",
    )


def test_harvest_falls_back_to_game_tw_pddl(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "game.tw-pddl", tmp_path / "game.tw-pddl")
    game = ar.harvest_game(tmp_path)
    assert game.facts == ar.harvest_game(SAMPLE).facts
    assert game.task_object is None and game.floor_plan is None  # no traj_data.json
    first = ar.facts_by_instance(game.facts)[0]  # the first object by name
    assert first == ("apple 1", "countertop 2", "Apple")
    assert game.record == {"object": "apple", "key": "apple.location", "location": "countertop 2"}


def test_game_folder_without_the_files_names_the_path(tmp_path: Path) -> None:
    shutil.copy(SAMPLE / "traj_data.json", tmp_path / "traj_data.json")
    with pytest.raises(ar.AlfworldDataError) as err:
        ar.harvest_game(tmp_path)
    assert str(tmp_path) in str(err.value)
    assert "initial_state.pddl or game.tw-pddl" in str(err.value)
    with pytest.raises(ar.AlfworldDataError, match=re.escape(str(tmp_path))):
        ar.generate(1, cases=1, games_dir=tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ar.AlfworldDataError, match=re.escape(str(empty)) + ".*no ALFWorld game"):
        ar.find_games(empty)
    with pytest.raises(ar.AlfworldDataError, match="not a folder"):
        ar.find_games(tmp_path / "missing")


def test_games_follow_alfworlds_selection(tmp_path: Path) -> None:
    split = tmp_path / "valid_seen"
    kept = split / "pick_heat_then_place_in_recep-Potato-None-SinkBasin-14" / "t1"
    movable = split / "pick_and_place_with_movable_recep-Ladle-Pan-SinkBasin-1" / "t2"
    sliced = split / "pick_and_place_simple-AppleSliced-None-Fridge-1" / "t3"
    unsolvable = split / "pick_and_place_simple-Potato-None-Fridge-14" / "t4"
    for folder in (kept, movable, sliced, unsolvable):
        shutil.copytree(SAMPLE, folder)
    tw = json.loads((unsolvable / "game.tw-pddl").read_text())
    (unsolvable / "game.tw-pddl").write_text(json.dumps({**tw, "solvable": False}))
    assert ar.find_games(split) == [kept]
    shutil.rmtree(kept)
    with pytest.raises(ar.AlfworldDataError, match="all 3 game folders were skipped"):
        ar.find_games(split)


def test_generate_from_the_sample_game() -> None:
    cases = ar.generate(2, cases=3, games_dir=SAMPLE)
    assert {c.record_source for c in cases} == {f"alfworld-games:{SAMPLE}"}
    for case in cases:
        assert case.object == "potato"  # the task object, where the game puts it
        assert case.record["location"] == "countertop 2"
        assert case.record["game"] == "sample_train_game"
        assert case.record["floor_plan"] == "FloorPlan14"
        stale = chains_of(case)[0][0]
        assert stale["text"] == "Earlier observation: potato was in countertop 2."
    long = ar.generate(8, cases=2, games_dir=SAMPLE)
    assert all(len(chains_of(c)[0]) == 9 for c in long)


# ---------------------------------------------------------------------------------------------
# B.3 retraction and §4.2.3 conflict
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", ar.SUPPORTED_D)
def test_retraction_probe(d: int) -> None:
    cases = ar.retraction_probe(d, cases=12)
    for case in cases:
        v1, v2 = case.gold, case.pre_gold
        assert v1 != v2 and case.d == d and case.id.startswith(f"alfrev-retract-d{d}-")
        stale = [e for e in case.events if mentions(e["text"], v1)]
        assert [e["kind"] for e in stale] == ["stale_record"] and stale[0]["chain"] == 0
        assert not mentions(case.question, v1)
        kinds = [e["kind"] for e in case.events if e["chain"] == 0]
        assert kinds == ["stale_record", "erroneous_update", "retraction"]
        error = next(e for e in case.events if e["kind"] == "erroneous_update")
        retraction = next(e for e in case.events if e["kind"] == "retraction")
        between = case.events[error["arrival"] + 1 : retraction["arrival"]]
        assert len(between) == d and all(e["chain"] != 0 for e in between)
        assert retraction["text"] == (
            f"Correction: the report that {case.object} was moved to {v2} was an error."
        )
        assert retraction["refers_to"] == error["id"] and error["to"] == v2
        assert retraction["arrival"] == len(case.events) - 1 == case.pre_query_index
        assert len(case.events) == 3 + ar.RETRACTION_DISTRACTOR_EVENTS
        assert case.target_event_ids == [stale[0]["id"], error["id"], retraction["id"]]
        for events in chains_of(case).values():
            assert [e["arrival"] for e in events] == sorted(e["arrival"] for e in events)


def test_retraction_distances_share_the_error_and_the_distractors() -> None:
    near, far = ar.retraction_probe(0, cases=5), ar.retraction_probe(32, cases=5)
    for a, b in zip(near, far, strict=True):
        assert (a.object, a.gold, a.pre_gold) == (b.object, b.gold, b.pre_gold)
        assert sorted(e["text"] for e in a.events) == sorted(e["text"] for e in b.events)


def test_conflict_probe_is_counterbalanced() -> None:
    cases = ar.conflict_probe(cases=20)
    for case in cases:
        first, second = (e for e in case.events if e["kind"] == "report")
        assert (first["arrival"], second["arrival"]) == (0, 1)
        assert case.candidates == [first["to"], second["to"]] and first["to"] != second["to"]
        # No recency or authority cue: both reports read the same but for the location.
        assert first["text"].replace(first["to"], "X") == second["text"].replace(second["to"], "X")
        assert (case.gold == first["to"]) == (case.index % 2 == 0)  # alternates by case
        settle = case.events[-1]
        assert settle["kind"] == "settle" and settle["to"] == case.gold in case.candidates
        assert settle["text"] == f"Check: {case.object} is in {case.gold}."
        assert case.pre_query_index == settle["arrival"] == 10
        assert [e["chain"] != 0 for e in case.events[2:10]] == [True] * 8
        assert case.intermediate_locations == [c for c in case.candidates if c != case.gold]
    assert sum(c.gold == c.candidates[-1] for c in cases) == len(cases) // 2


def test_probes_validate_their_parameters() -> None:
    with pytest.raises(ValueError, match=r"d=33"):
        ar.retraction_probe(33)
    with pytest.raises(ValueError, match=r"distractors=0"):
        ar.conflict_probe(distractors=0)


# ---------------------------------------------------------------------------------------------
# Single-revision variant
# ---------------------------------------------------------------------------------------------


def test_offline_rewrites_match_the_generator() -> None:
    rows = [json.loads(line) for line in ar.OFFLINE_REWRITES.read_text().splitlines()]
    cases = {c.id: c for c in ar.generate(1, cases=10)}
    assert [r["case_id"] for r in rows] == list(cases)
    for row in rows:
        case = cases[row["case_id"]]
        update = next(e for e in case.events if e["chain"] == 0 and e["kind"] == "update")
        assert row["original"] == update["text"] and row["to"] == case.gold
        assert (row["from"], row["object"]) == (update["from"], case.object)
        assert "hand-written" in row["source"]
        text = row["rewrite"]
        assert len(re.findall(rf"(?<!\w){re.escape(case.gold)}(?!\w)", text)) == 1
        assert mentions(text, row["intermediate"]) and row["intermediate"] != case.gold
        assert "has been moved from" not in text


def test_verifier_accepts_whole_names_only() -> None:
    assert ar.verifier_accepts("Drawer 1.", "drawer 1")
    assert ar.verifier_accepts("It is in  drawer 1 now", "drawer 1")
    assert not ar.verifier_accepts("drawer 10", "drawer 1")
    assert not ar.verifier_accepts("coffeetable 1", "drawer 1")


def test_single_revision_replaces_only_the_target_update() -> None:
    base = ar.generate(1, cases=12)
    rewrites = ar.load_rewrites()
    variant = ar.single_revision(base, rewrites)
    assert [c.id for c in variant] == [f"alfrev-single-{k:03d}" for k in range(10)]
    for case, original in zip(variant, base, strict=False):
        assert case.probe == "single_revision" and case.gold == original.gold
        changed = [
            (a["text"], b["text"])
            for a, b in zip(case.events, original.events, strict=True)
            if a["text"] != b["text"]
        ]
        assert changed == [(rewrites[original.id], changed[0][1])]
        assert [e["kind"] for e in case.events if e["chain"] == 0] == [
            "stale_record",
            "rewritten_update",
        ]
        assert all(i.startswith(case.id) for i in case.target_event_ids)
    with pytest.raises(ValueError, match="L=1"):
        ar.single_revision(ar.generate(2, cases=1), rewrites)


# ---------------------------------------------------------------------------------------------
# Harness form
# ---------------------------------------------------------------------------------------------


def test_to_episodes() -> None:
    cases = [
        *ar.generate(1, cases=3),
        *ar.generate(8, cases=3),
        *ar.retraction_probe(0, cases=3),
        *ar.retraction_probe(32, cases=3),
        *ar.conflict_probe(cases=3),
        *ar.single_revision(ar.generate(1, cases=3), ar.load_rewrites()),
    ]
    episodes = ar.to_episodes(cases)
    assert all(isinstance(e, Episode) for e in episodes)
    assert len(episodes) == len(cases) + 9  # a pre-query episode per retraction/conflict case
    questions = [q for e in episodes for q in e.questions]
    assert len({q.id for q in questions}) == len(questions)
    assert len({e.id for e in episodes}) == len(episodes)
    by_id = {e.id: e for e in episodes}
    for case in cases:
        episode = by_id[case.id]
        assert len({ev.id for ev in episode.events}) == len(episode.events)
        assert [ev.meta["arrival"] for ev in episode.events] == list(range(len(case.events)))
        assert all({"object", "kind"} <= set(ev.meta) for ev in episode.events)
        (question,) = episode.questions
        assert question.golds == (case.gold,) and question.text == case.question
        json.dumps(question.meta)  # predictions.jsonl stores it
    l8 = by_id["alfrev-L8-000"].questions[0]
    assert l8.id == "alfrev-L8-000" and l8.meta["L"] == 8
    pre = by_id["alfrev-retract-d32-002-pre"]
    assert pre.questions[0].golds == (cases[11].pre_gold,)
    assert pre.events[-1].meta["kind"] != "retraction" and len(pre.events) == 34
    conflict = by_id["alfrev-conflict-001-pre"].questions[0]
    assert conflict.meta["expect"] == "conflict" and len(conflict.golds) == 2


# ---------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------


def test_cli_output_is_byte_identical_and_matches_the_api(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        done = run_cli("--L", "8", "--seed", "42", "--cases", "20", "--out", str(out))
        assert done.returncode == 0, done.stderr
    assert a.read_bytes() == b.read_bytes()
    assert a.read_text(encoding="utf-8") == ar.dumps(ar.generate(8, cases=20, seed=42))
    lines = a.read_text().splitlines()
    assert len(lines) == 20
    row = json.loads(lines[0])
    assert list(row) == sorted(row) and row["record_source"] == "alfworld-valid_seen"


def test_cli_probes(tmp_path: Path) -> None:
    out = tmp_path / "x.jsonl"
    assert ar.main(["--probe", "retraction", "--d", "32", "--cases", "2", "--out", str(out)]) == 0
    assert [ar.Case.from_json(json.loads(x)).d for x in out.read_text().splitlines()] == [32, 32]
    assert ar.main(["--probe", "conflict", "--cases", "2", "--out", str(out)]) == 0
    assert ar.read_cases(out) == ar.conflict_probe(cases=2)
    assert ar.main(["--probe", "single", "--out", str(out)]) == 0
    assert len(ar.read_cases(out)) == 10
    assert ar.main(["--L", "2", "--cases", "1", "--games", str(SAMPLE), "--out", str(out)]) == 0
    assert ar.read_cases(out)[0].record_source == f"alfworld-games:{SAMPLE}"


def test_cli_rejects_unsupported_L_with_one_line() -> None:
    done = run_cli("--L", "3", "--out", "-")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "L=3" in done.stderr and "1, 2, 4, 8" in done.stderr
    assert done.stdout == ""


def test_cli_rejects_a_bad_games_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "traj_data.json").write_text("{}")
    expected = {
        tmp_path: "initial_state.pddl or game.tw-pddl",
        tmp_path / "nowhere": "not a folder",
    }
    for folder, message in expected.items():
        assert ar.main(["--L", "1", "--games", str(folder), "--out", "-"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(folder) in err and message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--probe", "retraction", "--d", "5"], "d=5"),
        (["--probe", "retraction"], "--d is required"),
        (["--probe", "conflict", "--L", "2"], "--L applies"),
        ([], "--L is required"),
        (["--L", "8", "--d", "0"], "--d applies"),
    ],
)
def test_cli_rejects_inconsistent_arguments(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ar.main([*args, "--out", "-"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_help() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    for word in ("--L", "--games", "--source", "valid_seen", "--probe", "--d", "record_source"):
        assert word in done.stdout
