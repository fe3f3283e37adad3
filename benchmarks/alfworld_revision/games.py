"""Real ALFWorld games: the object-location facts of game folders (B.2: "one record per game").

Reads the ``(inReceptacle <object> <receptacle>)`` atoms of each game's PDDL problem
(initial_state.pddl, else game.tw-pddl), names them as ALFWorld does, applies ALFWorld's own
game selection to a folder of games, and turns each game into an `Inventory` for casting.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.alfworld_revision.scenes import (
    Inventory,
    _natural,
    _thor_type,
    alfworld_names,
    receptacle_rules,
)
from benchmarks.alfworld_revision.spec import (
    GAMES_SOURCE_PREFIX,
    KEY_TEMPLATE,
    AlfworldDataError,
)

GAME_PROBLEM_FILES = ("initial_state.pddl", "game.tw-pddl")
GAME_FILES = ("traj_data.json", *GAME_PROBLEM_FILES)

_ATOM = re.compile(r"\(\s*(inReceptacle|receptacleType|objectType)\s+(\S+)\s+([^\s)]+)\s*\)", re.I)
_DECLARATION = re.compile(r"^\s*(\S+)\s+-\s+(\w+)\s*$", re.M)


@dataclass(frozen=True)
class GameFacts:
    """What one ALFWorld game folder says about object locations.

    ``facts`` are its ``(inReceptacle o r)`` atoms with readable names; ``record`` is the game's
    one object-location record (the task object where it sits in a receptacle)."""

    path: str
    floor_plan: str | None
    task_object: str | None
    facts: tuple[dict[str, str], ...]
    receptacles: tuple[tuple[str, str], ...]
    record: dict[str, str]

    def inventory(self, label: str, source: str) -> Inventory:
        rules = receptacle_rules()
        starts: dict[str, str] = {}
        instances: dict[str, str] = {}
        types: dict[str, str] = {}
        # An object type's representative is its lowest-numbered instance; an instance listed
        # in several receptacles (a mug in the coffee machine on the counter) takes the first.
        for instance, receptacle, obj_type in facts_by_instance(self.facts):
            starts.setdefault(obj_type.lower(), receptacle)
            instances.setdefault(obj_type.lower(), instance)
            types.setdefault(obj_type.lower(), obj_type)
        return Inventory(
            label=label,
            source=source,
            receptacles=tuple((n, t) for n, t in self.receptacles if t in rules),
            objects=tuple(sorted(types.items())),
            starts=tuple(sorted(starts.items())),
            instances=tuple(sorted(instances.items())),
            preferred=self.task_object,
            floor_plan=self.floor_plan,
        )


def facts_by_instance(facts: Iterable[Mapping[str, str]]) -> list[tuple[str, str, str]]:
    """(instance, receptacle, object type) triples, instance numbers compared as numbers."""
    rows = [(f["instance"], f["receptacle"], f["object_type"]) for f in facts]
    return sorted(rows, key=lambda r: (_natural(r[0]), _natural(r[1])))


def _read_text(path: Path) -> str:
    """A game file's text; unreadable or non-UTF-8 bytes are one `AlfworldDataError`."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise AlfworldDataError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise AlfworldDataError(f"{path}: {err.strerror or err}") from None


def _read_object(path: Path) -> dict:
    """A game file that must hold one JSON object (game.tw-pddl, traj_data.json)."""
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as err:
        raise AlfworldDataError(f"{path}: not valid JSON ({err.msg})") from None
    if not isinstance(data, dict):
        raise AlfworldDataError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _optional(path: Path, data: Mapping, field: str, kind: type) -> Any:
    """``data[field]`` when it is a `kind` or absent/null (then None); else one error."""
    value = data.get(field)
    if value is not None and not isinstance(value, kind):
        raise AlfworldDataError(
            f"{path}: field {field!r} should be {kind.__name__} or null, got {type(value).__name__}"
        )
    return value


def _read_problem(folder: Path) -> str:
    """The PDDL problem text: initial_state.pddl, else game.tw-pddl's ``pddl_problem``."""
    pddl = folder / "initial_state.pddl"
    if pddl.is_file():
        return _read_text(pddl)
    tw = folder / "game.tw-pddl"
    if tw.is_file():
        problem = _read_object(tw).get("pddl_problem")
        if not isinstance(problem, str) or not problem.strip():
            raise AlfworldDataError(f"{tw}: no 'pddl_problem' text in this game file")
        return problem
    present = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    raise AlfworldDataError(
        f"{folder}: not an ALFWorld game folder; expected initial_state.pddl or game.tw-pddl "
        f"(beside traj_data.json), found {', '.join(present) if present else 'no files'}"
    )


def _read_traj(folder: Path) -> tuple[str | None, str | None]:
    """(task object type, FloorPlan) from traj_data.json when present."""
    traj = folder / "traj_data.json"
    if not traj.is_file():
        return None, None
    data = _read_object(traj)
    params = _optional(traj, data, "pddl_params", dict) or {}
    scene = _optional(traj, data, "scene", dict) or {}
    target = _optional(traj, params, "object_target", str) or None
    return target, _optional(traj, scene, "floor_plan", str)


