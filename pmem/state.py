"""The provenance graph as derived state: replaying log entries in order builds it.

`State.apply` trusts its entry (preconditions were checked when the entry was planned, in
`pmem.memory`), so replaying a store and applying live operations run the same code. The lowering
of each operation onto statuses and edges follows Table 2 and §3.3 of the paper.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterable
from typing import Any

from pmem.graph import (
    ACTIVE,
    ALTERNATIVE,
    CONTESTED,
    CONTRADICTED,
    HEAD,
    NEVER_HELD,
    REVOKED,
    SUPERSEDED,
    Cell,
    Evidence,
    StoreError,
    Version,
    parse_iso,
)
from pmem.store import Entry


class V:
    """A mutable version node. Only `State` changes it; callers get `Version` snapshots."""

    __slots__ = (
        "alternative_of",
        "closed_by",
        "confirmed_at",
        "evidence",
        "id",
        "key",
        "recorded_at",
        "seq",
        "status",
        "supersedes",
        "support",
        "tombstone",
        "valid_from",
        "value",
    )

    def __init__(
        self,
        seq: int,
        key: str,
        value: str,
        status: str,
        at: dt.datetime,
        evidence: list[str],
        valid_from: dt.datetime | None,
    ):
        self.seq = seq
        self.id = f"v{seq}"
        self.key = key
        self.value = value
        self.status = status
        self.supersedes: str | None = None
        self.alternative_of: str | None = None
        self.evidence = evidence
        self.valid_from = valid_from
        self.recorded_at = at
        self.support = 1  # the observation that admitted it is its first support
        self.confirmed_at = at
        self.closed_by: str | None = None
        self.tombstone: str | None = None

    @property
    def effective_from(self) -> dt.datetime:
        return self.valid_from or self.recorded_at


class State:
    """Every node and edge of one memory, indexed for the operations' preconditions."""

    def __init__(self) -> None:
        self.versions: dict[str, V] = {}
        self.by_key: dict[str, list[V]] = {}
        self.head: dict[str, V] = {}
        self.alternatives: dict[str, list[V]] = {}
        self.evidence: dict[str, Evidence] = {}
        self.operations: dict[str, str] = {}  # operation node id -> operation name
        self.tombstones: dict[str, str] = {}  # tombstone id -> revoked version id
        self.citations: dict[str, list[str]] = {}  # outside item -> cited version ids
        self.last_at: dt.datetime | None = None
        self.forgotten = 0

    @classmethod
    def replay(cls, entries: Iterable[Entry], where: str = "memory") -> State:
        """The state the log derives. A row no operation could have written (no key, no value,
        a revoke of an empty cell, a body of the wrong shape: a store edited by hand or by
        another tool) is a `StoreError` naming `where` and the entry, never a raw exception."""
        state = cls()
        for entry in entries:
            try:
                state.apply(entry)
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
                raise StoreError(f"{where}: {_malformed(entry, err)}") from None
            except (AssertionError, StopIteration):
                raise StoreError(f"{where}: {_malformed(entry, None)}") from None
        return state

    # -- the lowering of Table 2 --------------------------------------------------------------

    def apply(self, e: Entry) -> None:
        # recorded time: timezone-aware and never moving backward (the store's own writes
        # keep both; a row that breaks them was written by hand or by another tool)
        if not isinstance(e.at, dt.datetime) or e.at.tzinfo is None:
            raise ValueError(f"its recorded time {e.at!r} has no timezone")
        if self.last_at is not None and e.at < self.last_at:
            raise ValueError(
                f"its recorded time {e.at.isoformat()} precedes the entry before it "
                f"({self.last_at.isoformat()})"
            )
        # what the store's own writes guarantee (`pmem.memory._key`, `_value`)
        if e.key is not None and (
            not isinstance(e.key, str) or not e.key.strip() or "\n" in e.key or "\r" in e.key
        ):
            raise ValueError(f"its key {e.key!r} is not a non-empty one-line string")
        if isinstance(e.body, dict):
            _check_body(e.op, e.body)
            # links the store's own writes only make to what the log already holds
            for eid in e.body.get("evidence", ()):
                if eid not in self.evidence:
                    raise ValueError(f"its evidence {eid!r} is no observation recorded before it")
            cited = e.body.get("version") if e.op == "cite" else None
            if cited is not None and cited not in self.versions:
                raise ValueError(f"it cites {cited!r}, which no entry before it created")
        self.last_at = e.at
        if e.op in _TYPED:
            self.operations[f"op{e.seq}"] = e.op
        getattr(self, "_" + e.op)(e)

    def _observe(self, e: Entry) -> None:
        eid = f"e{e.seq}"
        self.evidence[eid] = Evidence(eid, e.body["text"], e.body.get("source", "user"), e.at)

    def _new(self, e: Entry, status: str) -> V:
        assert e.key is not None
        v = V(
            e.seq,
            e.key,
            e.body["value"],
            status,
            e.at,
            list(e.body.get("evidence", ())),
            parse_iso(e.body.get("valid_from")),
        )
        self.versions[v.id] = v
        self.by_key.setdefault(e.key, []).append(v)
        return v

    def _install(self, e: Entry, incumbent_becomes: str) -> None:
        """accept / reject with a value: the new version heads the cell; every open one closes."""
        v = self._new(e, ACTIVE)
        head = self.head.get(v.key)
        if head is not None:
            v.supersedes = head.id
            head.status = incumbent_becomes
            head.closed_by = v.id
        # Open alternatives of a contested incumbent are displaced by the new value, not judged.
        for alt in self.alternatives.pop(v.key, ()):
            alt.status = SUPERSEDED
            alt.closed_by = v.id
        self.head[v.key] = v

    def _accept(self, e: Entry) -> None:
        self._install(e, SUPERSEDED)

    def _reject(self, e: Entry) -> None:
        if e.body.get("value") is not None:
            self._install(e, CONTRADICTED)
        else:  # §3.3: a reject with no replacement rolls back like revoke, marking contradicted
            self._retract(e, CONTRADICTED)

    def _revoke(self, e: Entry) -> None:
        tid = f"t{e.seq}"
        head = self._retract(e, REVOKED)
        head.tombstone = tid
        self.tombstones[tid] = head.id

    def _retract(self, e: Entry, status: str) -> V:
        """Rollback along the supersedes chain (§3.3): reopen the nearest predecessor that held."""
        assert e.key is not None
        head = self.head.pop(e.key)
        head.status = status
        head.closed_by = f"op{e.seq}"
        head.evidence.extend(e.body.get("evidence", ()))
        previous = self.predecessor(head)
        if previous is not None:
            previous.status = ACTIVE
            previous.closed_by = None
            self.head[e.key] = previous
        return head

    def _contest(self, e: Entry) -> None:
        assert e.key is not None
        head = self.head[e.key]
        alt = self._new(e, ALTERNATIVE)
        alt.alternative_of = head.id
        head.status = CONTESTED
        self.alternatives.setdefault(e.key, []).append(alt)

    def _resolve(self, e: Entry) -> None:
        assert e.key is not None
        head = self.head[e.key]
        value = e.body["value"]
        closed = f"op{e.seq}"
        candidates = [head, *self.alternatives.pop(e.key, ())]
        chosen = next(v for v in candidates if v.value == value)
        for v in candidates:
            if v is not chosen:
                v.status = CONTRADICTED
                v.closed_by = closed
        chosen.status = ACTIVE
        chosen.evidence.extend(e.body.get("evidence", ()))
        self.head[e.key] = chosen

    def _support(self, e: Entry) -> None:
        assert e.key is not None
        head = self.head[e.key]
        head.support += 1
        head.confirmed_at = e.at
        head.evidence.extend(e.body.get("evidence", ()))

    def _cite(self, e: Entry) -> None:
        self.citations.setdefault(e.body["item"], []).append(e.body["version"])

    def _forget(self, e: Entry) -> None:
        self.forgotten += 1

    # -- traversal ----------------------------------------------------------------------------

    def predecessor(self, v: V) -> V | None:
        """The nearest version behind `v` that held: follow supersedes (or, for a promoted
        alternative, the sibling it competed with), skipping what was contradicted or revoked."""
        seen = {v.id}
        while True:
            nxt = v.supersedes or v.alternative_of
            if nxt is None or nxt in seen or nxt not in self.versions:
                return None
            seen.add(nxt)
            v = self.versions[nxt]
            if v.status not in NEVER_HELD:
                return v

    def chain(self, key: str) -> list[V]:
        """The versions that held, newest first: the head and its reinstatable predecessors."""
        head = self.head.get(key)
        out: list[V] = []
        while head is not None:
            out.append(head)
            head = self.predecessor(head)
        return out

    # -- snapshots ----------------------------------------------------------------------------

    def valid_to(self, key: str) -> dict[str, dt.datetime]:
        """valid_to of each version on the current chain: its successor's effective date."""
        chain = self.chain(key)
        return {older.id: newer.effective_from for newer, older in itertools.pairwise(chain)}

    def snapshot(self, v: V, valid_to: dict[str, dt.datetime] | None = None) -> Version:
        return Version(
            id=v.id,
            key=v.key,
            value=v.value,
            status=v.status,
            supersedes=v.supersedes,
            alternative_of=v.alternative_of,
            evidence=tuple(v.evidence),
            valid_from=v.effective_from,
            valid_to=(valid_to if valid_to is not None else self.valid_to(v.key)).get(v.id),
            recorded_at=v.recorded_at,
            operation=f"op{v.seq}",
            support=v.support,
            confirmed_at=v.confirmed_at,
            closed_by=v.closed_by,
            tombstone=v.tombstone,
        )

    def cell(self, key: str) -> Cell:
        versions = self.by_key.get(key, ())
        head = self.head.get(key)
        vt = self.valid_to(key) if len(versions) > 1 else {}
        return Cell(
            key=key,
            head=self.snapshot(head, vt) if head is not None else None,
            alternatives=tuple(self.snapshot(v, vt) for v in self.alternatives.get(key, ())),
            history=tuple(
                self.snapshot(v, vt)
                for v in reversed(versions)
                if v.status not in HEAD and v.status != ALTERNATIVE
            ),
        )


