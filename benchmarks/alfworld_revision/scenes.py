"""ALFWorld's vocabulary and scene inventories: where a case's chains can happen.

Receptacle rules (which object types a receptacle may hold, from ALFWorld's constants), THOR ids
in ALFWorld's PDDL spelling and readable names as ALFWorld prints them, the `Inventory` of one
scene or game (its receptacles, objects and the rule for admissible moves), and the per-FloorPlan
inventories built from the layouts shipped in ``benchmarks/data/alfworld`` (see SOURCES.md
there), which are used when no real game folder is given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from benchmarks.alfworld_revision.spec import DATA_DIR, SCENE_MIN_LOCATIONS, SCENE_SOURCE

# alfworld/gen/constants.py reuses the TableTop rule for these three after its literal dict
# (that statement is not a literal, so it is missing from the extracted vocabulary).
TABLE_ALIASES = ("DiningTable", "CoffeeTable", "SideTable")


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


@dataclass(frozen=True)
class Inventory:
    """One ALFWorld scene's chain locations and movable objects.

    ``receptacles`` holds (readable name, THOR type) for every receptacle a chain may use;
    ``objects`` holds (readable name, THOR type); ``starts`` gives an object's real location
    when the inventory comes from a game (empty for scene inventories, whose starts are drawn)
    and ``instances`` the in-game instance that sits there ("alarmclock 1"); ``preferred`` is
    the game's task object, the target whenever the game places it. ``rule`` says which
    locations an object may be moved to (see `LOCATION_RULES`); ``vocabulary`` is the split's
    receptacle names, used only under the "split-vocabulary" rule."""

    label: str
    source: str
    receptacles: tuple[tuple[str, str], ...]
    objects: tuple[tuple[str, str], ...]
    starts: tuple[tuple[str, str], ...] = ()
    instances: tuple[tuple[str, str], ...] = ()
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

    def instance_of(self, obj: str) -> str | None:
        return dict(self.instances).get(obj)


# Which receptacles a chain may move an object to, strictest first. Scene inventories always
# use the first (their scenes are chosen to allow it); a real game falls back down the list
# only when it cannot cast the case otherwise. On valid_seen's 140 games, with the task object
# as the target, the chains probe needs the second rule in 1/2/10/64 games at L=1/2/4/8 and the
# third in 2 games at L=8 (they have 7 receptacles: 8 moves need 9 distinct locations); see
# docs/alfworld_revision.md. B.2 itself draws the "location and object vocabulary for chain
# construction" from the split.
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
