"""The node, edge and status vocabulary of the provenance graph (paper §3.2, Appendix A.1).

Everything here is an immutable snapshot handed to callers; the mutable graph lives in
`pmem.state`, and the operation log that it is derived from lives in `pmem.store`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

# Version statuses. The paper names them twice (§3.4 and A.1) with different spellings; we use the
# §3.4 vocabulary plus `alternative` (A.1), and the contract (docs/contract.md) fixes this set.
ACTIVE = "active"
CONTESTED = "contested"
ALTERNATIVE = "alternative"
SUPERSEDED = "superseded"
CONTRADICTED = "contradicted"
REVOKED = "revoked"
#: every status a version can have: the contract's vocabulary (docs/contract.md)
STATUSES = (ACTIVE, CONTESTED, ALTERNATIVE, SUPERSEDED, CONTRADICTED, REVOKED)

OPEN = frozenset({ACTIVE, CONTESTED, ALTERNATIVE})
HEAD = frozenset({ACTIVE, CONTESTED})
# A version recorded wrongly (contradicted) or retracted (revoked) never held, so rollback never
# reinstates it and valid-time queries never return it (§3.3 "Rollback along the supersedes chain").
NEVER_HELD = frozenset({CONTRADICTED, REVOKED})

# Cell statuses (the frontier's view of a key).
EMPTY = "empty"
#: every status a cell (`Cell.status`) can have: its head's, or empty
CELL_STATUSES = (ACTIVE, CONTESTED, EMPTY)

# The six typed operations of Eq. 4; `support` is the paper's noop.
#: the six typed operations of Eq. 4, each a `Memory` method; `support` is the paper's noop
OPERATIONS = ("accept", "reject", "contest", "resolve", "revoke", "support")

# Citation statuses (field report: "stale" vs "unfounded" dependants). `contested` goes beyond the
# report: the cited value is an open alternative whose contest has not been settled yet.
CURRENT, STALE, UNFOUNDED = "current", "stale", "unfounded"

# Node id prefixes. Every node created by log entry `seq` is numbered `seq`, so ids are never
# reused as long as sequence numbers are not (SQLite AUTOINCREMENT guarantees that across deletes).
PREFIX = {"evidence": "e", "version": "v", "operation": "op", "tombstone": "t"}


class InvalidOperation(ValueError):
    """An operation whose precondition fails, or malformed input to one.

    `key` names the cell (None when the problem is not about one) and `reason` says what was
    wrong; the message carries both. The write path turns this into a noop, as the paper does.
    """

    def __init__(self, key: str | None, reason: str):
        self.key = key
        self.reason = reason
        super().__init__(f"{key!r}: {reason}" if key is not None else reason)


class StoreError(Exception):
    """A store file that cannot be used: not SQLite, not P-Mem, a newer schema, a corrupt log."""


@dataclass(frozen=True, slots=True, repr=False)
class Evidence:
    """One observation (`Memory.observe`), what an evidence id names (`Memory.evidence`): the
    raw text a value was taken from, who or what said it (`source`) and when memory received
    it (`at`). Versions point at it through their supported-by edges (`Version.evidence`)."""

    id: str
    text: str
    source: str
    at: dt.datetime  # when memory received the observation (recorded time)

    def __repr__(self) -> str:
        return f"Evidence({self.id} from {self.source} at {_when(self.at)}: {_clip(self.text)})"


@dataclass(frozen=True, slots=True, repr=False)
class Version:
    """One (key, value) a cell has held or been offered, with its links.

    `supersedes` and `alternative_of` are the outgoing edges of §3.2; `evidence` the
    supported-by edges; `valid_to` is derived from the successor on the current chain and never
    stored (field report, "Only recorded time").
    """

    id: str
    key: str
    value: str
    status: str
    supersedes: str | None
    alternative_of: str | None
    evidence: tuple[str, ...]
    valid_from: dt.datetime | None
    valid_to: dt.datetime | None
    recorded_at: dt.datetime
    operation: str
    support: int
    confirmed_at: dt.datetime
    closed_by: str | None
    tombstone: str | None

    @property
    def links(self) -> list[str]:
        """Its links to other versions and entries as phrases, in one order: "supersedes v2",
        "alternative of v3", "closed by v4", "tombstone t1" (what `repr` and `pmem show`
        print)."""
        named = (
            ("supersedes", self.supersedes),
            ("alternative of", self.alternative_of),
            ("closed by", self.closed_by),
            ("tombstone", self.tombstone),
        )
        return [f"{phrase} {ref}" for phrase, ref in named if ref]

    def __repr__(self) -> str:
        parts = [f"{self.id} {_name(self.key)}={_clip(self.value)} {self.status}", *self.links]
        if self.support > 1:
            parts.append(f"support {self.support}")
        if self.evidence:
            parts.append(f"{len(self.evidence)} evidence")
        parts.append(f"recorded {_when(self.recorded_at)}")
        if self.valid_from is not None and self.valid_from != self.recorded_at:
            parts.append(f"valid from {_when(self.valid_from)}")
        if self.valid_to is not None:
            parts.append(f"valid to {_when(self.valid_to)}")
        return f"Version({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (times as ISO 8601), for export and `pmem show`."""
        return {
            "id": self.id,
            "key": self.key,
            "value": self.value,
            "status": self.status,
            "supersedes": self.supersedes,
            "alternative_of": self.alternative_of,
            "evidence": list(self.evidence),
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "recorded_at": iso(self.recorded_at),
            "operation": self.operation,
            "support": self.support,
            "confirmed_at": iso(self.confirmed_at),
            "closed_by": self.closed_by,
            "tombstone": self.tombstone,
        }


