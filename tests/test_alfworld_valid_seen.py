"""ALFWorld-Revision on the paper's 140 valid_seen games (B.2), the generator's default source:
the shipped records, one case per game, real initial placements, the game's own receptacles
(the split's vocabulary only where a game has too few), byte-identical CLI output."""

from __future__ import annotations

import collections
import gzip
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import alfworld_revision as ar

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ar.VALID_SEEN_RECORDS
GAMES = {row["game"]: row for row in ar.valid_seen_records()}
# The location rules each probe needs (docs/alfworld_revision.md states the same counts).
RULES_AT_L = {
    1: {"alfworld-admissible": 139, "any-receptacle-in-game": 1},
    2: {"alfworld-admissible": 138, "any-receptacle-in-game": 2},
    4: {"alfworld-admissible": 130, "any-receptacle-in-game": 10},
    8: {"alfworld-admissible": 74, "any-receptacle-in-game": 64, "split-vocabulary": 2},
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "benchmarks.alfworld_revision", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def game_receptacles(row: dict[str, Any]) -> set[str]:
    return {name for name in row["receptacles_text"].values() if name}


def placements(row: dict[str, Any]) -> set[tuple[str, str]]:
    """(object type as the cases name it, receptacle) for every in-game placement."""
    return {(inst.rsplit(" ", 1)[0], rec) for inst, rec in row["in_receptacle_text"]}


# ---------------------------------------------------------------------------------------------
# The shipped records
# ---------------------------------------------------------------------------------------------


def test_the_shipped_records_are_the_documented_file() -> None:
    sources = (ar.DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    digest = hashlib.sha256(RECORDS.read_bytes()).hexdigest()
    assert digest in sources  # SOURCES.md quotes the gzip's full sha256
    raw = gzip.decompress(RECORDS.read_bytes())
    assert hashlib.sha256(raw).hexdigest() in sources
    hashes = (RECORDS.parent / "raw_files_sha256.txt").read_text().splitlines()
    assert len(hashes) == 3 * 140  # traj_data.json, initial_state.pddl, game.tw-pddl per game
    folders = {line.split()[1].rsplit("/", 1)[0].split("valid_seen/", 1)[1] for line in hashes}
    assert folders == set(GAMES)


def test_140_games_by_alfworlds_filter() -> None:
    assert len(GAMES) == 140 and list(GAMES) == sorted(GAMES)
    types = collections.Counter(row["task_type"] for row in GAMES.values())
    assert types == {
        "pick_and_place_simple": 35,
        "pick_clean_then_place_in_recep": 27,
        "pick_cool_then_place_in_recep": 25,
        "pick_two_obj_and_place": 24,
        "pick_heat_then_place_in_recep": 16,
        "look_at_obj_in_light": 13,
    }
    assert not any("movable" in g or "Sliced" in g for g in GAMES)


def test_our_names_are_the_engines_names() -> None:
    """`alfworld_names` (the Demangler without shuffling) gives every id of the 140 games the
    name the engine showed when the records were made."""
    for row in GAMES.values():
        shown = {**row["receptacles_text"], **row["objects_text"]}
        ours = ar.alfworld_names(shown)
        assert {i: n for i, n in shown.items() if n} == {i: ours[i] for i, n in shown.items() if n}


def test_records_and_game_folders_give_the_same_inventory(tmp_path: Path) -> None:
    """A records line made from a game folder casts exactly like the folder itself."""
    game = ar.harvest_game(ar.SAMPLE_GAME_DIR)
    problem = (ar.SAMPLE_GAME_DIR / "initial_state.pddl").read_text()
    receptacle_ids = re.findall(r"\(receptacleType (\S+) \w+\)", problem)
    row = {
        "game": "sample",
        "floor_plan": game.floor_plan,
        "pddl_params": {"object_target": "Potato"},
        "receptacles_text": ar.alfworld_names(receptacle_ids),
        "in_receptacle": [[f["object_id"], f["receptacle_id"]] for f in game.facts],
        "in_receptacle_text": [[f["instance"], f["receptacle"]] for f in game.facts],
    }
    from_row = ar.record_facts(row).inventory("sample", "x")
    assert from_row == game.inventory("sample", "x")
    path = tmp_path / "records.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(row) + "\n").encode()))
    (inv,) = ar.valid_seen_inventories(path)
    assert inv.starts == from_row.starts and inv.vocabulary == tuple(n for n, _ in inv.receptacles)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"game": "g"}', "missing field(s) floor_plan"),
        ("not json", "line 1: not JSON"),
        (
            '{"game": "g", "floor_plan": "F", "pddl_params": {}, "receptacles_text": {}, '
            '"in_receptacle": [], "in_receptacle_text": [["a 1", "b 1"]]}',
            "same length",
        ),
    ],
)
def test_a_broken_records_file_is_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(gzip.compress(line.encode()))
    with pytest.raises(ar.AlfworldDataError, match=re.escape(message)) as err:
        ar.valid_seen_records(path)
    assert str(path) in str(err.value)


