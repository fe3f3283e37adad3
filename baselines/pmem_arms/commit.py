"""The write-time commit arms of Table 6, Table 8 and the conflict probe (paper §3.3, §4.2).

Commit takes events in arrival order, routes each to its object's cell by key
(``{object}.location``), turns it into one Revise-shaped patch and applies it through the
deterministic patch controller; the query reads the one-line cell ``[key] value`` (B.2). The
writer is a class (`PatchCommitArm`, or `OracleCommitArm`: a template-oracle upper bound, never
P-Mem's own number); retention, routing and disclosure are options of `CommitArm`.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import json
import re
import string
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from baselines.pmem_arms.cells import CrudStore, RetentionStore
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.types import Event, Question, Wording
from pmem import InvalidOperation, Patch
from pmem.graph import CONTESTED
from pmem.identity import SAME_PROMPT, SOFT_IDENTITY, SoftIdentity
from pmem.render import check_disclose
from pmem.revise import (
    REVISE_SCHEMA,
    AnnotationError,
    named_key,
    predict_patch,
    revise_schema,
)

TARGET_CHAIN = 0  # the generator's chain number of the queried object (Event.meta["chain"])
ROUTES = ("target", "pool")
WRITER_FILE = "writer.json"

# ---------------------------------------------------------------------------------------------
# The patch-prediction prompt (§3.3 "Patch interface", A.2); the Revise schema, its parse and the
# call itself are the library's write path, `pmem.revise`
# ---------------------------------------------------------------------------------------------

# The instructions and examples come first and the cell and observation last, so a server that
# caches prompt prefixes (llama.cpp, vLLM) re-reads only the last lines on every call. The
# examples use another object and other wording than the benchmark's templates, so the call
# has to read the observation, not match it.
PATCH_PROMPT = """\
You maintain an agent's memory of where household objects are: one cell per object, holding \
its current location. A new observation arrives; decide how it changes the object's cell and \
reply with one JSON object with these fields:
- "op": "revise" to write to the cell; "resolve" only when the cell is marked (contested) and \
the observation confirms one of its values; "noop" when the observation changes nothing.
- "key": the cell's key, as shown before " = ".
- "old_value": the cell's current value exactly as shown, or null if the cell is (empty).
- "new_value": the location the observation gives for the object, copied exactly (for example \
"cabinet 3"), or null if it gives none.
- "status": what the observation means for the old value:
  "superseded" if the observation says the object was moved, or the cell is (empty);
  "contested" if it only states that the object is somewhere else, without saying it was \
moved: two reports disagree and nothing says which one is right;
  "contradicted" if it says the current value was wrong all along and gives the right \
location: a correction, not a move;
  "revoked" if it says the current value was reported in error without giving a new location \
(then new_value is null);
  null with "resolve" or "noop".
- "supersedes": the same as old_value.

Examples (another object):

Cell: mug.location = (empty)
Observation: The mug was seen on shelf 2.
{{"op": "revise", "key": "mug.location", "old_value": null, "new_value": "shelf 2", \
"status": "superseded", "supersedes": null}}

Cell: mug.location = shelf 2
Observation: Someone carried the mug from shelf 2 to sinkbasin 1.
{{"op": "revise", "key": "mug.location", "old_value": "shelf 2", "new_value": "sinkbasin 1", \
"status": "superseded", "supersedes": "shelf 2"}}

Cell: mug.location = desk 1
Observation: The message that the mug went to desk 1 was a mistake.
{{"op": "revise", "key": "mug.location", "old_value": "desk 1", "new_value": null, \
"status": "revoked", "supersedes": "desk 1"}}

Cell: mug.location = shelf 2
Observation: Correction: the mug was never on shelf 2; it has been on desk 3 all along.
{{"op": "revise", "key": "mug.location", "old_value": "shelf 2", "new_value": "desk 3", \
"status": "contradicted", "supersedes": "shelf 2"}}

Cell: mug.location = shelf 2 (contested) | alternatives: desk 1
Observation: Confirmed: the mug is on desk 1.
{{"op": "resolve", "key": "mug.location", "old_value": "shelf 2", "new_value": "desk 1", \
"status": null, "supersedes": "shelf 2"}}

