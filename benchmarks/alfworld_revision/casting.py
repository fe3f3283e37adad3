"""Randomness, arrival order and casting: who moves where in case k.

Every case draws from its own RNG (`case_rng`), so case k is the same whatever the number of
cases; `merge_queues` is B.2's arrival order; `_setup` picks case k's inventory (a scene, or a
game under the strictest location rule that can cast it) and `_cast` its target and distractor
objects with their starting locations.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from benchmarks.alfworld_revision.games import _game_inventories
from benchmarks.alfworld_revision.scenes import (
    LOCATION_RULES,
    Inventory,
    eligible_scenes,
    scene_inventories,
)
from benchmarks.alfworld_revision.spec import SCENE_MIN_LOCATIONS, AlfworldDataError

T = TypeVar("T")


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
