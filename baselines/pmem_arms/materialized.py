"""Write-time materialization on natural histories (paper Appendix D, §4.1 "Commit timing").

The LongMemEval headline path decides supersession at read time (B.1); Appendix D commits it at
write time on chat histories and answers from the materialized state alone, so no commitment or
retrieval decision ever sees the question. `MaterializedStateArm` is that arm; its extraction
prompt is ours (A.4 describes it but does not print it) and extends `pmem.write.EXTRACT_PROMPT`
by the status.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from baselines.pmem_arms.state import STATE_HEADER, CellStateArm, NumpyKeyIndex
from benchmarks.runner.arm import Context, Services
from benchmarks.runner.types import Event, Question
from pmem.graph import InvalidOperation
from pmem.identity import SAME_PROMPT, same_attribute
from pmem.write import fact_items

SOURCE = "session"

# A.4: "each fact carries an assertion status in {asserted, hedged, reported, withdrawn}".
STATUSES = ("asserted", "hedged", "reported", "withdrawn")
DEFAULT_STATUS = "asserted"  # A.4: invalid -> asserted
# What a status does to the state (the paper is silent; see `MaterializedStateArm`).
STATUS_OPS_ALLOWED = ("revise", "revoke", "noop")
DEFAULT_STATUS_OPS: dict[str, str] = {
    "asserted": "revise",
    "reported": "revise",
    "hedged": "noop",
    "withdrawn": "revoke",
}
MERGE_MODES = ("high", "low", "confirm", "off")

# Our wording (A.4 describes the prompt, D and A.4 print none): pmem.write.EXTRACT_PROMPT's
# key/value rules verbatim, plus A.4's assertion status, over one session's turns.
EXTRACT_SESSION_PROMPT = """\
Extract every fact stated in the conversation below as a JSON list of \
{{"key": ..., "value": ..., "status": ...}} objects.
- key: a snake_case identifier naming the subject and the attribute, never the value \
(personal_best_5k_time, not personal_best_27_12). The same attribute must always get the same key.
- value: the value copied verbatim from the conversation.
- status: how the conversation holds the fact, one of
  asserted (stated as true),
  hedged (uncertain, hypothetical or only planned),
  reported (passed on from someone or somewhere else),
  withdrawn (taken back or denied).
Keep the facts in the order they appear and do not merge or drop repeated ones.

Conversation:
{text}"""

EXTRACT_SESSION_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "value": {"type": "string"},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        "required": ["key", "value", "status"],
    },
}
# A session is longer than a B.4 chunk (about 2.4k tokens on _s) and yields several facts
# (Appendix E: 0.15-0.18 calls per committed fact), so its reply gets twice
# pmem.write.EXTRACT_MAX_TOKENS. Not the profile's max_tokens, which is the reader's budget.
SESSION_EXTRACT_MAX_TOKENS = 2048


@dataclass(frozen=True, slots=True)
class StatusFact:
    key: str
    value: str
    status: str


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One session of an episode: its id, date, and its turns as one text (the evidence)."""

    id: str
    at: str | None
    text: str


def parse_status_facts(parsed: Any) -> tuple[list[StatusFact], int, int]:
    """Facts from an extraction reply (a list, or an object wrapping one): (facts, dropped
    empty, invalid statuses read as asserted). Keys are normalized as A.2 says."""
    items, dropped = fact_items(parsed)
    facts: list[StatusFact] = []
    invalid = 0
    for key, value, item in items:
        status = str(item.get("status") or "").strip().lower()
        if status not in STATUSES:
            invalid += 1
            status = DEFAULT_STATUS
        facts.append(StatusFact(key, value, status))
    return facts, dropped, invalid


