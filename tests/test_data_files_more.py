"""LongMemEval and ALFWorld inputs mutated the way a careless edit or another tool would: loading
either works or raises one `InputError` naming the file, never a KeyError, TypeError or
AttributeError from inside the loader."""

from __future__ import annotations

import copy
import gzip
import itertools
import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.alfworld_revision.cases import generate, load_rewrite_rows
from benchmarks.alfworld_revision.episodes import read_cases
from benchmarks.alfworld_revision.games import harvest_game
from benchmarks.alfworld_revision.records import record_facts, valid_seen_records
from benchmarks.alfworld_revision.spec import DATA_DIR, VALID_SEEN_RECORDS
from benchmarks.longmemeval.loader import DATA_FILE, load
from benchmarks.runner.types import InputError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)
FRESH = itertools.count()
HOSTILE = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _set(tree: object, place: tuple, value: object) -> object:
    tree = copy.deepcopy(tree)
    node = tree
    for step in place[:-1]:
        node = node[step]
    node[place[-1]] = value
    return tree


def _one_line(err: InputError, path: Path) -> None:
    assert str(path) in str(err), str(err)
    assert "\n" not in str(err).strip(), str(err)


# -- LongMemEval ------------------------------------------------------------------------------

LME = json.loads(DATA_FILE.read_bytes())
LME_PLACES = [
    (0,), (0, "question_id"), (0, "question_type"), (0, "question"), (0, "answer"),
    (0, "question_date"), (0, "haystack_session_ids"), (0, "haystack_dates"),
    (0, "haystack_sessions"), (0, "answer_session_ids"), (0, "haystack_sessions", 0),
    (0, "haystack_sessions", 0, 0), (0, "haystack_sessions", 0, 0, "role"),
    (0, "haystack_sessions", 0, 0, "content"), (0, "haystack_sessions", 0, 0, "has_answer"),
    (0, "haystack_dates", 0), (0, "haystack_session_ids", 0),
]  # fmt: skip


@HOSTILE
@given(st.sampled_from(LME_PLACES), json_values)
def test_a_mutated_longmemeval_file_loads_or_is_refused_naming_it(
    tmp_path: Path, place: tuple, value: object
) -> None:
    path = tmp_path / "haystack.json"
    path.write_text(json.dumps(_set(LME, place, value)))
    try:
        loaded = load(path)
    except InputError as err:
        _one_line(err, path)
    else:
        assert all(isinstance(i.question_id, str) for i in loaded.instances)


# -- ALFWorld: a game folder -----------------------------------------------------------------

GAME = DATA_DIR / "sample_train_game"
TRAJ = json.loads((GAME / "traj_data.json").read_text())
TW = json.loads((GAME / "game.tw-pddl").read_text())
TRAJ_PLACES = [("pddl_params",), ("pddl_params", "object_target"), ("scene",),
               ("scene", "floor_plan")]  # fmt: skip
whole_files = json_values | st.binary(max_size=8).map(lambda b: b"\xff" + b)


def _game(tmp_path: Path, name: str, content: object) -> Path:
    folder = tmp_path / f"game-{next(FRESH)}"  # games are cached by folder
    shutil.copytree(GAME, folder, dirs_exist_ok=True)
    data = content if isinstance(content, bytes) else json.dumps(content).encode()
    (folder / name).write_bytes(data)
    return folder


@HOSTILE
@given(st.sampled_from(TRAJ_PLACES), json_values)
def test_a_mutated_traj_data_field_harvests_or_is_refused(
    tmp_path: Path, place: tuple, value: object
) -> None:
    folder = _game(tmp_path, "traj_data.json", _set(TRAJ, place, value))
    try:
        facts = harvest_game(folder)
    except InputError as err:
        _one_line(err, folder / "traj_data.json")
    else:
        assert facts.facts


@HOSTILE
@given(st.sampled_from(["traj_data.json", "game.tw-pddl", "initial_state.pddl"]), whole_files)
def test_a_game_file_replaced_by_anything_is_refused_naming_it(
    tmp_path: Path, name: str, content: object
) -> None:
    folder = _game(tmp_path, name, content)
    try:
        generate(1, cases=1, distractors=0, games_dir=str(folder))
    except InputError as err:
        assert str(folder) in str(err), str(err)
        assert "\n" not in str(err).strip(), str(err)


@HOSTILE
@given(json_values)
def test_a_mutated_tw_pddl_file_is_read_or_refused(tmp_path: Path, value: object) -> None:
    folder = _game(tmp_path, "game.tw-pddl", _set(TW, ("solvable",), value))
    (folder / "initial_state.pddl").unlink()
    try:
        generate(1, cases=1, distractors=0, games_dir=str(folder))
    except InputError as err:
        assert str(folder) in str(err), str(err)


# -- ALFWorld: the records file and the rewrites file ------------------------------------------

RECORDS = [
    json.loads(line)
    for line in gzip.decompress(VALID_SEEN_RECORDS.read_bytes()).decode().splitlines()
    if line.strip()
][:3]
RECORD_PLACES = [(0, f) for f in RECORDS[0]] + [
    (0, "in_receptacle", 0), (0, "in_receptacle_text", 0), (0, "in_receptacle", 0, 0),
    (0, "in_receptacle_text", 0, 1), (0, "pddl_params", "object_target"),
]  # fmt: skip


@HOSTILE
@given(st.sampled_from(RECORD_PLACES), json_values)
def test_a_mutated_records_file_reads_or_is_refused(
    tmp_path: Path, place: tuple, value: object
) -> None:
    path = tmp_path / f"records-{next(FRESH)}.jsonl.gz"  # the reader caches by path
    rows = _set(RECORDS, place, value)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    try:
        for row in valid_seen_records(path):
            record_facts(row)
    except InputError as err:
        _one_line(err, path)


@HOSTILE
@given(st.lists(json_values | st.just({"case_id": "c", "rewrite": "r"}), max_size=4))
def test_a_mutated_rewrites_file_reads_or_is_refused(tmp_path: Path, rows: list) -> None:
    path = tmp_path / "rewrites.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        out = load_rewrite_rows(path)
    except InputError as err:
        _one_line(err, path)
    else:
        assert all(isinstance(v["rewrite"], str) for v in out.values())


@HOSTILE
@given(st.lists(json_values, min_size=1, max_size=3))
def test_a_cases_file_of_other_lines_is_refused_naming_it(tmp_path: Path, rows: list) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        read_cases(path)
    except InputError as err:
        _one_line(err, path)
