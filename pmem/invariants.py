"""The validator's rules: every invariant `Memory.check()` enforces on a derived state, and a
fingerprint of a state to compare it with a fresh replay of the log.

Kept apart from `pmem.memory` because they judge a state rather than change one: the rules of
the design contract (at most one head per key; supersedes edges strictly backward within a key;
every edge resolves; ids never reused) and of the field report's validator.
"""

from __future__ import annotations

from typing import Any

from pmem.graph import ACTIVE, ALTERNATIVE, CONTESTED, HEAD, OPEN, REVOKED, STATUSES, SUPERSEDED
from pmem.state import State


def fingerprint(state: State) -> tuple[Any, ...]:
    return (
        sorted(
            (
                v.id,
                v.key,
                v.value,
                v.status,
                v.supersedes,
                v.alternative_of,
                tuple(v.evidence),
                v.support,
                v.closed_by,
                v.tombstone,
                v.valid_from,
                v.recorded_at,
                v.confirmed_at,
            )
            for v in state.versions.values()
        ),
        sorted((k, v.id) for k, v in state.head.items()),
        sorted(state.evidence.values(), key=lambda e: e.id),
        sorted(state.tombstones.items()),
        sorted((k, tuple(v)) for k, v in state.citations.items()),
    )


def _num(node_id: str) -> int:
    return int(node_id.lstrip("veopt"))


def check_state(s: State, last_seq: int) -> list[str]:
    """The invariants of the contract (docs/contract.md) and the field report's validator."""
    out: list[str] = []
    ids = [*s.versions, *s.evidence, *s.operations, *s.tombstones]
    if len(ids) != len(set(ids)):
        out.append("a node id is used twice")
    out += [
        f"{i}: id above the log's last sequence number {last_seq}"
        for i in ids
        if _num(i) > last_seq
    ]
    for key, versions in s.by_key.items():
        heads = [v for v in versions if v.status in HEAD]
        if len(heads) > 1:
            out.append(f"{key!r}: {len(heads)} heads ({', '.join(v.id for v in heads)})")
        head = s.head.get(key)
        if (head.id if head else None) != (heads[0].id if heads else None):
            out.append(f"{key!r}: head index disagrees with statuses")
        alts = [v for v in versions if v.status == ALTERNATIVE]
        if head is not None and (head.status == CONTESTED) != bool(alts):
            out.append(
                f"{key!r}: head {head.id} is {head.status} with {len(alts)} open alternative(s)"
            )
        for v in versions:
            if v.status not in STATUSES:
                out.append(f"{v.id}: unknown status {v.status!r}")
            if v.key != key:
                out.append(f"{v.id}: filed under {key!r} but its key is {v.key!r}")
            for name in ("supersedes", "alternative_of"):
                target = getattr(v, name)
                if target is None:
                    continue
                t = s.versions.get(target)
                if t is None:
                    out.append(f"{v.id}: {name} edge to missing {target}")
                elif t.key != v.key or t.seq >= v.seq:
                    out.append(
                        f"{v.id}: {name} edge to {target} does not point backward within its key"
                    )
            if v.status == ALTERNATIVE and (head is None or v.alternative_of != head.id):
                out.append(f"{v.id}: open alternative not attached to the head of {key!r}")
            if v.status not in OPEN and v.closed_by is None:
                out.append(f"{v.id}: {v.status} but nothing closed it")
            if v.status == REVOKED and (
                v.tombstone is None or s.tombstones.get(v.tombstone) != v.id
            ):
                out.append(f"{v.id}: revoked without a tombstone that revokes it")
            if v.status == SUPERSEDED and v.closed_by not in s.versions:
                out.append(f"{v.id}: superseded by missing {v.closed_by}")
            out += [
                f"{v.id}: supported-by edge to missing {e}"
                for e in v.evidence
                if e not in s.evidence
            ]
    for tid, vid in s.tombstones.items():
        if vid not in s.versions:
            out.append(f"{tid}: revokes missing {vid}")
    for item, vids in s.citations.items():
        out += [f"citation {item!r}: cites missing {vid}" for vid in vids if vid not in s.versions]
    for key in s.head:
        if key not in s.by_key:
            out.append(f"{key!r}: head of a key with no versions")
    if any(v.status == ACTIVE and s.head.get(v.key) is not v for v in s.versions.values()):
        out.append("an active version is not its key's head")
    return out