def sessions_of(events: Sequence[Event]) -> list[SessionRecord]:
    """The episode's turns grouped by ``meta["session_id"]``, sessions in date order (ties keep
    arrival order; undated sessions come first), each as ``Session date: ...`` plus its turn lines.
    An event without a session id is a session of its own."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        groups.setdefault(str(event.meta.get("session_id") or event.id), []).append(event)
    # date order; sorted() is stable, so ties and undated sessions keep arrival order
    ordered = sorted(groups.items(), key=lambda group: group[1][0].at or "")
    out: list[SessionRecord] = []
    for sid, turns in ordered:
        first = turns[0]
        date = first.meta.get("date") or first.at
        lines = ([f"Session date: {date}"] if date else []) + [t.text for t in turns]
        out.append(SessionRecord(sid, first.at, "\n".join(lines)))
    return out


def same_value(a: str, b: str) -> bool:
    """Whether a withdrawn value names the head's value (case and surrounding space ignored)."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class KeyCanonicalizer:
    """D's embedding-canonicalized key: route a candidate key to its nearest registered key.

    Like `pmem.write.WritePath.identify` (key names embedded as queries, underscores as spaces,
    the nearest registered key only, each candidate decided once), but with D's thresholds and
    modes, and reporting which band a merge fell in.
    """

    def __init__(
        self,
        embedder: Any,
        writer: Any,
        mode: str,
        merge_high: float,
        merge_low: float,
    ) -> None:
        self.embedder = embedder
        self.writer = writer
        self.mode = mode
        self.merge_high = merge_high
        self.merge_low = merge_low
        self.alias: dict[str, tuple[str, float | None]] = {}  # candidate -> (key, cosine)
        self.counts = {
            "candidates": 0,
            "merged_high": 0,
            "merged_low": 0,
            "merged_confirmed": 0,
            "checks": 0,
            "check_different": 0,
        }
        self._index = NumpyKeyIndex()  # the registered keys

    @property
    def outright(self) -> float:
        """The cosine at or above which a candidate merges without a check."""
        return self.merge_low if self.mode == "low" else self.merge_high

    async def identify(self, key: str, register: bool = True) -> str:
        """The registered key `key` names. `register=False` (a withdrawal) routes without
        opening a new key when nothing matches."""
        if self.mode == "off" or key in self._index.keys:
            return key
        if key in self.alias:
            return self.alias[key][0]
        (vector,) = await self.embedder.embed([key.replace("_", " ")], kind="query")
        vector = np.asarray(vector, dtype=np.float32)
        self.counts["candidates"] += 1
        routed, score = key, None
        hit = self._index.nearest(vector)
        if hit is not None:
            nearest, score = hit[0], float(hit[1])
            if score >= self.outright:
                routed = nearest
                self.counts["merged_low" if score < self.merge_high else "merged_high"] += 1
            elif self.mode == "confirm" and score >= self.merge_low:
                self.counts["checks"] += 1
                if await same_attribute(self.writer, key, nearest):
                    routed = nearest
                    self.counts["merged_confirmed"] += 1
                else:
                    self.counts["check_different"] += 1
        if routed == key and not register:
            return key  # not remembered: a later assertion of the key is decided afresh
        if routed == key:
            self._index.add(key, vector)
        self.alias[key] = (routed, score)
        return routed


