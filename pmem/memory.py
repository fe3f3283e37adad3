"""`Memory`: the typed operations, rollback, materialization and queries of P-Mem.

Every operation is planned here (arguments and preconditions checked, `InvalidOperation` on
failure), written to the append-only log (`pmem.store`) and then applied to the derived graph
(`pmem.state`). Reopening a store replays its log, so a persisted memory and an in-memory one
that saw the same operations are equal by construction; `check()` verifies it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from pmem.graph import (
    ALTERNATIVE,
    CONTESTED,
    CURRENT,
    HEAD,
    NEVER_HELD,
    STALE,
    UNFOUNDED,
    Cell,
    Evidence,
    InvalidOperation,
    TimeLike,
    Version,
    iso,
    opt_time,
    to_time,
)
from pmem.invariants import check_state, fingerprint
from pmem.patch import Decision, Patch, decide, repeats_head
from pmem.render import render as render_cells
from pmem.state import State, V
from pmem.store import Entry, MemoryLog, SQLiteLog


@dataclass(frozen=True, slots=True)
class Applied:
    """The outcome of `Memory.apply`: the controller's decision and the version it produced
    (or the head after it, for operations that create none)."""

    decision: str
    key: str
    version: str | None
    forced: bool = False


@dataclass(frozen=True, slots=True)
class Citation:
    """One recorded dependency (`Memory.cite`): outside `item` rests on `version`, whose
    `status` now is current (it still heads its cell), stale (replaced since: the world moved
    on), unfounded (contradicted or revoked: it never held) or contested (an open
    alternative)."""

    item: str
    version: str
    status: str  # current | stale | unfounded | contested


T = TypeVar("T")
P = ParamSpec("P")
#: the evidence of an operation: an evidence id (`observe`), several, or none
EvidenceIds = str | Iterable[str] | None
#: how far ahead of the machine's clock an explicit `at=` may lie (clock skew between machines)
MAX_AHEAD = dt.timedelta(minutes=5)


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _writes(method: Callable[Concatenate[Memory, P], T]) -> Callable[Concatenate[Memory, P], T]:
    """Run a writing operation as one transaction (`Memory._transaction`)."""

    @functools.wraps(method)
    def write(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> T:
        if self._depth or self._log.path is None:  # inside a transaction, or nothing to share
            return method(self, *args, **kwargs)
        with self._transaction():
            return method(self, *args, **kwargs)

    return write


class Memory:
    """A provenance-graph memory: one current value per key, everything displaced retained.

    `Memory()` lives in memory; `Memory(path)` persists to an SQLite file and reopening it
    restores exactly the same state. `clock` supplies recorded times when an operation is not
    given `at=` (tests and replays pin it).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], dt.datetime] = _utcnow,
    ):
        """Open a memory: in memory (`path` None), or the P-Mem SQLite store at `path`, whose
        log is replayed so the state is exactly what was written. `clock` gives the recorded
        time of an operation called without `at=`."""
        self._log: MemoryLog | SQLiteLog = MemoryLog() if path is None else SQLiteLog(path)
        self._clock = clock
        self._depth = 0
        self._where = self._log.path or "memory"
        self._state = State.replay(self._log.entries(), self._where)

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def path(self) -> str | None:
        """The SQLite file this memory persists to, or None for an in-memory one (which is
        gone when the object is)."""
        return self._log.path

    def close(self) -> None:
        """Close the store file (a no-op in memory). Every operation is committed as it
        returns (a batch at its end), so closing loses nothing; a closed store is reopened with
        `Memory(path)`."""
        self._log.close()

    def __enter__(self) -> Memory:
        """`with Memory(path) as m:` closes the store file on the way out, error or not."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the store (`close`); an exception propagates."""
        self.close()

    def __repr__(self) -> str:
        """`<Memory PATH: N current keys, M versions>`: where it lives and how much it holds."""
        s = self._state
        where = self.path or "in memory"
        return f"<Memory {where}: {len(s.head)} current keys, {len(s.versions)} versions>"

    @contextlib.contextmanager
    def batch(self) -> Iterator[Memory]:
        """One transaction for many operations (bulk ingest). On an exception nothing inside the
        batch is kept, in the file or in memory, and the exception propagates."""
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        with self._transaction(announce=True):
            yield self

    def _begin(self, announce: bool = False) -> None:
        """Start a write transaction on the current log. Another `Memory` or process may have
        written since this one last looked: then the state is derived again, inside the write
        lock, so no operation is ever planned on a stale view (its preconditions, its ids)."""
        if self._log.begin(announce):
            self._state = State.replay(self._log.entries(), self._where)

    @contextlib.contextmanager
    def _transaction(self, announce: bool = False) -> Iterator[None]:
        """One transaction: a batch, or one write of a persisted store outside a batch
        (`_writes` decides), planned on the current log (`_begin`). On an exception the log is
        rolled back and the state derived again, unless nothing was appended (a precondition
        that failed first changed nothing)."""
        self._begin(announce)
        self._depth = 1
        planned = self._log.last_seq
        try:
            yield
        except BaseException:
            wrote = self._log.last_seq != planned
            self._log.rollback()
            if wrote:
                self._state = State.replay(self._log.entries(), self._where)
            raise
        else:
            self._log.commit()
        finally:
            self._depth = 0

    # -- evidence -----------------------------------------------------------------------------

    @_writes
    def observe(self, text: str, source: str = "user", at: TimeLike | None = None) -> str:
        """Record a raw observation (an evidence node) and return its id (`e<n>`) for the
        `evidence=` of the operations it justifies: every value can then be traced to what was
        said, by whom (`source`) and when (`at`, default now; see `evidence`)."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidOperation(None, "observe: text must be a non-empty string")
        if not isinstance(source, str) or not source.strip():
            raise InvalidOperation(None, "observe: source must be a non-empty string")
        entry = self._commit("observe", None, {"text": text, "source": source}, at)
        return f"e{entry.seq}"

    def evidence(self, evidence_id: str) -> Evidence:
        """The observation an evidence id (`observe`, `Version.evidence`) names: its text,
        source and recorded time, so a value can be traced to what was said. `KeyError` for an
        unknown (or forgotten) id."""
        try:
            return self._state.evidence[evidence_id]
        except KeyError:
            raise KeyError(f"no evidence {evidence_id!r}") from None

    # -- the six typed operations (Eq. 4, Table 2) ---------------------------------------------
    # Operations that create a version return its id; the others return the id of the cell's
    # head afterwards (None when the cell is left empty).

    @_writes
    def accept(
        self,
        key: str,
        value: str,
        evidence: EvidenceIds = None,
        valid_from: TimeLike | None = None,
        at: TimeLike | None = None,
    ) -> str:
        """New head (active); the incumbent is retyped superseded and kept. Returns the new
        version's id.

        A value the cell already holds is support, not a new version (`pmem.patch.repeats_head`,
        the rule the patch path applies too): the head gains the evidence, a support and a
        confirmation time, `valid_from` is left as it was, and the head's id is returned, so a
        script run twice leaves the history as it was after the first run (a contested head
        stays contested: settle it with `resolve`)."""
        key = _key(key)
        body = self._version_body(key, value, evidence, valid_from)
        head = self._state.head.get(key)
        if head is not None and repeats_head(body["value"], head.value):
            return self.support(key, evidence=body["evidence"], at=at)
        return f"v{self._commit('accept', key, body, at).seq}"

    @_writes
    def _copy_accept(
        self,
        key: str,
        value: str | None,
        evidence: EvidenceIds,
        valid_from: TimeLike | None,
        at: TimeLike | None,
    ) -> str:
        """An accept entry exactly as a log holds it (`pmem.replay.copy_log`): a log written
        before the same-value rule may hold an accept of the head's own value, and its copy must
        derive the same versions."""
        key = _key(key)
        body = self._version_body(key, value, evidence, valid_from)
        return f"v{self._commit('accept', key, body, at).seq}"

    @_writes
    def reject(
        self,
        key: str,
        value: str | None = None,
        evidence: EvidenceIds = None,
        valid_from: TimeLike | None = None,
        at: TimeLike | None = None,
    ) -> str | None:
        """The head was wrong, not outdated. With a value: new head, the incumbent retyped
        contradicted (recorded wrong, so a later rollback never reinstates it); returns the new
        version's id. Without: the head is contradicted and the cell rolls back like `revoke`;
        returns the head's id afterwards (None if empty). Refused on an empty cell, and for a
        value equal to the head's."""
        key = _key(key)
        head = self._head_or_fail(key, "reject")
        if value is None:
            self._not_contested(key, head, "reject without a value")
            body = {"evidence": self._evidence_ids(key, evidence)}
            self._commit("reject", key, body, at)
            return self._head_id(key)
        body = self._version_body(key, value, evidence, valid_from)
        if body["value"] == head.value:
            raise InvalidOperation(
                key, f"reject: the new value {value!r} is the head it would contradict"
            )
        return f"v{self._commit('reject', key, body, at).seq}"

    @_writes
    def contest(
        self,
        key: str,
        value: str,
        evidence: EvidenceIds = None,
        valid_from: TimeLike | None = None,
        at: TimeLike | None = None,
    ) -> str:
        """Attach a competing value as an alternative; the head becomes contested. For a
        genuine conflict nothing settles yet: both stay open (rendered as contested) until
        `resolve`.
        Returns the alternative's id; refused on an empty cell or for a value already on
        offer."""
        key = _key(key)
        head = self._head_or_fail(key, "contest")
        body = self._version_body(key, value, evidence, valid_from)
        taken = [head.value] + [a.value for a in self._state.alternatives.get(key, ())]
        if body["value"] in taken:
            which = "the head" if value == head.value else "an alternative"
            raise InvalidOperation(key, f"contest: {value!r} is already {which}")
        return f"v{self._commit('contest', key, body, at).seq}"

    @_writes
    def resolve(
        self, key: str, value: str, evidence: EvidenceIds = None, at: TimeLike | None = None
    ) -> str:
        """Settle a contested cell: the chosen value (the head's or an alternative's) heads it,
        active, and every other one is contradicted. Returns the head's id; refused unless the
        cell is contested and `value` is on offer."""
        key = _key(key)
        head = self._state.head.get(key)
        if head is None or head.status != CONTESTED:
            state = "empty" if head is None else head.status
            raise InvalidOperation(key, f"resolve needs a contested cell; this one is {state}")
        value = _value(key, value)
        offered = [head.value] + [a.value for a in self._state.alternatives.get(key, ())]
        if value not in offered:
            raise InvalidOperation(
                key,
                f"resolve: {value!r} is neither the head nor an alternative; the contested "
                f"values are {offered}",
            )
        self._commit(
            "resolve", key, {"value": value, "evidence": self._evidence_ids(key, evidence)}, at
        )
        return self._head_id(key)  # type: ignore[return-value]

    @_writes
    def revoke(
        self, key: str, evidence: EvidenceIds = None, at: TimeLike | None = None
    ) -> str | None:
        """Retract the head ("that was a mistake"): it is revoked, with a tombstone, and the
        nearest predecessor that held reopens (rollback along the supersedes chain, §3.3), else
        the cell is empty. Returns the head's id afterwards (None if empty); refused on an empty
        or contested cell."""
        key = _key(key)
        head = self._head_or_fail(key, "revoke")
        self._not_contested(key, head, "revoke")
        self._commit("revoke", key, {"evidence": self._evidence_ids(key, evidence)}, at)
        return self._head_id(key)

    @_writes
    def support(self, key: str, evidence: EvidenceIds = None, at: TimeLike | None = None) -> str:
        """The paper's noop: the head gains a supported-by edge, a support count and a
        confirmation time (what `unconfirmed` reads); no version is created. Returns the head's
        id; `InvalidOperation` on an empty cell."""
        key = _key(key)
        self._head_or_fail(key, "support")
        self._commit("support", key, {"evidence": self._evidence_ids(key, evidence)}, at)
        return self._head_id(key)  # type: ignore[return-value]

    def confirm(self, key: str, evidence: EvidenceIds = None, at: TimeLike | None = None) -> str:
        """`support` under the field report's name: "a short confirms reading" is a support
        with a time, which `unconfirmed` then no longer flags. Returns the head's id."""
        return self.support(key, evidence=evidence, at=at)

    # -- the patch interface (§3.3) -----------------------------------------------------------

    @_writes
    def apply(self, patch: Patch | dict[str, Any], hard_commit: bool = False) -> Applied:
        """The patch interface (§3.3): classify a patch (a `Patch` or its dict) against the
        head with `pmem.patch.decide` and run the typed operation it chose; a value the head
        already holds is support (`pmem.patch.repeats_head`). Returns `Applied`: the decision
        and the version it produced (or the head after it). A stale or inapplicable patch raises
        `InvalidOperation`, unless `hard_commit`, which then installs its new value as an
        accept (`Applied.forced`)."""
        p = patch if isinstance(patch, Patch) else Patch.from_dict(patch)
        key = _key(p.key)
        head = self._state.head.get(key)
        d = decide(p, head.id if head else None, head.value if head else None, hard_commit)
        try:
            return Applied(d.decision, key, self._run(key, d, p))
        except InvalidOperation:
            if not (hard_commit and p.new_value is not None and d.op != "accept"):
                raise
        if head is not None and repeats_head(p.new_value, head.value):
            d = Decision("support", "support", None)  # forced or not, the same-value rule
        else:
            d = Decision("create" if head is None else "accept", "accept", p.new_value)
        return Applied(d.decision, key, self._run(key, d, p), forced=True)

    def _run(self, key: str, d: Decision, p: Patch) -> str | None:
        if d.op in ("accept", "reject", "contest"):
            return getattr(self, d.op)(
                key, d.value, evidence=p.evidence, valid_from=p.valid_from, at=p.at
            )
        if d.op == "resolve":
            return self.resolve(key, d.value, evidence=p.evidence, at=p.at)  # type: ignore[arg-type]
        return getattr(self, d.op)(key, evidence=p.evidence, at=p.at)

    # -- materialization (§3.4, A.3) ----------------------------------------------------------

    def cell(self, key: str) -> Cell:
        """The materialized view of `key` (§3.4): its current value and status first, then
        the open alternatives and the closed history behind it. A key never written (or
        forgotten) is an empty cell, not an error."""
        return self._state.cell(_key(key))

    def versions(self, key: str) -> list[Version]:
        """Every version the key ever had (unless forgotten), in arrival order, with its
        status now: the full provenance of one cell, for audit and for `render`'s history.
        Empty for a key never written."""
        key = _key(key)
        vt = self._state.valid_to(key)
        return [self._state.snapshot(v, vt) for v in self._state.by_key.get(key, ())]

    def version(self, version_id: str) -> Version:
        """One version by id (as `accept` and the other operations return it, or a
        `Version.supersedes` link), whatever its status now; `KeyError` for an unknown id."""
        try:
            return self._state.snapshot(self._state.versions[version_id])
        except KeyError:
            raise KeyError(f"no version {version_id!r}") from None

    def keys(self) -> list[str]:
        """Every key with at least one version, in order of first arrival, including keys
        whose cell is empty now (revoked to nothing); `frontier` has only the non-empty ones."""
        return list(self._state.by_key)

    def frontier(self) -> list[Cell]:
        """The active frontier (§3.4): one cell per non-empty key, in order of first arrival;
        what a reader is shown by default (`render()` with no keys)."""
        return [self._state.cell(k) for k in self._state.by_key if k in self._state.head]

    def render(
        self, keys_or_cells: Iterable[str | Cell] | None = None, disclose: Iterable[str] = ()
    ) -> str:
        """Value-first text for a reader (§3.4): one `key = value` line per cell (the
        frontier by default; a key, a cell, or several), with ` (contested)` marked. `disclose`
        adds "support", "alternatives" and/or "history" only when asked, so the current value
        is never buried under its provenance."""
        if keys_or_cells is None:
            cells: Iterable[Cell] = self.frontier()
        elif isinstance(keys_or_cells, str | Cell):
            cells = [keys_or_cells if isinstance(keys_or_cells, Cell) else self.cell(keys_or_cells)]
        else:
            cells = [c if isinstance(c, Cell) else self.cell(c) for c in keys_or_cells]
        return render_cells(cells, disclose)

    # -- time (field report: valid time vs recorded time) -------------------------------------

    def as_of(
        self, key: str, valid_at: TimeLike | None = None, recorded_at: TimeLike | None = None
    ) -> Version | None:
        """`valid_at=D`: the version that held on D, by effective dates along the current chain.
        `recorded_at=D`: the head memory believed on D, replayed from the log. Both: what memory
        believed on `recorded_at` about `valid_at`. Neither: the current head."""
        key = _key(key)
        state = self._state
        if recorded_at is not None:
            until = to_time(recorded_at, "recorded_at")
            state = State.replay(e for e in self._entries_of(key) if e.at <= until)
        chain = state.chain(key)
        if valid_at is not None:
            when = to_time(valid_at, "valid_at")
            chain = [v for v in chain if v.effective_from <= when]
        if not chain:
            return None
        if recorded_at is None:
            return self._state.snapshot(chain[0])
        return state.snapshot(chain[0])

    def unconfirmed(self, since: TimeLike | dt.timedelta) -> list[Cell]:
        """Heads neither admitted nor confirmed since `since` (a time, or a timedelta back from
        now): the field report's "flag a chain head not confirmed within an agreed interval"."""
        cutoff = (
            self._clock() - since if isinstance(since, dt.timedelta) else to_time(since, "since")
        )
        return [
            self._state.cell(v.key) for v in self._state.head.values() if v.confirmed_at < cutoff
        ]

    # -- citations (field report: stale vs unfounded dependants) ------------------------------

    @_writes
    def cite(self, item: str, version_id: str, at: TimeLike | None = None) -> None:
        """Record that an outside item (a plan, a bet, a derived answer) rests on a version,
        so that when the version is replaced or retracted `citations` / `citation_status` tell
        the item it is stale or unfounded. Refused for an unknown version."""
        if not isinstance(item, str) or not item.strip():
            raise InvalidOperation(None, "cite: item must be a non-empty string")
        v = self._state.versions.get(version_id)
        if v is None:
            raise InvalidOperation(None, f"cite: no version {version_id!r}")
        self._commit("cite", v.key, {"item": item, "version": version_id}, at)

    def citations(self, item: str | None = None) -> list[Citation]:
        """What `item` cites (every item's citations when None), each with the cited version's
        status now: current, stale, unfounded or contested (`Citation`)."""
        items = (
            self._state.citations if item is None else {item: self._state.citations.get(item, [])}
        )
        return [
            Citation(i, vid, _citation_status(self._state.versions[vid].status))
            for i, vids in items.items()
            for vid in vids
        ]

    def citation_status(self, item: str) -> str:
        """The worst status among what `item` cites: unfounded > stale > contested > current;
        one word for "can this plan still be trusted?". `KeyError` if `item` cites nothing."""
        cites = self.citations(item)
        if not cites:
            raise KeyError(f"{item!r} cites nothing")
        order = [UNFOUNDED, STALE, "contested", CURRENT]
        return min((c.status for c in cites), key=order.index)

    # -- privacy (Appendix G) -----------------------------------------------------------------

    def forget(self, key: str) -> int:
        """Hard delete, for privacy (Appendix G), the one exception to "nothing admitted is
        deleted": every log entry of the key, the evidence only it used and citations of its
        versions go, in memory and on disk (the SQLite file is scrubbed). Only a hash of the key
        is logged. Returns the number of log entries removed; refused for an unknown key."""
        key = _key(key)
        with self.batch():  # planned and applied under the write lock, on the current log
            if key not in self._state.by_key:
                raise InvalidOperation(key, "forget: no such key")
            mine = self._entries_of(key)
            used_here = {e for entry in mine for e in entry.body.get("evidence", ())}
            used_elsewhere = {
                e
                for k, versions in self._state.by_key.items()
                if k != key
                for v in versions
                for e in v.evidence
            }
            orphans = {int(e[1:]) for e in used_here - used_elsewhere}
            drop = {e.seq for e in mine} | orphans
            digest = hashlib.sha256(key.encode()).hexdigest()
            self._log.delete(drop)
            self._commit("forget", None, {"key_sha256": digest, "entries": len(drop)}, None)
            self._state = State.replay(self._log.entries(), self._where)
        if isinstance(self._log, SQLiteLog):
            self._log.scrub()  # outside the transaction: after the commit
        return len(drop)

    # -- validation ---------------------------------------------------------------------------

    def check(self) -> list[str]:
        """The validator: every invariant of the graph and the store (one head per key,
        supersedes edges backward and acyclic, ids never reused, every edge resolves, the state
        equal to a fresh replay of the log, the SQLite file intact). [] when all hold, else one
        line per problem (a log that does not replay is one such line, not an exception)."""
        problems: list[str] = []
        if isinstance(self._log, SQLiteLog):
            problems += self._log.integrity()
        try:
            replayed = State.replay(self._log.entries(), self._where)
        except Exception as err:  # a corrupt log is a finding, not a crash of the validator
            return [*problems, f"log does not replay: {err}"]
        problems += check_state(self._state, self._log.last_seq)
        if fingerprint(replayed) != fingerprint(self._state):
            problems.append("derived state differs from a fresh replay of the log")
        return problems

    def stats(self) -> dict[str, int]:
        """Counts for a glance or a log line: keys ever written, current (non-empty) keys,
        versions, evidence nodes, typed operations and log entries."""
        s = self._state
        return {
            "keys": len(s.by_key),
            "current": len(s.head),
            "versions": len(s.versions),
            "evidence": len(s.evidence),
            "operations": len(s.operations),
            "log_entries": sum(1 for _ in self._log.entries()),
        }

    def entries(self) -> list[Entry]:
        """The raw operation log, oldest first (for audit and export): `pmem.store.Entry`
        records (seq, at, op, key, body), the single source of truth every view is derived from;
        `copy_log` replays them into another store."""
        return list(self._log.entries())

    # -- internals ----------------------------------------------------------------------------

    def _commit(self, op: str, key: str | None, body: dict[str, Any], at: TimeLike | None) -> Entry:
        last = self._state.last_at
        if at is None:
            # an ordinary write is recorded now, and never before the last operation: a clock
            # behind the store's recorded time (an entry from a machine ahead of this one, a
            # clock set back) must not lock the store
            now = self._clock()
            when = now if last is None or now >= last else last
        else:
            when = to_time(at, "at")
        if at is not None and when > _utcnow() + MAX_AHEAD:
            # recorded time only moves forward: an entry dated ahead would date every later
            # ordinary write after it
            raise InvalidOperation(
                key,
                f"at={when.isoformat()} is in the future (more than "
                f"{int(MAX_AHEAD.total_seconds() // 60)} minutes ahead of this machine's clock); "
                "a recorded time says when the memory learned it",
            )
        if last is not None and when < last:
            raise InvalidOperation(
                key,
                f"at={when.isoformat()} precedes the last recorded operation "
                f"({last.isoformat()}); recorded time only moves forward",
            )
        entry = Entry(self._log.allocate(), when, op, key, body)
        self._log.append(entry)
        self._state.apply(entry)
        return entry

    def _entries_of(self, key: str) -> list[Entry]:
        return list(self._log.entries(key))

    def _version_body(
        self, key: str, value: object, evidence: EvidenceIds, valid_from: TimeLike | None
    ) -> dict[str, Any]:
        return {
            "value": _value(key, value),
            "evidence": self._evidence_ids(key, evidence),
            "valid_from": iso(opt_time(valid_from, "valid_from")),
        }

    def _evidence_ids(self, key: str, evidence: EvidenceIds) -> list[str]:
        if evidence is None:
            return []
        ids = [evidence] if isinstance(evidence, str) else list(evidence)
        for e in ids:
            if not isinstance(e, str) or e not in self._state.evidence:
                raise InvalidOperation(
                    key, f"unknown evidence id {e!r} (record it with observe() first)"
                )
        return ids

    def _head_or_fail(self, key: str, op: str) -> V:
        head = self._state.head.get(key)
        if head is None:
            raise InvalidOperation(key, f"{op} needs a current value, but the cell is empty")
        return head

    def _not_contested(self, key: str, head: V, what: str) -> None:
        if head.status == CONTESTED:
            alts = [a.value for a in self._state.alternatives.get(key, ())]
            raise InvalidOperation(
                key,
                f"{what} on a contested cell (head {head.value!r}, alternatives {alts}): "
                "settle it with resolve() first",
            )

    def _head_id(self, key: str) -> str | None:
        head = self._state.head.get(key)
        return head.id if head else None


# ---------------------------------------------------------------------------------------------


def _key(key: object) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidOperation(
            key if isinstance(key, str) else None,
            f"a key must be a non-empty string, not {key!r}",
        )
    if "\n" in key or "\r" in key:
        raise InvalidOperation(key, "a key must fit on one line")
    return key


def _value(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidOperation(key, f"a value must be a non-empty string, not {value!r}")
    return value


def _citation_status(status: str) -> str:
    if status in HEAD:
        return CURRENT
    if status == ALTERNATIVE:
        return "contested"
    if status in NEVER_HELD:
        return UNFOUNDED
    return STALE
