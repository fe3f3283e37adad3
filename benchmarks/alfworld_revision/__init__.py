"""ALFWorld-Revision: the revision-pressure variant of ALFWorld (paper §4.2, Appendices B.2-B.3).

Standard ALFWorld never invalidates a stored fact, so the paper adds revisions: an object's
stated location is changed by one or more updates and the agent must report where it is now.
This module builds those histories deterministically, as plain JSON (`Case.to_json`, the CLI)
and as harness episodes (`to_episodes`):

* `generate(L)` - revision chains (B.2): the target object and four distractor objects each get
  a stale record and an L-move chain; the five chains merge into one arrival order.
* `retraction_probe(d)` - reversibility (B.3): v1 stated once, an erroneous move to v2, d
  distractor events, then a retraction that names v2 and never restates v1.
* `conflict_probe()` - contest and resolve (§4.2.3): two reports with no recency or authority
  cue, eight distractor events, then a settling check.
* `single_revision(cases, rewrites)` - the single-revision variant (B.2): L=1 cases whose update
  was rewritten into a two-step move (the LLM rewrite/verify step lives elsewhere; its prompts
  are `REWRITE_PROMPT` and `VERIFY_PROMPT`, and a hand-written offline set ships for tests).

Records (object-location facts keyed ``{object}.location``) come from real ALFWorld game folders
when the user has them (``games_dir`` / ``--games``: the ``inReceptacle`` atoms of the PDDL
problem), otherwise from the per-FloorPlan scene inventories shipped in
``benchmarks/data/alfworld`` (see SOURCES.md there). Every case says which in ``record_source``.

    python -m benchmarks.alfworld_revision --L 8 --seed 42 --out alfrev_L8.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

from benchmarks.runner.types import Episode, Event, Question

T = TypeVar("T")

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "alfworld"
SAMPLE_GAME_DIR = DATA_DIR / "sample_train_game"
OFFLINE_REWRITES = DATA_DIR / "single_revision_offline.jsonl"

SUPPORTED_L = (1, 2, 4, 8)  # B.2: L in {1, 2, 4, 8}
SUPPORTED_D = (0, 32)  # B.3: d in {0, 32}
DEFAULT_SEED = 42
DEFAULT_CASES = 140
DEFAULT_DISTRACTORS = 4
CONFLICT_DISTRACTOR_EVENTS = 8  # §4.2.3: "eight distractors follow"
RETRACTION_DISTRACTOR_EVENTS = max(SUPPORTED_D)  # one pool size for every d, so only d varies
# Scene-inventory casts need this many admissible locations per object, whatever the probe, so
# case k has the same scene, objects and starting locations at every L and in every probe.
SCENE_MIN_LOCATIONS = max(SUPPORTED_L) + 1

SCENE_SOURCE = "alfworld-scene-inventories"
GAMES_SOURCE_PREFIX = "alfworld-games:"

# B.2's templates, verbatim.
STALE_TEMPLATE = "Earlier observation: {obj} was in {loc}."
UPDATE_TEMPLATE = "Update: {obj} has been moved from {a} to {b}."
QUESTION_TEMPLATE = "where is the {obj} now?"
KEY_TEMPLATE = "{obj}.location"
# Ours, in the same style. B.3 requires that v1 appear nowhere but in the stale record, so the
# erroneous update names only its destination and the retraction names only v2.
ERRONEOUS_UPDATE_TEMPLATE = "Update: {obj} has been moved to {b}."
RETRACTION_TEMPLATE = "Correction: the report that {obj} was moved to {v2} was an error."
# §4.2.3: two reports with no recency or authority cue (the same template), then a check.
REPORT_TEMPLATE = "Report: {obj} is in {loc}."
SETTLE_TEMPLATE = "Check: {obj} is in {loc}."

# B.2 single-revision variant: a stronger model rewrites each templated update into a two-step
# move, and a temperature-0 verifier must recover the destination for the rewrite to be kept.
REWRITE_PROMPT = (
    "Rewrite the household update below as a two-step move: the object is first taken from its "
    "old location to some intermediate place, and only then put into its final location.\n"
    "Rules: keep the object name and every location name exactly as written (for example "
    '"cabinet 3"); mention the final location exactly once; do not reuse the wording "has been '
    'moved from ... to ..."; the final location must be clear to a careful reader. Reply with '
    'one line that starts with "Update:" and nothing else.\n\n'
    "{update}"
)  # .format(update=<the templated update>)
VERIFY_PROMPT = (
    "Read the update below.\n\n{rewrite}\n\n"
    "Question: where is the {obj} now?\n"
    "Reply with the location only, exactly as it is written in the update."
)  # .format(rewrite=<the candidate rewrite>, obj=<the object>); keep it if `verifier_accepts`

GAME_PROBLEM_FILES = ("initial_state.pddl", "game.tw-pddl")
GAME_FILES = ("traj_data.json", *GAME_PROBLEM_FILES)
# alfworld/gen/constants.py reuses the TableTop rule for these three after its literal dict
# (that statement is not a literal, so it is missing from the extracted vocabulary).
TABLE_ALIASES = ("DiningTable", "CoffeeTable", "SideTable")


class AlfworldDataError(ValueError):
    """ALFWorld input that cannot be used; the message names the path and what was expected."""


# ---------------------------------------------------------------------------------------------
# Vocabulary and naming
# ---------------------------------------------------------------------------------------------


@cache
def _load_json(name: str) -> Any:
    return json.loads((DATA_DIR / name).read_text(encoding="utf-8"))


@cache
def receptacle_rules() -> dict[str, frozenset[str]]:
    """Receptacle type -> the object types ALFWorld lets it hold (VAL_RECEPTACLE_OBJECTS).

    Movable receptacles (bowl, pot, ...) are dropped: chains run over fixed furniture, like the
    ``inReceptacle`` facts of real games."""
    vocab = _load_json("alfworld_constants_vocab.json")
    rules = {k: frozenset(v) for k, v in vocab["VAL_RECEPTACLE_OBJECTS"].items()}
    for alias in TABLE_ALIASES:
        rules[alias] = rules["TableTop"]
    del rules["TableTop"]
    for movable in vocab["MOVABLE_RECEPTACLES"]:
        rules.pop(movable, None)
    return rules


def mangle(thor_id: str) -> str:
    """A THOR object id ("Cabinet|+00.68|+00.50|-02.20") in ALFWorld's PDDL spelling."""
    for raw, word in (("|", "_bar_"), ("+", "_plus_"), ("-", "_minus_"), (".", "_dot_")):
        thor_id = thor_id.replace(raw, word)
    return thor_id.replace(",", "_comma_")


