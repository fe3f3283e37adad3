"""The generated cases: B.2's revision chains, B.3's retraction probe, §4.2.3's conflict probe
and the single-revision variant (`generate`, `retraction_probe`, `conflict_probe`,
`single_revision`; each function's docstring gives its protocol). The single-revision rewrite
and verify step runs elsewhere with `REWRITE_PROMPT` and `VERIFY_PROMPT`; a hand-written
offline set ships for tests.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks.alfworld_revision.casting import (
    _Actor,
    _hops,
    _setup,
    case_rng,
    check_case_count,
    merge_queues,
    resolve_source,
)
from benchmarks.alfworld_revision.scenes import Inventory, _natural
from benchmarks.alfworld_revision.spec import (
    CONFLICT_DISTRACTOR_EVENTS,
    DEFAULT_CASES,
    DEFAULT_DISTRACTORS,
    DEFAULT_SEED,
    ERRONEOUS_UPDATE_TEMPLATE,
    KEY_TEMPLATE,
    OFFLINE_REWRITES,
    QUESTION_TEMPLATE,
    REPORT_TEMPLATE,
    RETRACTION_DISTRACTOR_EVENTS,
    RETRACTION_TEMPLATE,
    SETTLE_TEMPLATE,
    STALE_TEMPLATE,
    SUPPORTED_D,
    SUPPORTED_L,
    UPDATE_TEMPLATE,
    AlfworldDataError,
)


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
        record.update(
            game=inv.label, floor_plan=inv.floor_plan, instance=inv.instance_of(target.name)
        )
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


def _check_counts(
    cases: int,
    distractors: int,
    least: int = 0,
    source: str | None = None,
    games_dir: str | Path | None = None,
) -> None:
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 0:
        raise ValueError(f"cases={cases!r} must be a non-negative integer")
    if isinstance(distractors, bool) or not isinstance(distractors, int) or distractors < least:
        raise ValueError(f"distractors={distractors!r} must be an integer >= {least}")
    check_case_count(cases, resolve_source(source, games_dir))


def chain_case(
    L: int,
    k: int,
    *,
    distractors: int = DEFAULT_DISTRACTORS,
    seed: int = DEFAULT_SEED,
    games_dir: str | Path | None = None,
    source: str | None = None,
) -> Case:
    """Case k of the B.2 sweep at chain length L (see `generate`)."""
    check_L(L)
    inv, actors = _setup(k, seed, distractors, games_dir, (L, L), source=source)
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
    source: str | None = None,
) -> list[Case]:
    """Appendix B.2's revision chains: `cases` cases at chain length L (1, 2, 4 or 8).

    Records come from `source`: "valid_seen" (the default: case k is the k-th of the 140
    valid_seen games in sorted order, its task object at its real initial placement; at most
    140 cases), "scenes" (scene inventories, starts drawn) or, with `games_dir`, the games found
    there (case k = game k mod their number).

    Each case: the target object gets a stale record and L moves over distinct locations (L+1
    distinct with the start); `distractors` other objects get their own stale record and L-move
    chain; all chains merge into one arrival order by random draws across per-chain queues.
    The pool is the 1+distractors stale records plus all (1+distractors)*L updates; the
    question is "where is the {object} now?" and the gold the target chain's last location."""
    check_L(L)
    _check_counts(cases, distractors, source=source, games_dir=games_dir)
    return [
        chain_case(L, k, distractors=distractors, seed=seed, games_dir=games_dir, source=source)
        for k in range(cases)
    ]