Cell: mug.location = shelf 2
Observation: A second report says the mug is on desk 1.
{{"op": "revise", "key": "mug.location", "old_value": "shelf 2", "new_value": "desk 1", \
"status": "contested", "supersedes": "shelf 2"}}

Rule: when the cell already holds a location and the observation gives another one without \
saying that the object was moved, the status is "contested", not "superseded".

Now the real one. Reply with the JSON object only.

Cell: {cell}
Observation: {observation}
"""


# Routing by the model's own key (§3.3 soft key identity): before the patch call, the writer names
# the key of the object an observation is about, from the observation alone, as the extraction
# path names a fact's key; soft identity then finds the cell that key means. Examples use other
# objects and other wording than the benchmark's templates.
KEY_PROMPT = """\
You maintain an agent's memory of where household objects are: one cell per object, holding \
its current location, under the key "<object>.location". Which object's cell does the \
observation below belong to? Name the object whose location it gives, changes or corrects, and \
reply with one JSON object: {{"key": "<object>.location"}}.

Observation: The mug was seen on shelf 2.
{{"key": "mug.location"}}

Observation: Someone carried the kettle from stoveburner 1 to sinkbasin 1.
{{"key": "kettle.location"}}

Observation: The message that the soapbar went to desk 1 was a mistake.
{{"key": "soapbar.location"}}

Observation: {observation}
"""
KEY_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string"}},
    "required": ["key"],
    "additionalProperties": False,
}
KEY_MAX_TOKENS = 32


# ---------------------------------------------------------------------------------------------
# The template-oracle writer: the generator's templates, parsed
# ---------------------------------------------------------------------------------------------


def template_regex(template: str) -> re.Pattern[str]:
    """A generator template ("Update: {obj} has been moved from {a} to {b}.") as a regex with
    one named group per field."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field:
            parts.append(f"(?P<{field}>.+?)")
    return re.compile("".join(parts))


@functools.cache
def event_patterns(wording: Wording) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each event kind's template as a regex, in the wording's order."""
    return tuple((kind, template_regex(template)) for kind, template in wording.events)


def oracle_patch(text: str, key: str, head: str | None, status: str, wording: Wording) -> Patch:
    """The patch a perfect annotator would emit for a templated event, given the cell's head
    and status: stale record -> create, update -> revise (superseded), retraction -> revoke,
    a second report that disagrees -> contest, the settling check -> resolve."""
    for kind, pattern in event_patterns(wording):
        m = pattern.fullmatch(text.strip())
        if m is None:
            continue
        g = m.groupdict()
        if kind in ("stale_record", "update", "erroneous_update"):
            new = g.get("loc") or g["b"]
            return Patch("revise", key, g.get("a"), new, "superseded", g.get("a"))
        if kind == "retraction":
            return Patch("revise", key, g["v2"], None, "revoked", g["v2"])
        loc = g["loc"]
        if kind == "settle" and status == CONTESTED:
            return Patch("resolve", key, head, loc, None, head)
        if head is None:
            return Patch("revise", key, None, loc, "superseded")
        if loc == head:
            return Patch("noop", key)
        return Patch("revise", key, head, loc, "contested" if kind == "report" else "superseded")
    raise AnnotationError("unparsed", f"no template matches {text!r}")


# ---------------------------------------------------------------------------------------------
# The arms
# ---------------------------------------------------------------------------------------------


def event_key(event: Event, wording: Wording) -> str:
    """The generator's label for an event's cell: oracle routing only (`routing="label"`), and
    the routing audit."""
    obj = event.meta.get("object")
    if not obj:
        raise ValueError(f"event {event.id}: no 'object' in its meta to route it by")
    return wording.key.format(obj=obj)


def asked_key(question: Question, wording: Wording) -> str:
    """The key a question names, read from its text ("where is the {obj} now?")."""
    m = template_regex(wording.question).fullmatch(question.text.strip())
    if m is None:
        raise ValueError(f"question {question.id}: cannot tell which object it asks about")
    return wording.key.format(obj=m["obj"])


def question_key(question: Question, wording: Wording) -> str:
    """The cell a question reads under oracle routing: the benchmark's key, else the key its
    text names."""
    key = question.meta.get("key")
    return str(key) if key else asked_key(question, wording)


def routing_audit(routes: Sequence[tuple[str | None, str | None]]) -> tuple[dict[str, str], int]:
    """Which cell is each object's, and how many events reached it, from (object label, cell
    routed to) pairs in arrival order. An object's cell is the first cell one of its own
    events created; an event reached it only if routed there, so a fork (a second cell for
    the object) and a merge into another object's cell both count as misses."""
    owner: dict[str, str] = {}
    home: dict[str, str] = {}
    reached = 0
    for obj, cell in routes:
        if cell is None or obj is None:
            continue
        owner.setdefault(cell, obj)
        if owner[cell] == obj:
            home.setdefault(obj, cell)
        reached += home.get(obj) == cell
    return home, reached