def _name_group(lowered_id: str) -> str:
    group = lowered_id.split("_bar_", 1)[0]
    # "sink_bar_..._bar_sinkbasin" is the sink basin, a receptacle distinct from the sink.
    if "basin" in lowered_id and not group.endswith("basin"):
        group += "basin"
    return group


def alfworld_names(ids: Iterable[str]) -> dict[str, str]:
    """Readable names as ALFWorld prints them ("countertop 2", "sinkbasin 1") for PDDL ids.

    Mirrors ``alfworld.agents.utils.misc.Demangler`` without shuffling (its evaluation setting):
    ids are lower-cased (ALFWorld's PDDL parser does so), grouped by the text before the first
    ``_bar_`` (plus "basin" for basin ids), sorted, and numbered from the group size down to 1
    in sorted order (the Demangler pops its number list from the end). Ids without ``_bar_``
    are type constants, not entities, and get no name."""
    wanted = [i for i in ids if "_bar_" in i]
    groups: dict[str, list[str]] = {}
    for lowered in sorted({i.lower() for i in wanted}):
        groups.setdefault(_name_group(lowered), []).append(lowered)
    numbered = {
        lowered: f"{group} {len(members) - rank}"
        for group, members in groups.items()
        for rank, lowered in enumerate(members)
    }
    return {i: numbered[i.lower()] for i in wanted}


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition(" ")
    return (head, int(number)) if number.isdigit() else (name, 0)


# ---------------------------------------------------------------------------------------------
# Inventories: where a case's chains can happen
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inventory:
    """One ALFWorld scene's chain locations and movable objects.

    ``receptacles`` holds (readable name, THOR type) for every receptacle a chain may use;
    ``objects`` holds (readable name, THOR type); ``starts`` gives an object's real location
    when the inventory comes from a game (empty for scene inventories, whose starts are drawn);
    ``preferred`` is the game's task object, tried first as the target. ``rule`` says which
    locations an object may be moved to (see `LOCATION_RULES`); ``vocabulary`` is the split's
    receptacle names, used only under the "split-vocabulary" rule."""

    label: str
    source: str
    receptacles: tuple[tuple[str, str], ...]
    objects: tuple[tuple[str, str], ...]
    starts: tuple[tuple[str, str], ...] = ()
    preferred: str | None = None
    floor_plan: str | None = None
    rule: str = "alfworld-admissible"
    vocabulary: tuple[str, ...] = ()

    def admissible(self, obj_type: str) -> list[str]:
        if self.rule == "alfworld-admissible":
            rules = receptacle_rules()
            return [name for name, rtype in self.receptacles if obj_type in rules.get(rtype, ())]
        names = [name for name, _ in self.receptacles]
        if self.rule == "split-vocabulary":
            names += [name for name in self.vocabulary if name not in set(names)]
        return names

    def start_of(self, obj: str) -> str | None:
        return dict(self.starts).get(obj)


# Which receptacles a chain may move an object to, strictest first. Scene inventories always
# use the first (their scenes are chosen to allow it); a real game falls back down the list
# only when it cannot cast the case otherwise (at L=8, 31 of valid_seen's 140 games cannot
# under ALFWorld's rules, and 2 have fewer than 9 receptacles at all). B.2 itself draws the
# "location and object vocabulary for chain construction" from the split.
LOCATION_RULES = ("alfworld-admissible", "any-receptacle-in-game", "split-vocabulary")


def _thor_type(thor_id: str) -> str:
    parts = thor_id.split("|")
    return parts[-1] if len(parts) == 5 else parts[0]  # "Sink|x|y|z|SinkBasin" -> SinkBasin