def retraction_probe(
    d: int,
    cases: int = DEFAULT_CASES,
    seed: int = DEFAULT_SEED,
    distractors: int = DEFAULT_DISTRACTORS,
    games_dir: str | Path | None = None,
    distractor_events: int = RETRACTION_DISTRACTOR_EVENTS,
    source: str | None = None,
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
    _check_counts(cases, distractors, least=1, source=source, games_dir=games_dir)
    moves = math.ceil(distractor_events / distractors) - 1
    out = []
    for k in range(cases):
        inv, actors = _setup(k, seed, distractors, games_dir, (1, moves), True, source)
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
    source: str | None = None,
) -> list[Case]:
    """§4.2.3's contest-and-resolve probe: two reports put the object in two places with no
    recency or authority cue, eight distractor events follow, then a check names one of them.

    Counterbalanced: the report the check confirms arrives first in even cases and second in odd
    ones, so last-write-wins is right in exactly half. Before the check (``pre_query_index``)
    the expected behaviour is a flagged conflict between ``candidates``; after it, ``gold``."""
    _check_counts(cases, distractors, least=1, source=source, games_dir=games_dir)
    if isinstance(distractor_events, bool) or not isinstance(distractor_events, int):
        raise ValueError(f"distractor_events={distractor_events!r} must be an integer")
    moves = max(math.ceil(distractor_events / distractors) - 1, 0)
    out = []
    for k in range(cases):
        inv, actors = _setup(k, seed, distractors, games_dir, (1, moves), source=source)
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


def single_revision(
    cases: Iterable[Case], rewrites: Mapping[str, str | Mapping[str, Any]]
) -> list[Case]:
    """B.2's single-revision variant: each L=1 case whose target update has a kept rewrite
    (case id -> the two-step text that passed the verifier, or its row from a rewrites file),
    with that text in its place.

    Cases without a rewrite are dropped, as the paper keeps a rewrite only if the verifier
    recovers the destination. A row that names the ``original`` update it rewrote must match
    the case's: case ids repeat across record sources and seeds, so a file written for other
    cases is refused rather than applied. Ids become ``alfrev-single-{k:03d}``; the evidence is
    otherwise identical, so the raw, commit and reconstruction arms see the same pool."""
    out = []
    for case in cases:
        if case.probe != "chains" or case.L != 1:
            raise ValueError(f"{case.id}: the single-revision variant takes L=1 chain cases")
        row = rewrites.get(case.id)
        if row is None:
            continue
        text = row if isinstance(row, str) else row["rewrite"]
        original = None if isinstance(row, str) else row.get("original")
        (update,) = [e for e in case.events if e["chain"] == 0 and e["kind"] == "update"]
        if original is not None and original != update["text"]:
            raise AlfworldDataError(
                f"rewrites for {case.id}: written for {original!r}, but this case's update is "
                f"{update['text']!r} (another record source or seed?); regenerate the rewrites "
                "with python -m benchmarks.alfworld_revision.rewrite for these cases"
            )
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


def load_rewrite_rows(path: str | Path = OFFLINE_REWRITES) -> dict[str, dict[str, Any]]:
    """case id -> its row, from a JSONL file of {"case_id", "rewrite", "original", ...} rows
    (the kept rewrites of python -m benchmarks.alfworld_revision.rewrite, or the offline set)."""
    out = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as err:
        raise AlfworldDataError(f"{path}: not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise AlfworldDataError(f"{path}: {err.strerror or err}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise AlfworldDataError(f"{path}: line {number}: not JSON ({err.msg})") from err
        if not isinstance(row, dict) or not {"case_id", "rewrite"} <= set(row):
            raise AlfworldDataError(
                f"{path}: line {number}: expected an object with 'case_id' and 'rewrite'"
            )
        if not isinstance(row["case_id"], str) or not isinstance(row["rewrite"], str):
            raise AlfworldDataError(f"{path}: line {number}: 'case_id' and 'rewrite' are text")
        if row["case_id"] in out:
            raise AlfworldDataError(f"{path}: line {number}: case {row['case_id']!r} again")
        out[row["case_id"]] = row
    return out


def load_rewrites(path: str | Path = OFFLINE_REWRITES) -> dict[str, str]:
    """case id -> rewritten update, from a JSONL file of {"case_id", "rewrite", ...} rows."""
    return {k: r["rewrite"] for k, r in load_rewrite_rows(path).items()}