class CommitArm(MemoryArm):
    """Write-time commit: one patch per event in arrival order, routed by key; read one cell.

    `routing="identity"` (P-Mem's): the writer names the key of the object the event is about
    (`name_key`, from the event's text alone) and soft key identity (`pmem.identity.
    SoftIdentity`: the embedder profile's threshold, the writer's same/different check) routes it
    to the cell it means or opens a new one; the question's key, read from its text, is resolved
    the same way without opening a cell. `routing="label"` is the oracle-routing variant: the
    generator's object label picks the cell and the question's `meta["key"]` the read. Either
    way the patch call is then shown that one cell. The labels are read once more, after
    routing, to audit it (`routing_audit`): the audit never changes a route.

    Subclasses supply the writer (`annotate`, and `name_key` for identity routing). A failing
    annotation - no JSON, an invalid field, or a patch the controller refuses (stale old_value,
    resolve on a cell that is not contested) - falls back to noop and is counted by reason, as
    in §3.3 / A.2.

    `retention=True` writes to `pmem.Memory` (a retraction rolls back along the supersedes
    chain); `retention=False` is Table 8's CRUD ablation (`cells.CrudStore`: an update
    overwrites, a retraction deletes, a contest is last-write-wins). `route="target"` feeds the
    target chain only, as Table 6 does (B.2); `route="pool"` ingests every event of the pool.
    The contest path of §4.2.3 is this arm on the conflict probe: the writer chooses contest or
    resolve, as P-Mem's annotator does (§3.3); there is no contest-only arm. `disclose` is
    §3.4's disclosure: alternatives print only on a contested cell, so a chain read stays one
    ``[key] value`` line (~30 characters, B.2); ``history`` is off by default and turned on by
    Table 8's commands (the retraction probe "discloses history").
    """

    writer_name: ClassVar[str] = "?"
    #: the routings this writer supports (the template oracle names no key of its own)
    routings: ClassVar[tuple[str, ...]] = ("identity", "label")

    def __init__(
        self,
        services: Services | None = None,
        route: str = "target",
        retention: bool = True,
        disclose: Sequence[str] = ("alternatives",),
        routing: str = "identity",
        soft_identity: float = SOFT_IDENTITY,
        wording: Wording | None = None,
    ) -> None:
        super().__init__(services)
        self.wording = wording
        if route not in ROUTES:
            raise ValueError(f"arm.route={route!r}; choose one of {', '.join(ROUTES)}")
        if routing not in self.routings:
            raise ValueError(
                f"arm.routing={routing!r}; {type(self).__name__} supports "
                + ", ".join(self.routings)
            )
        self.route = route
        self.routing = routing
        self.disclose = check_disclose(disclose)
        self.store: RetentionStore | CrudStore = RetentionStore() if retention else CrudStore()
        self.identity: SoftIdentity | None = None
        if routing == "identity":
            if self.services.embedder is None:
                raise ValueError("arm.routing=identity needs an embedder (the embedder profile)")
            self.identity = SoftIdentity(
                self.services.embedder, self.services.writer, threshold=soft_identity
            )
        self.decisions: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.key_mismatches = 0
        self.routes: list[tuple[str | None, str | None]] = []  # (object label, cell): the audit

    @abc.abstractmethod
    async def annotate(self, event: Event, key: str) -> Patch:
        """The patch for one event on cell `key` (raise `AnnotationError` when there is none)."""

    async def name_key(self, event: Event) -> str:
        """The key the writer names for an event (identity routing only)."""
        raise NotImplementedError(f"{type(self).__name__} names no key")

    async def name_keys(self, events: Sequence[Event]) -> list[str | AnnotationError | None]:
        """The key named for each event (None under oracle routing), or why none was. A key call
        sees its observation alone, so all of them run before the patch calls: the writer's
        requests then come in two runs of one prompt prefix each, which a server's prefix cache
        keeps (interleaved, a one-slot llama-server re-reads the patch prompt on every call)."""
        if self.identity is None:
            return [None] * len(events)

        async def one(event: Event) -> str | AnnotationError:
            try:
                return await self.name_key(event)
            except AnnotationError as err:
                return err

        return list(await asyncio.gather(*(one(e) for e in events)))

    async def cell_for(self, event: Event, named: str | AnnotationError | None) -> str:
        """The cell an event goes to: the label's (oracle routing), else the key the writer
        named, routed by soft identity (in arrival order: routing registers keys)."""
        if self.identity is None:
            return event_key(event, self.words())
        if isinstance(named, AnnotationError):
            raise named
        assert named is not None
        return await self.identity.identify(named)

    async def ingest(self, events: Sequence[Event]) -> None:
        if self.route == "target":
            events = [e for e in events if e.meta.get("chain") == TARGET_CHAIN]
        names = await self.name_keys(events)
        # arrival order: the direction of supersession is fixed here
        for event, named in zip(events, names, strict=True):
            evidence = self.store.observe(event.text)
            key: str | None = None
            try:
                key = await self.cell_for(event, named)
                patch = await self.annotate(event, key)
                if patch.op == "noop":
                    self.store.noop(key, evidence)
                    self.decisions["noop"] += 1
                    continue
                self.decisions[self.store.apply(key, patch, evidence)] += 1
            except (AnnotationError, InvalidOperation) as err:
                reason = err.reason if isinstance(err, AnnotationError) else "refused"
                if key is not None:
                    self.store.noop(key, evidence)
                self.fallbacks[reason] += 1
            finally:
                self.routes.append((event.meta.get("object"), key))

    def words(self) -> Wording:
        """The benchmark's wording: the commit arms read keys off templated text."""
        if self.wording is None:
            raise ValueError(
                f"{type(self).__name__} reads keys off a generated benchmark's templates; this "
                "benchmark has no `wording` (ALFWorld-Revision has)"
            )
        return self.wording

    async def read_key(self, question: Question) -> str:
        """The cell a question reads: the key its text names resolved by soft identity (the key
        itself when it names no cell, which then reads as empty), or the label's."""
        if self.identity is None:
            return question_key(question, self.words())
        asked = asked_key(question, self.words())
        return await self.identity.find(asked) or asked

    async def read(self, question: Question) -> Context:
        key = await self.read_key(question)
        value, status = self.store.head(key)
        home, reached = routing_audit(self.routes)
        meta = {
            "writer": self.writer_name,
            "retention": self.store.retention,
            "route": self.route,
            "routing": self.routing,
            "cell_status": status,
            "cell_value": value,
            "retained_values": self.store.retained(key),
            "events_written": sum(self.decisions.values()) + sum(self.fallbacks.values()),
            "decisions": dict(sorted(self.decisions.items())),
            "noop_fallbacks": sum(self.fallbacks.values()),
            "fallback_reasons": dict(sorted(self.fallbacks.items())),
            "key_mismatches": self.key_mismatches,
            # the routing audit (labels read after the fact; B.2's "routed to its object's cell")
            "events_seen": len(self.routes),
            "events_routed": sum(cell is not None for _, cell in self.routes),
            "events_reached_cell": reached,
            "cells": len({cell for _, cell in self.routes if cell is not None}),
            "question_reached_cell": int(home.get(str(question.meta["object"])) == key)
            if question.meta.get("object")
            else None,
        }
        return Context(self.store.line(key, self.disclose), (key,), meta)

    def save(self, directory: Path) -> bool:
        self.store.save(directory)
        stats = {
            "decisions": self.decisions,
            "fallbacks": self.fallbacks,
            "key_mismatches": self.key_mismatches,
            "routes": self.routes,
            "identity": self.identity.state() if self.identity else None,
        }
        (directory / WRITER_FILE).write_text(json.dumps(stats, sort_keys=True))
        return True

    def load(self, directory: Path) -> bool:
        path = directory / WRITER_FILE
        if not path.exists() or not self.store.load(directory):
            return False
        stats = json.loads(path.read_text())
        if "routes" not in stats or (self.identity is not None) != bool(stats.get("identity")):
            return False  # a snapshot without recorded routing: ingest again
        self.decisions = Counter(stats["decisions"])
        self.fallbacks = Counter(stats["fallbacks"])
        self.key_mismatches = int(stats["key_mismatches"])
        self.routes = [(obj, cell) for obj, cell in stats["routes"]]
        if self.identity is not None:
            self.identity.restore(stats["identity"])
        return True