@cache
def scene_inventories() -> dict[str, Inventory]:
    """Every FloorPlan's inventory from the shipped ALFWorld layouts (scene-inventory mode).

    Receptacles are the instances listed for the scene, named the way ALFWorld would name them
    among themselves; objects are the scene's object types that some such receptacle may hold."""
    instances = _load_json("floorplan_receptacle_instances.json")
    object_types = _load_json("floorplan_object_types.json")
    rules = receptacle_rules()
    out = {}
    for plan in sorted(instances, key=lambda p: int(p.removeprefix("FloorPlan"))):
        ids = {mangle(i): _thor_type(i) for i in instances[plan] if _thor_type(i) in rules}
        names = alfworld_names(ids)
        receptacles = tuple(
            sorted(((names[i], t) for i, t in ids.items()), key=lambda r: _natural(r[0]))
        )
        inv = Inventory(plan, SCENE_SOURCE, receptacles, (), floor_plan=plan)
        objects = tuple(
            sorted((t.lower(), t) for t in set(object_types.get(plan, ())) if inv.admissible(t))
        )
        out[plan] = replace(inv, objects=objects)
    return out


@cache
def eligible_scenes(distractors: int) -> tuple[str, ...]:
    """Scenes with enough objects that each have `SCENE_MIN_LOCATIONS` admissible receptacles."""
    return tuple(
        plan
        for plan, inv in scene_inventories().items()
        if sum(len(inv.admissible(t)) >= SCENE_MIN_LOCATIONS for _, t in inv.objects)
        >= 1 + distractors
    )


# ---------------------------------------------------------------------------------------------
# Real ALFWorld games
# ---------------------------------------------------------------------------------------------

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
        types: dict[str, str] = {}
        # An object type's representative is its lowest-numbered instance; an instance listed
        # in several receptacles (a mug in the coffee machine on the counter) takes the first.
        for _, receptacle, obj_type in facts_by_instance(self.facts):
            starts.setdefault(obj_type.lower(), receptacle)
            types.setdefault(obj_type.lower(), obj_type)
        return Inventory(
            label=label,
            source=source,
            receptacles=tuple((n, t) for n, t in self.receptacles if t in rules),
            objects=tuple(sorted(types.items())),
            starts=tuple(sorted(starts.items())),
            preferred=self.task_object,
            floor_plan=self.floor_plan,
        )


def facts_by_instance(facts: Iterable[Mapping[str, str]]) -> list[tuple[str, str, str]]:
    """(instance, receptacle, object type) triples, instance numbers compared as numbers."""
    rows = [(f["instance"], f["receptacle"], f["object_type"]) for f in facts]
    return sorted(rows, key=lambda r: (_natural(r[0]), _natural(r[1])))