class MaterializedStateArm(CellStateArm):
    """Appendix D's write-time materialized state over LongMemEval sessions.

    Write (D, §3.3, A.4): sessions (``meta["session_id"]``) in date order, one extraction call
    each (Appendix E) returning ``{key, value, status}`` facts (status one of A.4's four; an
    invalid one reads as asserted; empty keys or values dropped). Each key is canonicalized by
    embedding match against the keys registered so far (D: "the embedding match of soft
    identity, without its confirmation check") and applied through `pmem.Memory` in arrival
    order, so a later value supersedes the head and the earlier is retained (Table 2).

    ``merge``, against the single nearest registered key: ``high`` (D's default) merges when
    cosine >= ``merge_high`` (0.85); ``low`` (D's "merge 0.70") when >= ``merge_low`` (0.70);
    ``confirm`` (not in D) merges >= ``merge_high`` outright and [``merge_low``,
    ``merge_high``) only when §3.3's same/different check on the key names says "same"; ``off``
    exact (normalized) keys only.

    ``status_ops`` (the paper is silent; our default): asserted and reported facts revise the
    head; hedged facts write nothing; withdrawn revokes the head when it holds the withdrawn
    value (rollback along the supersedes chain, §3.3), else noop. Read (§3.4, A.3, D): ``k:
    null`` is D's full state (every current cell, by first arrival), ``k: 12`` the
    matched-budget cosine top-12 of ``key: value`` strings, one line per cell under B.4's
    tracked-state header.
    """

    needs: ClassVar[tuple[str, ...]] = ("writer", "embedder")
    prompts: ClassVar[dict[str, str]] = {
        "extract_session": EXTRACT_SESSION_PROMPT,
        "same": SAME_PROMPT,
        "state_header": STATE_HEADER,
    }

    def __init__(
        self,
        services: Services | None = None,
        k: int | None = 12,
        merge: str = "high",
        merge_high: float = 0.85,
        merge_low: float = 0.70,
        status_ops: Mapping[str, str] | None = None,
        extract_max_tokens: int = SESSION_EXTRACT_MAX_TOKENS,
        concurrency: int = 8,
    ) -> None:
        super().__init__(services, k)
        if merge not in MERGE_MODES:
            raise ValueError(f"arm.merge must be one of {', '.join(MERGE_MODES)}, not {merge!r}")
        if not 0.0 < merge_low <= merge_high <= 1.0:
            raise ValueError(
                f"arm.merge_low and arm.merge_high need 0 < low <= high <= 1 "
                f"({merge_low}, {merge_high})"
            )
        ops = {**DEFAULT_STATUS_OPS, **dict(status_ops or {})}
        bad = {s: o for s, o in ops.items() if s not in STATUSES or o not in STATUS_OPS_ALLOWED}
        if bad:
            raise ValueError(
                f"arm.status_ops: {bad} - statuses are {', '.join(STATUSES)} (A.4), "
                f"operations {', '.join(STATUS_OPS_ALLOWED)}"
            )
        if extract_max_tokens < 1 or concurrency < 1:
            raise ValueError("arm.extract_max_tokens and arm.concurrency must be >= 1")
        self.merge = merge
        self.merge_high = float(merge_high)
        self.merge_low = float(merge_low)
        self.status_ops = ops
        self.extract_max_tokens = extract_max_tokens
        self.concurrency = concurrency
        self.aliases: dict[str, list[Any]] = {}  # candidate key -> [canonical key, cosine]

    # -- write ---------------------------------------------------------------------------------

    async def extract(self, text: str, counts: dict[str, int]) -> list[StatusFact]:
        """One extraction call for one session (Appendix E: one call per session)."""
        result = await self.services.writer.complete(
            EXTRACT_SESSION_PROMPT.format(text=text),
            schema=EXTRACT_SESSION_SCHEMA,
            schema_name="facts",
            max_tokens=self.extract_max_tokens,
        )
        if result.parsed is None:
            counts["extraction_failures"] += 1
            return []
        facts, dropped, invalid = parse_status_facts(result.parsed)
        counts["dropped_empty"] += dropped
        counts["invalid_status"] += invalid
        return facts

    async def write(self, events: Sequence[Event]) -> None:
        """D: extract each session (concurrently), then apply facts in arrival order."""
        writer, embedder = self.services.writer, self.services.embedder
        if writer is None:
            raise ValueError("the materialized state arm needs a writer model (an llm profile)")
        if embedder is None and self.merge != "off":
            raise ValueError("key canonicalization needs an embedder (or arm.merge=off)")
        sessions = sessions_of(events)
        counts = {
            "sessions": len(sessions),
            "facts": 0,
            "dropped_empty": 0,
            "extraction_failures": 0,
            "invalid_status": 0,
            **{f"status_{s}": 0 for s in STATUSES},
            "committed": 0,
            "withdrawn_applied": 0,
            "withdrawn_unmatched": 0,
            "skipped": 0,
            "fallbacks": 0,
        }
        gate = asyncio.Semaphore(self.concurrency)

        async def one(session: SessionRecord) -> list[StatusFact]:
            async with gate:
                return await self.extract(session.text, counts)

        extracted = await asyncio.gather(*(one(s) for s in sessions))
        canon = KeyCanonicalizer(embedder, writer, self.merge, self.merge_high, self.merge_low)
        decisions: dict[str, int] = {}
        with self.memory.batch():
            for session, facts in zip(sessions, extracted, strict=True):  # arrival order (D)
                evidence = self.memory.observe(session.text, source=SOURCE)
                for fact in facts:
                    counts["facts"] += 1
                    counts[f"status_{fact.status}"] += 1
                    op = self.status_ops[fact.status]
                    if op == "noop":  # e.g. hedged: the session stays as evidence, no value
                        counts["skipped"] += 1
                        continue
                    key = await canon.identify(fact.key, register=op == "revise")
                    decision = self._apply(key, fact, op, evidence, session.at, counts)
                    decisions[decision] = decisions.get(decision, 0) + 1
        self.aliases = {k: [v, s] for k, (v, s) in canon.alias.items() if k != v}
        keys = self.memory.keys()
        cells = len(self.memory.frontier())
        self.stats = {
            "writer": "llm",
            "merge": self.merge,
            "merge_high": self.merge_high,
            "merge_low": self.merge_low,
            **counts,
            **canon.counts,
            "merged": sum(canon.counts[f"merged_{b}"] for b in ("high", "low", "confirmed")),
            "keys": len(keys),
            "cells": cells,
            # D's facts/cell: committed facts per materialized cell (1.0 = every fact its own)
            "facts_per_cell": round(counts["committed"] / len(keys), 4) if keys else 0.0,
            "decisions": dict(sorted(decisions.items())),
        }

    def _apply(
        self,
        key: str,
        fact: StatusFact,
        op: str,
        evidence: str,
        at: str | None,
        counts: dict[str, int],
    ) -> str:
        """One fact through the patch interface (§3.3); the decision it produced."""
        if op == "revise":
            patch = {"op": "revise", "key": key, "new_value": fact.value, "evidence": evidence}
            if at:
                patch["valid_from"] = at  # the session date: from when the value held
            try:
                decision = self.memory.apply(patch).decision
            except InvalidOperation:
                counts["fallbacks"] += 1
                return "noop"
            counts["committed"] += 1
            return decision
        # revoke: only a head holding the withdrawn value is retracted (rollback, §3.3)
        head = self.memory.cell(key).value
        if head is None or not same_value(head, fact.value):
            counts["withdrawn_unmatched"] += 1
            return "noop"
        patch = {"op": "revoke", "key": key, "old_value": head, "evidence": evidence}
        try:
            decision = self.memory.apply(patch).decision
        except InvalidOperation:  # e.g. a contested head (never produced by this arm)
            counts["fallbacks"] += 1
            return "noop"
        counts["withdrawn_applied"] += 1
        return decision

    # -- read ----------------------------------------------------------------------------------

    async def read(self, question: Question) -> Context:
        """D: the state alone - every current cell (k=None) or the question's cosine top-k."""
        return self.render(await self.selected_keys(question))

    def render(self, keys: Sequence[str]) -> Context:
        text = self.state_text(keys)
        meta = {
            **self.stats,
            "read": "full" if self.k is None else f"top{self.k}",
            "shown": len(keys),
            "chars": len(text),
        }
        return Context(text, tuple(keys), meta)

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot_meta(self) -> dict[str, Any]:
        return {**super().snapshot_meta(), "aliases": self.aliases}

    def restore_meta(self, meta: dict[str, Any]) -> None:
        super().restore_meta(meta)
        self.aliases = dict(meta.get("aliases", {}))