class PatchCommitArm(CommitArm):
    """P-Mem commit: one patch-prediction call per event (the writer model at temperature 0,
    json_schema-constrained Revise object), shown the cell's current state so it can name the
    value it replaces (§3.3, A.2, B.2); under identity routing a short key call first names the
    object's key (`KEY_PROMPT`)."""

    needs: ClassVar[tuple[str, ...]] = ("writer", "embedder")
    prompts: ClassVar[dict[str, str]] = {
        "patch": PATCH_PROMPT,
        "patch_schema": json.dumps(REVISE_SCHEMA, sort_keys=True),
        "patch_schema_uncontested": json.dumps(revise_schema(False), sort_keys=True),
        "key": KEY_PROMPT,
        "key_schema": json.dumps(KEY_SCHEMA, sort_keys=True),
        "same": SAME_PROMPT,
    }
    writer_name = "llm"

    def _writer(self) -> Any:
        if self.services.writer is None:
            raise ValueError("this commit arm needs a writer model (the llm profile)")
        return self.services.writer

    async def name_key(self, event: Event) -> str:
        result = await self._writer().complete(
            [{"role": "user", "content": KEY_PROMPT.format(observation=event.text)}],
            schema=KEY_SCHEMA,
            schema_name="key",
            max_tokens=KEY_MAX_TOKENS,
            temperature=0.0,
        )
        if result.parsed is None:
            raise AnnotationError("unparsed", getattr(result, "parse_error", None) or "")
        key = named_key(result.parsed.get("key") if isinstance(result.parsed, dict) else None)
        if key is None:
            raise AnnotationError("invalid", "the key call named no key")
        return key

    async def annotate(self, event: Event, key: str) -> Patch:
        prompt = PATCH_PROMPT.format(cell=self.store.describe(key), observation=event.text)
        _, status = self.store.head(key)
        patch, mismatch = await predict_patch(
            self._writer(), prompt, key, resolvable=status == CONTESTED
        )
        self.key_mismatches += mismatch
        return patch


class OracleCommitArm(CommitArm):
    """Template-oracle commit: a deterministic parser of the generator's templates stands in
    for the patch call (no model), on the labelled cell (oracle routing only). It measures the
    store and the read, not annotation or routing; an event no template matches (e.g. a
    single-revision rewrite) falls back to noop."""

    writer_name = "template-oracle"
    routings = ("label",)

    def __init__(self, services: Services | None = None, **kw: Any) -> None:
        kw.setdefault("routing", "label")
        super().__init__(services, **kw)

    async def annotate(self, event: Event, key: str) -> Patch:
        head, status = self.store.head(key)
        return oracle_patch(event.text, key, head, status, self.words())