def _read_problem(folder: Path) -> str:
    """The PDDL problem text: initial_state.pddl, else game.tw-pddl's ``pddl_problem``."""
    pddl = folder / "initial_state.pddl"
    if pddl.is_file():
        return pddl.read_text(encoding="utf-8")
    tw = folder / "game.tw-pddl"
    if tw.is_file():
        try:
            problem = json.loads(tw.read_text(encoding="utf-8")).get("pddl_problem")
        except json.JSONDecodeError as err:
            raise AlfworldDataError(f"{tw}: not valid JSON ({err.msg})") from err
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
    try:
        data = json.loads(traj.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise AlfworldDataError(f"{traj}: not valid JSON ({err.msg})") from err
    target = (data.get("pddl_params") or {}).get("object_target") or None
    return target, (data.get("scene") or {}).get("floor_plan")


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
    try:
        return json.loads(tw.read_text(encoding="utf-8")).get("solvable") is False
    except json.JSONDecodeError as err:
        raise AlfworldDataError(f"{tw}: not valid JSON ({err.msg})") from err


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


# ---------------------------------------------------------------------------------------------
# Randomness, merging, casting
# ---------------------------------------------------------------------------------------------


def case_rng(*parts: object) -> random.Random:
    """An RNG derived from its parts, e.g. (seed, "chains", L, k) or (seed, "record", k): case k
    is the same case whatever the number of cases, and independent of every other case."""
    text = "alfworld-revision|" + "|".join(str(p) for p in parts)
    return random.Random(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big"))


def merge_queues(rng: random.Random, queues: Sequence[Sequence[T]]) -> list[tuple[int, T]]:
    """B.2's arrival order: at each step pick a non-empty queue uniformly at random and pop its
    head. Returns (queue index, item) pairs; each queue's internal order is preserved."""
    heads = [0] * len(queues)
    merged = []
    while live := [i for i, q in enumerate(queues) if heads[i] < len(q)]:
        i = live[rng.randrange(len(live))]
        merged.append((i, queues[i][heads[i]]))
        heads[i] += 1
    return merged


@dataclass(frozen=True)
class _Actor:
    name: str
    type: str
    start: str
    others: tuple[str, ...]  # admissible locations other than the start, inventory order


def _cast(
    inv: Inventory,
    rng: random.Random,
    distractors: int,
    hops: tuple[int, int],
    avoid_target_start: bool = False,
) -> list[_Actor]:
    """The target and its distractor objects (distinct types) with their starting locations.

    Scene inventories: a shuffled choice among objects with `SCENE_MIN_LOCATIONS` admissible
    receptacles, starts drawn distinct, whatever the probe (so casts pair across L and probes).
    Games: the task object first, then the others in shuffled order, each kept at its real
    location if it has ``hops`` (target, distractor) admissible locations besides its start; a
    distractor may not start where the target does when ``avoid_target_start``."""
    if not inv.starts:
        pool = [(n, t) for n, t in inv.objects if len(inv.admissible(t)) >= SCENE_MIN_LOCATIONS]
        rng.shuffle(pool)
        if len(pool) < 1 + distractors:
            raise ValueError(f"{inv.label}: fewer than {1 + distractors} objects to cast")
        actors, used = [], set()
        for name, typ in pool[: 1 + distractors]:
            options = [loc for loc in inv.admissible(typ) if loc not in used]
            if not options:
                raise ValueError(f"{inv.label}: too many objects ({1 + distractors}) to place")
            start = options[rng.randrange(len(options))]
            used.add(start)
            actors.append(_Actor(name, typ, start, _without(inv.admissible(typ), {start})))
        return actors

    actors = []
    for name, typ in inv.objects:
        start = inv.start_of(name) or ""
        actors.append(_Actor(name, typ, start, _without(inv.admissible(typ), {start})))
    rng.shuffle(actors)
    actors.sort(key=lambda a: a.name != inv.preferred)  # stable: the task object first
    targets = [a for a in actors if len(a.others) >= hops[0]]
    if not targets:
        raise AlfworldDataError(
            f"{inv.label}: no object has {hops[0]} admissible receptacles besides its own"
        )
    best: list[_Actor] = []
    for target in targets:  # the first target around which enough distractors can be cast
        avoid = {target.start} if avoid_target_start else set()
        fits = [
            a
            for a in actors
            if a.name != target.name
            and a.start not in avoid
            and len(_without(a.others, avoid)) >= hops[1]
        ]
        chosen = [target, *fits[:distractors]]
        if len(chosen) == 1 + distractors:
            return chosen
        best = max(best, chosen, key=len)
    raise AlfworldDataError(
        f"{inv.label}: at most {len(best) - 1} distractor objects have {hops[1]} admissible "
        f"receptacles to move through; {distractors} needed"
    )


def _without(items: Iterable[str], drop: set[str]) -> tuple[str, ...]:
    return tuple(i for i in items if i not in drop)


def _hops(rng: random.Random, actor: _Actor, n: int, avoid: Iterable[str] = ()) -> list[str]:
    """`n` distinct destinations for `actor`, none its start (and none in `avoid`)."""
    pool = list(_without(actor.others, set(avoid)))
    if len(pool) < n:
        raise ValueError(f"{actor.name}: {len(pool)} locations available, {n} moves requested")
    rng.shuffle(pool)
    return pool[:n]


def _setup(
    k: int,
    seed: int,
    distractors: int,
    games_dir: str | Path | None,
    hops: tuple[int, int],
    avoid_target_start: bool = False,
) -> tuple[Inventory, list[_Actor]]:
    """Case k's inventory and cast. The casting RNG depends on (seed, k) only, so a scene
    inventory case has the same scene, objects and starts at every L and in every probe."""
    if games_dir is None:
        rng = case_rng(seed, "record", k)
        scenes = eligible_scenes(distractors)
        if not scenes:
            raise ValueError(f"no ALFWorld scene has {1 + distractors} objects to cast")
        inv = scene_inventories()[scenes[rng.randrange(len(scenes))]]
        return inv, _cast(inv, rng, distractors, hops, avoid_target_start)
    games = _game_inventories(str(games_dir))
    failure: AlfworldDataError | None = None
    for rule in LOCATION_RULES:
        inv = replace(games[k % len(games)], rule=rule)
        try:
            rng = case_rng(seed, "record", k)
            return inv, _cast(inv, rng, distractors, hops, avoid_target_start)
        except AlfworldDataError as err:
            failure = err  # the most permissive rule's reason is the one to report
    assert failure is not None
    raise failure


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One generated history and its question, in arrival order.

    ``events`` are dicts with id, text, arrival (0..n-1), object, kind (stale_record, update,
    erroneous_update, retraction, report, settle, rewritten_update), chain (0 = target, 1.. =
    distractors), step (0 = the object's first statement), from, to and refers_to (the event a
    retraction names). ``intermediate_locations`` are the target's locations other than the
    gold (for error analysis: an intermediate hop, against ``distractor_locations``, places only
    distractor chains visit). ``pre_query_index`` is where a pre-retraction / pre-resolution
    question is asked: after ``events[:pre_query_index]``; its expected answer is ``pre_gold``
    (retraction) or a flagged conflict between ``candidates`` (conflict)."""

    id: str
    probe: str
    index: int
    seed: int
    L: int
    d: int | None
    object: str
    key: str
    question: str
    gold: str
    events: list[dict[str, Any]]
    target_event_ids: list[str]
    intermediate_locations: list[str]
    distractor_locations: list[str]
    candidates: list[str]
    pre_query_index: int | None
    pre_gold: str | None
    record: dict[str, Any]
    record_source: str
    scene: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> Case:
        return cls(**dict(row))


def _event(
    obj: str,
    kind: str,
    text: str,
    chain: int,
    step: int,
    src: str | None = None,
    dst: str | None = None,
    refers_to: int | None = None,
) -> dict[str, Any]:
    return {
        "object": obj,
        "kind": kind,
        "text": text,
        "chain": chain,
        "step": step,
        "from": src,
        "to": dst,
        "refers_to": refers_to,
    }


def _chain_events(actor: _Actor, path: Sequence[str], chain: int) -> list[dict[str, Any]]:
    """B.2: a stale record, then one templated update per move."""
    obj = actor.name
    events = [
        _event(
            obj, "stale_record", STALE_TEMPLATE.format(obj=obj, loc=path[0]), chain, 0, dst=path[0]
        )
    ]
    for step, (a, b) in enumerate(pairwise(path), start=1):
        text = UPDATE_TEMPLATE.format(obj=obj, a=a, b=b)
        events.append(_event(obj, "update", text, chain, step, a, b))
    return events


def _finalize(case_id: str, stream: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrival indices and ids; ``refers_to`` turns from a position in `stream` into an id."""
    ids = [f"{case_id}-e{i:02d}" for i in range(len(stream))]
    out = []
    for i, e in enumerate(stream):
        ref = e["refers_to"]
        out.append(
            {**e, "id": ids[i], "arrival": i, "refers_to": None if ref is None else ids[ref]}
        )
    return out


def _distractor_stream(
    rng: random.Random, actors: Sequence[_Actor], n_events: int, avoid: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """`n_events` events from the distractors' merged chains (stale record + moves each)."""
    moves = math.ceil(n_events / len(actors)) - 1
    paths = [[a.start, *_hops(rng, a, moves, avoid)] for a in actors]
    queues = [_chain_events(a, p, i) for i, (a, p) in enumerate(zip(actors, paths, strict=True), 1)]
    return [e for _, e in merge_queues(rng, queues)][:n_events]


def _locations_of(events: Iterable[Mapping[str, Any]], target: bool) -> set[str]:
    return {e["to"] for e in events if (e["chain"] == 0) == target and e["to"]}


def _case(
    *,
    case_id: str,
    probe: str,
    k: int,
    seed: int,
    L: int,
    d: int | None,
    inv: Inventory,
    target: _Actor,
    stream: list[dict[str, Any]],
    gold: str,
    candidates: Sequence[str] = (),
    pre_query_at: int | None = None,
    pre_gold: str | None = None,
) -> Case:
    events = _finalize(case_id, stream)
    target_locations = _locations_of(events, target=True) | {target.start}
    others = _locations_of(events, target=False)
    path = [e["to"] for e in events if e["chain"] == 0 and e["to"]]
    intermediate = [loc for loc in dict.fromkeys([target.start, *path]) if loc != gold]
    record = {
        "object": target.name,
        "key": KEY_TEMPLATE.format(obj=target.name),
        "location": target.start,
    }
    record["location_rule"] = inv.rule
    if inv.starts:
        record.update(game=inv.label, floor_plan=inv.floor_plan)
    else:
        record["scene"] = inv.label
    return Case(
        id=case_id,
        probe=probe,
        index=k,
        seed=seed,
        L=L,
        d=d,
        object=target.name,
        key=KEY_TEMPLATE.format(obj=target.name),
        question=QUESTION_TEMPLATE.format(obj=target.name),
        gold=gold,
        events=events,
        target_event_ids=[e["id"] for e in events if e["chain"] == 0],
        intermediate_locations=intermediate,
        distractor_locations=sorted(others - target_locations, key=_natural),
        candidates=list(candidates),
        pre_query_index=pre_query_at,
        pre_gold=pre_gold,
        record=record,
        record_source=inv.source,
        scene=inv.label,
    )


def check_L(L: object) -> int:
    """`L` itself if the paper's sweep has it (B.2: L in {1, 2, 4, 8}); else a ValueError."""
    if isinstance(L, bool) or not isinstance(L, int) or L not in SUPPORTED_L:
        supported = ", ".join(map(str, SUPPORTED_L))
        raise ValueError(f"L={L!r} is not supported; chain lengths are {supported} (Appendix B.2)")
    return L


def _check_counts(cases: int, distractors: int, least: int = 0) -> None:
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 0:
        raise ValueError(f"cases={cases!r} must be a non-negative integer")
    if isinstance(distractors, bool) or not isinstance(distractors, int) or distractors < least:
        raise ValueError(f"distractors={distractors!r} must be an integer >= {least}")


def chain_case(
    L: int,
    k: int,
    *,
    distractors: int = DEFAULT_DISTRACTORS,
    seed: int = DEFAULT_SEED,
    games_dir: str | Path | None = None,
) -> Case:
    """Case k of the B.2 sweep at chain length L (see `generate`)."""
    check_L(L)
    inv, actors = _setup(k, seed, distractors, games_dir, (L, L))
    rng = case_rng(seed, "chains", L, k)
    paths = [[a.start, *_hops(rng, a, L)] for a in actors]
    queues = [_chain_events(a, p, i) for i, (a, p) in enumerate(zip(actors, paths, strict=True))]
    # The stale record heads its own chain's queue, so it precedes that chain's updates but may
    # arrive after other objects' updates: arrival order is one random merge of five queues.
    stream = [e for _, e in merge_queues(rng, queues)]
    return _case(
        case_id=f"alfrev-L{L}-{k:03d}",
        probe="chains",
        k=k,
        seed=seed,
        L=L,
        d=None,
        inv=inv,
        target=actors[0],
        stream=stream,
        gold=paths[0][-1],
    )


def generate(
    L: int,
    cases: int = DEFAULT_CASES,
    distractors: int = DEFAULT_DISTRACTORS,
    seed: int = DEFAULT_SEED,
    games_dir: str | Path | None = None,
) -> list[Case]:
    """Appendix B.2's revision chains: `cases` cases at chain length L (1, 2, 4 or 8).

    Each case: the target object gets a stale record and L moves over distinct locations (L+1
    distinct with the start); `distractors` other objects get their own stale record and L-move
    chain; all chains merge into one arrival order by random draws across per-chain queues.
    The pool is the 1+distractors stale records plus all (1+distractors)*L updates; the
    question is "where is the {object} now?" and the gold the target chain's last location."""
    check_L(L)
    _check_counts(cases, distractors)
    return [
        chain_case(L, k, distractors=distractors, seed=seed, games_dir=games_dir)
        for k in range(cases)
    ]


def retraction_probe(
    d: int,
    cases: int = DEFAULT_CASES,
    seed: int = DEFAULT_SEED,
    distractors: int = DEFAULT_DISTRACTORS,
    games_dir: str | Path | None = None,
    distractor_events: int = RETRACTION_DISTRACTOR_EVENTS,
) -> list[Case]:
    """Appendix B.3's reversibility probe: v1 stated once, an erroneous update moves the object
    to v2, exactly d distractor events, then a retraction naming v2 only. Gold v1; the
    pre-retraction gold (asked at ``pre_query_index``, just before the retraction) is v2.

    Every case holds `distractor_events` distractor events (stale records and moves of the
    distractor chains, which never visit v1); those not between the error and the retraction
    come before the error, so d changes the distance and nothing else."""
    if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= distractor_events:
        raise ValueError(
            f"d={d!r} must be an integer in 0..{distractor_events} (the paper uses "
            f"{' and '.join(map(str, SUPPORTED_D))})"
        )
    _check_counts(cases, distractors, least=1)
    moves = math.ceil(distractor_events / distractors) - 1
    out = []
    for k in range(cases):
        inv, actors = _setup(k, seed, distractors, games_dir, (1, moves), True)
        target, v1 = actors[0], actors[0].start
        rng = case_rng(seed, "retraction", k)  # not d: both distances share v2 and the chains
        v2 = _hops(rng, target, 1)[0]
        pool = _distractor_stream(rng, actors[1:], distractor_events, avoid={v1})
        before, gap = pool[: len(pool) - d], pool[len(pool) - d :]
        at = rng.randrange(len(before) + 1)
        obj = target.name
        stale = _event(obj, "stale_record", STALE_TEMPLATE.format(obj=obj, loc=v1), 0, 0, dst=v1)
        error = _event(
            obj, "erroneous_update", ERRONEOUS_UPDATE_TEMPLATE.format(obj=obj, b=v2), 0, 1, dst=v2
        )
        stream = [*before[:at], stale, *before[at:], error, *gap]
        retraction = _event(
            obj,
            "retraction",
            RETRACTION_TEMPLATE.format(obj=obj, v2=v2),
            0,
            2,
            refers_to=len(before) + 1,
        )
        stream.append(retraction)
        out.append(
            _case(
                case_id=f"alfrev-retract-d{d}-{k:03d}",
                probe="retraction",
                k=k,
                seed=seed,
                L=1,
                d=d,
                inv=inv,
                target=target,
                stream=stream,
                gold=v1,
                pre_query_at=len(stream) - 1,
                pre_gold=v2,
            )
        )
    return out


def conflict_probe(
    cases: int = DEFAULT_CASES,
    seed: int = DEFAULT_SEED,
    distractors: int = DEFAULT_DISTRACTORS,
    games_dir: str | Path | None = None,
    distractor_events: int = CONFLICT_DISTRACTOR_EVENTS,
) -> list[Case]:
    """§4.2.3's contest-and-resolve probe: two reports put the object in two places with no
    recency or authority cue, eight distractor events follow, then a check names one of them.

    Counterbalanced: the report the check confirms arrives first in even cases and second in odd
    ones, so last-write-wins is right in exactly half. Before the check (``pre_query_index``)
    the expected behaviour is a flagged conflict between ``candidates``; after it, ``gold``."""
    _check_counts(cases, distractors, least=1)
    if isinstance(distractor_events, bool) or not isinstance(distractor_events, int):
        raise ValueError(f"distractor_events={distractor_events!r} must be an integer")
    moves = max(math.ceil(distractor_events / distractors) - 1, 0)
    out = []
    for k in range(cases):
        inv, actors = _setup(k, seed, distractors, games_dir, (1, moves))
        target = actors[0]
        rng = case_rng(seed, "conflict", k)
        x, y = target.start, _hops(rng, target, 1)[0]
        settled, other = (x, y) if rng.randrange(2) == 0 else (y, x)
        first, second = (settled, other) if k % 2 == 0 else (other, settled)
        obj = target.name
        reports = [
            _event(obj, "report", REPORT_TEMPLATE.format(obj=obj, loc=loc), 0, step, dst=loc)
            for step, loc in enumerate((first, second))
        ]
        stream = [*reports, *_distractor_stream(rng, actors[1:], distractor_events)]
        check = _event(
            obj, "settle", SETTLE_TEMPLATE.format(obj=obj, loc=settled), 0, 2, dst=settled
        )
        stream.append(check)
        out.append(
            _case(
                case_id=f"alfrev-conflict-{k:03d}",
                probe="conflict",
                k=k,
                seed=seed,
                L=1,
                d=None,
                inv=inv,
                target=target,
                stream=stream,
                gold=settled,
                candidates=(first, second),
                pre_query_at=len(stream) - 1,
            )
        )
    return out


def single_revision(cases: Iterable[Case], rewrites: Mapping[str, str]) -> list[Case]:
    """B.2's single-revision variant: each L=1 case whose target update has a kept rewrite
    (case id -> the two-step text that passed the verifier), with that text in its place.

    Cases without a rewrite are dropped, as the paper keeps a rewrite only if the verifier
    recovers the destination. Ids become ``alfrev-single-{k:03d}``; the evidence is otherwise
    identical, so the raw, commit and reconstruction arms see the same pool."""
    out = []
    for case in cases:
        if case.probe != "chains" or case.L != 1:
            raise ValueError(f"{case.id}: the single-revision variant takes L=1 chain cases")
        text = rewrites.get(case.id)
        if text is None:
            continue
        new_id = f"alfrev-single-{case.index:03d}"
        stream = []
        for e in case.events:
            e = {k: v for k, v in e.items() if k not in ("id", "arrival")}
            if e["chain"] == 0 and e["kind"] == "update":
                e.update(kind="rewritten_update", text=text)
            stream.append(e)
        events = _finalize(new_id, stream)
        out.append(
            replace(
                case,
                id=new_id,
                probe="single_revision",
                events=events,
                target_event_ids=[e["id"] for e in events if e["chain"] == 0],
            )
        )
    return out


def verifier_accepts(answer: str, destination: str) -> bool:
    """Whether a verifier's answer recovers `destination`: the whole name, case-insensitive,
    and no other numbered instance of it ("cabinet 1" is not recovered by "cabinet 10")."""
    pattern = rf"(?<![\w]){re.escape(destination.lower())}(?![\w])"
    return re.search(pattern, " ".join(answer.lower().split())) is not None


def load_rewrites(path: str | Path = OFFLINE_REWRITES) -> dict[str, str]:
    """case id -> rewritten update, from a JSONL file of {"case_id", "rewrite", ...} rows."""
    rows = Path(path).read_text(encoding="utf-8").splitlines()
    return {r["case_id"]: r["rewrite"] for r in map(json.loads, filter(str.strip, rows))}


# ---------------------------------------------------------------------------------------------
# Harness form
# ---------------------------------------------------------------------------------------------


def to_episodes(cases: Iterable[Case], pre_queries: bool = True) -> list[Episode]:
    """Harness episodes: one per case (all events, the final question, golds=(gold,)), plus,
    with `pre_queries`, one ``{id}-pre`` episode per retraction / conflict case holding the
    events before ``pre_query_index`` and the pre-retraction (v2) / pre-resolution question
    (golds = both candidates, ``meta["expect"] == "conflict"``)."""
    episodes = []
    for case in cases:
        events = tuple(
            Event(e["id"], e["text"], meta={k: v for k, v in e.items() if k not in ("id", "text")})
            for e in case.events
        )
        meta = {
            "probe": case.probe,
            "L": case.L,
            "d": case.d,
            "object": case.object,
            "key": case.key,
            "record_source": case.record_source,
            "scene": case.scene,
            "target_event_ids": list(case.target_event_ids),
            "intermediate_locations": list(case.intermediate_locations),
            "distractor_locations": list(case.distractor_locations),
            "candidates": list(case.candidates),
        }
        final = Question(
            case.id, case.question, (case.gold,), meta={**meta, "phase": "final", "expect": "value"}
        )
        episodes.append(Episode(case.id, events, (final,)))
        if pre_queries and case.pre_query_index is not None:
            conflict = case.probe == "conflict"
            golds = tuple(case.candidates) if conflict else (case.pre_gold or "",)
            phase = "pre_resolution" if conflict else "pre_retraction"
            expect = "conflict" if conflict else "value"
            pre = Question(
                f"{case.id}-pre",
                case.question,
                golds,
                meta={**meta, "phase": phase, "expect": expect},
            )
            episodes.append(Episode(f"{case.id}-pre", events[: case.pre_query_index], (pre,)))
    return episodes


def dumps(cases: Iterable[Case]) -> str:
    """JSON lines, one case per line, keys sorted, no timestamps: same cases, same bytes."""
    return "".join(
        json.dumps(c.to_json(), sort_keys=True, ensure_ascii=False) + "\n" for c in cases
    )


def read_cases(path: str | Path) -> list[Case]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Case.from_json(json.loads(line)) for line in lines if line.strip()]


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------

EPILOG = """\
examples:
  python -m benchmarks.alfworld_revision --L 8 --seed 42 --out alfrev_L8.jsonl
  python -m benchmarks.alfworld_revision --probe retraction --d 32 --out retract_d32.jsonl
  python -m benchmarks.alfworld_revision --probe conflict --out conflict.jsonl
  python -m benchmarks.alfworld_revision --probe single --out single.jsonl   # offline rewrites
  python -m benchmarks.alfworld_revision --L 4 --games ~/alfworld/json_2.1.1/valid_seen --out x

Without --games, records are built from the ALFWorld scene inventories shipped in
benchmarks/data/alfworld; with it, from the inReceptacle facts of the games found there
(ALFWorld's own selection: 140 games on valid_seen). Each line records which in
"record_source". The same arguments always give byte-identical output.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.alfworld_revision",
        description="Generate ALFWorld-Revision cases (paper §4.2, Appendices B.2-B.3) as JSON "
        "lines, one case per line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--probe",
        choices=("chains", "retraction", "conflict", "single"),
        default="chains",
        help="chains: B.2 revision chains (Table 6); retraction: B.3 (Table 8); conflict: "
        "§4.2.3 contest/resolve; single: the single-revision variant (default: chains)",
    )
    parser.add_argument(
        "--L", type=int, metavar="L", help="moves per chain for --probe chains: 1, 2, 4 or 8"
    )
    parser.add_argument(
        "--d",
        type=int,
        metavar="D",
        help="distractor events between the erroneous update and the retraction "
        "for --probe retraction: 0 or 32",
    )
    parser.add_argument(
        "--cases",
        type=int,
        default=DEFAULT_CASES,
        metavar="N",
        help=f"cases to generate (default {DEFAULT_CASES})",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"generation seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--distractors",
        type=int,
        default=DEFAULT_DISTRACTORS,
        metavar="N",
        help=f"distractor objects per case (default {DEFAULT_DISTRACTORS})",
    )
    parser.add_argument(
        "--games",
        metavar="DIR",
        help="ALFWorld game folder(s) to harvest records from (e.g. valid_seen)",
    )
    parser.add_argument(
        "--rewrites",
        metavar="FILE",
        help="JSONL of {case_id, rewrite} for --probe single (default: the "
        "hand-written offline set)",
    )
    parser.add_argument(
        "--out", metavar="FILE", required=True, help="output JSONL file ('-' for stdout)"
    )
    return parser


def _cases_from_args(args: argparse.Namespace) -> list[Case]:
    common = {"seed": args.seed, "distractors": args.distractors, "games_dir": args.games}
    if args.probe != "retraction" and args.d is not None:
        raise ValueError("--d applies to --probe retraction only")
    if args.probe in ("retraction", "conflict") and args.L is not None:
        raise ValueError(f"--L applies to --probe chains and single only, not {args.probe}")
    if args.probe == "chains":
        if args.L is None:
            raise ValueError("--L is required for --probe chains (one of 1, 2, 4, 8)")
        return generate(check_L(args.L), cases=args.cases, **common)
    if args.probe == "single":
        if args.L not in (None, 1):
            raise ValueError(f"L={args.L} is not supported by --probe single; it uses L=1")
        rewrites = load_rewrites(args.rewrites or OFFLINE_REWRITES)
        return single_revision(generate(1, cases=args.cases, **common), rewrites)
    if args.probe == "retraction":
        if args.d is None:
            raise ValueError("--d is required for --probe retraction (0 or 32)")
        if args.d not in SUPPORTED_D:
            raise ValueError(
                f"d={args.d} is not supported; --probe retraction needs --d 0 or --d 32"
            )
        return retraction_probe(args.d, cases=args.cases, **common)
    return conflict_probe(cases=args.cases, **common)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.games is not None and not Path(args.games).is_dir():
        print(
            f"alfworld_revision: error: --games {args.games}: not a folder (expected an ALFWorld "
            "game folder or a folder of them)",
            file=sys.stderr,
        )
        return 2
    try:
        cases = _cases_from_args(args)
    except (AlfworldDataError, ValueError, OSError) as err:
        print(f"alfworld_revision: error: {err}", file=sys.stderr)
        return 2
    text = dumps(cases)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8", newline="\n")
    source = cases[0].record_source if cases else "-"
    print(
        f"alfworld_revision: {len(cases)} {args.probe} cases ({source}) -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