def _init(problem: str) -> str:
    """The ``(:init ...)`` block: the goal also mentions inReceptacle, over variables."""
    start = problem.find("(:init")
    if start < 0:
        return ""
    end = problem.find("(:goal", start)
    return problem[start : end if end > start else len(problem)]


def _declared_ids(problem: str) -> list[str]:
    start = problem.find("(:objects")
    end = problem.find("(:init", start)
    block = problem[start:end] if start >= 0 and end > start else problem
    return [m.group(1) for m in _DECLARATION.finditer(block)]


def harvest_game(folder: str | Path) -> GameFacts:
    """The object-location facts of one ALFWorld game folder (B.2: "one record per game").

    Reads the ``(inReceptacle <object> <receptacle>)`` atoms of the PDDL problem and names both
    sides as ALFWorld does (`alfworld_names`); types come from the problem's ``objectType`` and
    ``receptacleType`` atoms. The record is the task object (traj_data.json's
    ``pddl_params.object_target``) where it sits, else the first object by name."""
    folder = Path(folder)
    problem = _read_problem(folder)
    task_object, floor_plan = _read_traj(folder)
    atoms = [(m.group(1).lower(), m.group(2), m.group(3)) for m in _ATOM.finditer(_init(problem))]
    types = {
        a: t.removesuffix("Type") for p, a, t in atoms if p in ("objecttype", "receptacletype")
    }
    names = alfworld_names([*_declared_ids(problem), *(a for _, a, _ in atoms)])
    facts = []
    for pred, obj_id, rec_id in atoms:
        if pred != "inreceptacle":
            continue
        if obj_id not in names or rec_id not in names:
            raise AlfworldDataError(f"{folder}: cannot name {obj_id} or {rec_id} in inReceptacle")
        obj_type = types.get(obj_id, obj_id.split("_bar_", 1)[0])
        facts.append(
            {
                "object": obj_type.lower(),
                "object_type": obj_type,
                "instance": names[obj_id],
                "receptacle": names[rec_id],
                "receptacle_type": types.get(rec_id, _thor_type(rec_id.replace("_bar_", "|"))),
                "object_id": obj_id,
                "receptacle_id": rec_id,
            }
        )
    if not facts:
        raise AlfworldDataError(
            f"{folder}: the PDDL problem has no (inReceptacle ...) facts in its (:init ...) block"
        )
    receptacles = tuple(
        sorted(
            ((names[a], t.removesuffix("Type")) for p, a, t in atoms if p == "receptacletype"),
            key=lambda r: _natural(r[0]),
        )
    )
    rows = facts_by_instance(facts)
    task = task_object.lower() if task_object else None
    chosen = next((r for r in rows if task and r[2].lower() == task), rows[0])
    obj = chosen[2].lower()
    record = {"object": obj, "key": KEY_TEMPLATE.format(obj=obj), "location": chosen[1]}
    return GameFacts(str(folder), floor_plan, task, tuple(facts), receptacles, record)


def find_games(games_dir: str | Path) -> list[Path]:
    """ALFWorld game folders at or under `games_dir`, in sorted path order.

    Applies ALFWorld's own selection (AlfredTWEnv.gen_game_files): tasks with movable
    receptacles or sliced objects are skipped, and so are games whose game.tw-pddl says
    ``"solvable": false``; on the official valid_seen split this leaves its 140 games."""
    root = Path(games_dir)
    if not root.is_dir():
        raise AlfworldDataError(
            f"{root}: not a folder; expected an ALFWorld game folder (traj_data.json with "
            "initial_state.pddl or game.tw-pddl) or a folder of them"
        )
    folders = sorted({p.parent for name in GAME_FILES for p in root.rglob(name)})
    if not folders:
        raise AlfworldDataError(
            f"{root}: no ALFWorld game found; expected initial_state.pddl or game.tw-pddl "
            "(with traj_data.json) in this folder or below it"
        )
    kept = []
    for folder in folders:
        rel = folder.relative_to(root).as_posix()
        if "movable" in rel or "Sliced" in rel:
            continue
        if not any((folder / n).is_file() for n in GAME_PROBLEM_FILES):
            _read_problem(folder)  # raises, naming the folder and the files expected
        tw = folder / "game.tw-pddl"
        if tw.is_file() and _tw_unsolvable(tw):
            continue
        kept.append(folder)
    if not kept:
        raise AlfworldDataError(
            f"{root}: all {len(folders)} game folders were skipped by ALFWorld's selection "
            "(movable-receptacle or sliced tasks, or unsolvable games)"
        )
    return kept


def _tw_unsolvable(tw: Path) -> bool:
    return _read_object(tw).get("solvable") is False


@cache
def _game_inventories(games_dir: str) -> tuple[Inventory, ...]:
    root = Path(games_dir)
    source = GAMES_SOURCE_PREFIX + games_dir
    # A game is labelled by its path below games_dir, or its own name when it is games_dir.
    games = [
        harvest_game(f).inventory(f.name if f == root else f.relative_to(root).as_posix(), source)
        for f in find_games(root)
    ]
    vocabulary = tuple(sorted({n for g in games for n, _ in g.receptacles}, key=_natural))
    return tuple(replace(g, vocabulary=vocabulary) for g in games)