# ---------------------------------------------------------------------------------------------
# The default source: one case per game
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("L", [1, 8])
def test_cli_with_only_L_and_out_writes_140_games_byte_identically(tmp_path: Path, L: int) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        done = run_cli("--L", str(L), "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert "140 chains cases (alfworld-valid_seen)" in done.stderr
    assert a.read_bytes() == b.read_bytes()
    cases = ar.read_cases(a)
    assert len(cases) == 140 and {c.record_source for c in cases} == {"alfworld-valid_seen"}
    assert [c.record["game"] for c in cases] == sorted(GAMES)  # case k = game k, all distinct
    assert [c.id for c in cases] == [f"alfrev-L{L}-{k:03d}" for k in range(140)]
    assert a.read_text(encoding="utf-8") == ar.dumps(ar.generate(L))


@pytest.mark.parametrize("L", ar.SUPPORTED_L)
def test_records_are_real_placements_and_chains_use_the_games_receptacles(L: int) -> None:
    cases = ar.generate(L)
    vocabulary = set(ar.valid_seen_inventories()[0].vocabulary)
    rules = collections.Counter()
    for case in cases:
        row = GAMES[case.record["game"]]
        record = case.record
        assert set(record) >= {"game", "floor_plan", "object", "key", "location", "instance"}
        assert record["floor_plan"] == row["floor_plan"]
        assert [record["instance"], record["location"]] in row["in_receptacle_text"]
        assert record["object"] == case.object == row["pddl_params"]["object_target"].lower()
        assert record["key"] == case.key == f"{case.object}.location"
        rules[record["location_rule"]] += 1
        allowed = game_receptacles(row)
        if record["location_rule"] == "split-vocabulary":
            allowed = vocabulary
        real = placements(row)
        for e in case.events:
            assert e["to"] in allowed
            if e["kind"] == "stale_record":  # every chain starts at a real placement
                assert (e["object"], e["to"]) in real
    assert rules == RULES_AT_L[L]


def test_split_vocabulary_only_where_a_game_has_too_few_receptacles() -> None:
    for case in ar.generate(8):
        row = GAMES[case.record["game"]]
        few = len(game_receptacles(row)) < 9  # 8 moves need 9 distinct locations
        assert (case.record["location_rule"] == "split-vocabulary") == few
        outside = {e["to"] for e in case.events} - game_receptacles(row)
        assert bool(outside) <= few


def test_a_game_has_the_same_record_at_every_L_and_probe() -> None:
    def casts(cases: list[ar.Case]) -> list[tuple[str, str, str]]:
        return [(c.record["game"], c.object, c.record["location"]) for c in cases]

    chains = {L: casts(ar.generate(L)) for L in ar.SUPPORTED_L}
    assert chains[1] == chains[2] == chains[4] == chains[8] == casts(ar.conflict_probe())
    retraction = casts(ar.retraction_probe(32))
    assert retraction == casts(ar.retraction_probe(0))
    differ = [k for k, (a, b) in enumerate(zip(retraction, chains[1], strict=True)) if a != b]
    assert len(differ) == 2  # documented: no rule casts these two around their task object


@settings(max_examples=25, deadline=None)
@given(L=st.sampled_from(ar.SUPPORTED_L), n=st.integers(min_value=0, max_value=140))
def test_cases_n_takes_the_first_n_games(L: int, n: int) -> None:
    first = ar.generate(L, cases=n)
    assert [c.record["game"] for c in first] == sorted(GAMES)[:n]
    assert first == ar.generate(L)[:n]


def test_more_cases_than_games_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="140 games, one case each"):
        ar.generate(1, cases=141)
    with pytest.raises(ValueError, match="140 games"):
        ar.retraction_probe(0, cases=200)
    assert ar.main(["--L", "1", "--cases", "141", "--out", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cases=141" in err and "140 games" in err
    assert len(ar.generate(1, cases=141, source="scenes")) == 141  # scenes are not bounded


def test_the_scene_source_stays_an_option(tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    assert ar.main(["--L", "2", "--source", "scenes", "--cases", "3", "--out", str(out)]) == 0
    assert ar.read_cases(out) == ar.generate(2, cases=3, source="scenes")
    assert {c.record_source for c in ar.read_cases(out)} == {ar.SCENE_SOURCE}
    with pytest.raises(ValueError, match="choose one of valid_seen, scenes"):
        ar.generate(1, cases=1, source="kitchen")
    with pytest.raises(ValueError, match="exclude each other"):
        ar.generate(1, cases=1, source="scenes", games_dir=ar.SAMPLE_GAME_DIR)
    assert ar.main(["--L", "1", "--source", "scenes", "--games", "/tmp", "--out", "-"]) == 2


def test_the_benchmark_reads_the_source(tmp_path: Path) -> None:
    from benchmarks.alfworld_revision.benchmark import AlfworldRevision

    default = AlfworldRevision(probe="chains", L=1, cases=3)
    assert default.fingerprint()["record_source"] == "alfworld-valid_seen"
    scenes = AlfworldRevision(probe="chains", L=1, cases=3, source="scenes")
    assert scenes.fingerprint()["record_source"] == ar.SCENE_SOURCE
    with pytest.raises(ValueError, match=r"benchmark\.source='x'"):
        AlfworldRevision(source="x")
    with pytest.raises(ValueError, match="exclude each other"):
        AlfworldRevision(source="scenes", games_dir=str(tmp_path))


def test_rewrites_written_for_other_cases_are_refused(tmp_path: Path) -> None:
    """Case ids repeat across sources: a rewrites file for the scene source must not be
    applied to the valid_seen cases of the same id."""
    base = ar.generate(1, cases=2)
    rows = ar.load_rewrite_rows()
    assert ar.single_revision(base, rows)  # the offline set was written for these cases
    assert all(r["record_source"] == "alfworld-valid_seen" for r in rows.values())
    other = {**rows["alfrev-L1-000"], "original": "Update: x has been moved from a 1 to b 1."}
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps(other) + "\n")
    with pytest.raises(ar.AlfworldDataError, match=r"alfrev-L1-000.*regenerate"):
        ar.single_revision(base, ar.load_rewrite_rows(path))
    path.write_text('{"case_id": "alfrev-L1-000"}\n')
    with pytest.raises(ar.AlfworldDataError, match=r"line 1.*'rewrite'"):
        ar.load_rewrite_rows(path)