_TYPED = frozenset({"accept", "reject", "contest", "resolve", "revoke", "support"})
# body fields that are text wherever they appear (the store's own writes never leave them empty)
_TEXT_FIELDS = ("value", "text", "source", "item", "version")


def _check_body(op: str, body: dict[str, Any]) -> None:
    """The types the store's own writes give a body's fields; a row edited by hand or by
    another tool that breaks them is refused here rather than failing later in a reader."""
    for name in _TEXT_FIELDS:
        if name not in body or (name == "value" and op == "reject" and body[name] is None):
            continue  # a reject with no replacement writes no value
        field = body[name]
        if not isinstance(field, str) or not field.strip():
            label = "value" if name == "value" else f"{name} field"
            raise ValueError(f"its {label} {field!r} is not a non-empty string")
    evidence = body.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(i, str) for i in evidence):
        raise ValueError(f"its evidence {evidence!r} is not a list of evidence ids")
    when = body.get("valid_from")
    if when is not None:
        if not isinstance(when, str):
            raise ValueError(f"its valid_from {when!r} is not an ISO 8601 time")
        try:
            dt.datetime.fromisoformat(when)
        except ValueError:
            raise ValueError(f"its valid_from {when!r} is not an ISO 8601 time") from None


def _malformed(e: Entry, err: Exception | None) -> str:
    what = f"log entry {e.seq} ({e.op} {e.key!r})"
    if not isinstance(e.body, dict):
        return f"{what} has a body of the wrong shape ({type(e.body).__name__}, not an object)"
    if e.op != "observe" and e.op not in ("cite", "forget") and e.key is None:
        return f"{what} has no key"
    if isinstance(err, KeyError):
        return (
            f"{what} refers to {err.args[0]!r}, which the log does not hold at that point "
            "(no such field in its body, or no current value of the key)"
        )
    if err is None:
        return f"{what} cannot be applied: its value is not on offer, or it has no key"
    return f"{what} cannot be applied: {err}"