@dataclass(frozen=True, slots=True, repr=False)
class Cell:
    """The materialized view of one key (§3.4, A.3): the head first, provenance behind it.

    `head` is the current version (None when the cell is empty), `alternatives` the open
    competing values of a contested cell, `history` the closed versions, newest first; `value`,
    `status` and `support` read the head."""

    key: str
    head: Version | None
    alternatives: tuple[Version, ...] = ()
    history: tuple[Version, ...] = field(default=())  # closed versions, newest first

    @property
    def value(self) -> str | None:
        """The current value: the head's, or None when the cell is empty."""
        return self.head.value if self.head else None

    @property
    def status(self) -> str:
        """active, contested or empty (`CELL_STATUSES`)."""
        return self.head.status if self.head else EMPTY

    @property
    def support(self) -> int:
        """How many observations support the head (its admission counts as one); 0 if empty."""
        return self.head.support if self.head else 0

    def __repr__(self) -> str:
        if self.head is None:
            parts = [f"{_name(self.key)} empty"]
        else:
            head = self.head
            parts = [f"{_name(self.key)}={_clip(head.value)} {head.status}", f"head {head.id}"]
            if head.support > 1:
                parts.append(f"support {head.support}")
        if self.alternatives:
            n = len(self.alternatives)
            parts.append(f"{n} alternative{'s' if n > 1 else ''}")
        if self.history:
            parts.append(f"{len(self.history)} in history")
        return f"Cell({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """The cell and its versions as JSON-ready values, for export and `pmem show`."""
        return {
            "key": self.key,
            "value": self.value,
            "status": self.status,
            "support": self.support,
            "head": self.head.to_dict() if self.head else None,
            "alternatives": [v.to_dict() for v in self.alternatives],
            "history": [v.to_dict() for v in self.history],
        }


# ---------------------------------------------------------------------------------------------
# Time. Contract: times accept ISO 8601 strings, dates and datetimes. Internally every time is an
# aware UTC datetime; a date means midnight UTC and a naive datetime is taken as UTC.


#: a time the operations take: an ISO 8601 string, a date (midnight UTC) or a datetime
TimeLike = dt.datetime | dt.date | str


def to_time(value: object, name: str) -> dt.datetime:
    """Normalize a user-supplied time, naming the argument when it cannot be read."""
    if isinstance(value, dt.datetime):
        t = value
    elif isinstance(value, dt.date):
        t = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            t = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidOperation(
                None, f"{name}={value!r} is not an ISO 8601 date or datetime"
            ) from None
    else:
        raise InvalidOperation(
            None,
            f"{name} must be an ISO 8601 string, a date or a datetime, not {type(value).__name__}",
        )
    if t.tzinfo is None:
        return t.replace(tzinfo=dt.UTC)
    return t.astimezone(dt.UTC)


def _clip(text: str, limit: int = 60) -> str:
    """A value or text in a repr: quoted and escaped (so it stays on one line), and cut short."""
    return repr(text) if len(text) <= limit else repr(text[: limit - 1]) + "…"


def _name(key: str) -> str:
    """A key in a repr: bare when it reads unambiguously, quoted otherwise."""
    return key if key.isprintable() and not any(c in key for c in " =,()'\"") else repr(key)


def _when(t: dt.datetime) -> str:
    return t.isoformat(timespec="seconds")


def opt_time(value: object, name: str) -> dt.datetime | None:
    return None if value is None else to_time(value, name)


def iso(t: dt.datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def parse_iso(s: str | None) -> dt.datetime | None:
    """Read back a time this package wrote (always ISO 8601 with an offset)."""
    return None if s is None else dt.datetime.fromisoformat(s)
