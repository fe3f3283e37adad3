"""Randomness, arrival order and casting: who moves where in case k.

Every case draws from its own RNG (`case_rng`), so case k is the same whatever the number of
cases; `merge_queues` is B.2's arrival order; `_setup` picks case k's inventory (a scene, or a
game under the strictest location rule that can cast it) and `_cast` its target and distractor
objects with their starting locations. Case k's inventory comes from one of three sources
(`resolve_source`): the shipped valid_seen records (default; case k = game k, at most 140
cases), the scene inventories, or a folder of games (case k = game k mod the number of games).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from benchmarks.alfworld_revision.games import _game_inventories
from benchmarks.alfworld_revision.records import valid_seen_inventories
from benchmarks.alfworld_revision.scenes import (
    LOCATION_RULES,
    Inventory,
    eligible_scenes,
    scene_inventories,
)
from benchmarks.alfworld_revision.spec import (
    DEFAULT_SOURCE,
    SCENE_MIN_LOCATIONS,
    SOURCES,
    VALID_SEEN_RECORDS,
    AlfworldDataError,
)

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
    task_target: bool = True,
) -> list[_Actor]:
    """The target and its distractor objects (distinct types) with their starting locations.

    Scene inventories: a shuffled choice among objects with `SCENE_MIN_LOCATIONS` admissible
    receptacles, starts drawn distinct, whatever the probe (so casts pair across L and probes).
    Games: with `task_target`, the task object is the target whenever the game places it
    (else, or without `task_target`, any object, task object first); the others are the
    distractors, in shuffled order, each kept at its real location if it has ``hops`` (target,
    distractor) admissible locations besides its start; a distractor may not start where the
    target does when ``avoid_target_start``. So a game's record is the same at every L and in
    every probe; only the location rule relaxes (`_setup`)."""
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
    placed = task_target and any(a.name == inv.preferred for a in actors)
    targets = [
        a for a in actors if len(a.others) >= hops[0] and (not placed or a.name == inv.preferred)
    ]
    if not targets:
        what = f"the task object {inv.preferred}" if placed else "no object"
        raise AlfworldDataError(
            f"{inv.label}: {what} has fewer than {hops[0]} admissible receptacles besides its own"
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


def resolve_source(source: str | None, games_dir: str | Path | None) -> str:
    """The source "games" when a folder is given, else `source` (default "valid_seen"); a source
    other than those, or a folder together with another source, is a ValueError."""
    if games_dir is not None:
        if source not in (None, "games"):
            raise ValueError(
                f"source={source!r} and games_dir={games_dir} exclude each other; a games "
                "folder is its own source (leave source unset)"
            )
        return "games"
    if source == "games":
        raise ValueError("source='games' needs games_dir (a folder of ALFWorld games)")
    source = DEFAULT_SOURCE if source is None else source
    if source not in SOURCES:
        raise ValueError(f"source={source!r}; choose one of {', '.join(SOURCES)}")
    return source


def check_case_count(cases: int, source: str) -> None:
    """The valid_seen source has one case per game: asking for more than its 140 is an error,
    not a silent second pass over the same games (a games folder wraps, as documented)."""
    if source == "valid_seen":
        n = len(valid_seen_inventories(VALID_SEEN_RECORDS))
        if cases > n:
            raise ValueError(
                f"cases={cases}: the valid_seen source has {n} games, one case each; ask for "
                f"at most {n} (or use source=scenes, or a games folder)"
            )


def _setup(
    k: int,
    seed: int,
    distractors: int,
    games_dir: str | Path | None,
    hops: tuple[int, int],
    avoid_target_start: bool = False,
    source: str | None = None,
) -> tuple[Inventory, list[_Actor]]:
    """Case k's inventory and cast. The casting RNG depends on (seed, k) only, so a scene
    inventory case has the same scene, objects and starts at every L and in every probe, and a
    game case the same game and target record (under the strictest rule that can cast it)."""
    source = resolve_source(source, games_dir)
    if source == "scenes":
        rng = case_rng(seed, "record", k)
        scenes = eligible_scenes(distractors)
        if not scenes:
            raise ValueError(f"no ALFWorld scene has {1 + distractors} objects to cast")
        inv = scene_inventories()[scenes[rng.randrange(len(scenes))]]
        return inv, _cast(inv, rng, distractors, hops, avoid_target_start)
    if source == "valid_seen":
        games = valid_seen_inventories(VALID_SEEN_RECORDS)
        check_case_count(k + 1, source)
        game = games[k]
    else:
        games = _game_inventories(str(games_dir))
        game = games[k % len(games)]
    # The task object under the strictest rule that casts it, before any other target: only a
    # game where no rule can cast the probe around its task object (2 of 140 in the retraction
    # probe, whose distractors must not start at v1) takes another of its objects.
    failure: AlfworldDataError | None = None
    for task_target in (True, False):
        for rule in LOCATION_RULES:
            inv = replace(game, rule=rule)
            try:
                rng = case_rng(seed, "record", k)
                return inv, _cast(inv, rng, distractors, hops, avoid_target_start, task_target)
            except AlfworldDataError as err:
                failure = failure or err  # the task object's most permissive reason is reported
    assert failure is not None
    raise failure
