"""P-Mem's state arm for MemoryAgentBench FactConsolidation (paper §3.3, §3.4, Appendix B.4).

Write: every fact is a revise patch on its key's cell, applied through `pmem.Memory` in serial
order, so the last value per key is current and earlier ones are retained. Read: the question's
cosine top-12 ``key: value`` cells, one line each under a tracked-state header; ``k: null`` is
B.4's "full state" read. `StateArm` is P-Mem's own writer; `OracleStateArm` the template-oracle
upper bound (MQuAKE's relation templates), labelled as such and never P-Mem's own number.
"""

from __future__ import annotations

import abc
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from baselines.retrieval import EmbeddingIndex
from benchmarks.runner.arm import Ask, Context, MemoryArm, Services
from benchmarks.runner.chunking import chunks
from benchmarks.runner.types import Event, InputError, Question
from pmem import Memory, copy_log
from pmem.render import one_line
from pmem.write import PROMPTS as WRITE_PROMPTS
from pmem.write import SOFT_IDENTITY, WritePath

WRITERS = ("oracle", "llm")
STORE_FILE = "store.sqlite"
VECTORS_FILE = "cells.npy"
META_FILE = "state.json"
# The current cells as plain records (one {"key", "value"} line each, in order of first
# arrival): what Appendix F's write audit reads, readable without the library, and what the
# export keeps in place of the store (benchmarks.results.loader.FRONTIER).
FRONTIER_FILE = "frontier.jsonl"
SOURCE = "factconsolidation"

# B.4: the state read is one line per retrieved cell under a header that says what it is.
STATE_HEADER = "Tracked state (current values; a later fact overrides an earlier one):"
# B.4's iterative readout: the reader's way to ask for more cells (our wording: `StateArm`).
LOOKUP_PROMPT = (
    "\nIf these facts are not enough to answer (for example, the question chains two facts and "
    "one of them is missing), do not guess: reply with exactly one line\n"
    "LOOKUP: <entity> | <relation>\n"
    "naming the entity and the relation you need, and nothing else; more facts will be added. "
    "Lookups left: {left}."
)
LOOKUP_LINE = re.compile(
    r"^\W*LOOKUP[*_`\s]*:[*_`\s]*(?P<entity>[^|\n]+?)\s*(?:\|\s*(?P<relation>[^\n]*?))?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def parse_lookup(reply: str) -> str | None:
    """The query text of a lookup reply (``entity relation``), or None for an answer."""
    m = LOOKUP_LINE.search(reply or "")
    if m is None:
        return None
    return " ".join(part for part in (m["entity"], m["relation"]) if part).strip() or None


def oracle_key(subject: str, relation: str) -> str:
    """The template-oracle's readable key: value-independent, one per (subject, relation)."""
    return f"{subject} | {relation}"


def cell_text(key: str, value: str) -> str:
    """What is embedded and what is shown for a cell (B.4: ``key: value``)."""
    return f"{one_line(key)}: {one_line(value)}"


class NumpyKeyIndex:
    """Soft identity's registered keys (`pmem.protocols.KeyIndex`) as a float32 numpy matrix.

    The library's default, `pmem.write.FlatKeyIndex`, scans in Python; this is the arms' index:
    numpy speed on a large store, and numpy's arithmetic on the embedder's float32 vectors, so
    the scores (float32 themselves) and the threshold comparisons are the ones recorded runs
    made."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self._vectors = np.zeros((0, 0), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, vector: Any) -> None:
        row = np.asarray(vector, dtype=np.float32)[None, :]
        self._vectors = row if self._vectors.size == 0 else np.vstack([self._vectors, row])
        self.keys.append(key)

    def nearest(self, vector: Any) -> tuple[str, Any] | None:
        if not self.keys:
            return None
        scores = self._vectors @ vector
        best = int(np.argmax(scores))
        return self.keys[best], scores[best]  # a float32 numpy scalar, compared as such


class CellStateArm(MemoryArm):
    """What the state arms share (this module's, and Appendix D's materialized state): a
    `pmem.Memory` written by `write`, whose current cells are embedded as ``key: value`` (§3.4)
    in order of first arrival; a read lists the question's cosine top-`k` cells, or every cell
    (``k=None``), one line per cell under the tracked-state header; a snapshot is `save_state`'s
    store, cell order, stats and vectors."""

    def __init__(self, services: Services | None = None, k: int | None = 12) -> None:
        super().__init__(services)
        if k is not None and k < 1:
            raise ValueError(f"arm.k must be >= 1 (or null for the full state), not {k}")
        self.k = k
        self.memory = Memory()
        self.keys: list[str] = []  # one per index row: the current cells in order of first arrival
        self.index: EmbeddingIndex | None = None
        self.stats: dict[str, Any] = {}

    @abc.abstractmethod
    async def write(self, events: Sequence[Event]) -> None: ...

    async def ingest(self, events: Sequence[Event]) -> None:
        await self.write(events)
        await self.build_index()

    async def build_index(self) -> None:
        """Embed every current cell as ``key: value`` (§3.4), in order of first arrival."""
        cells = self.memory.frontier()
        self.keys = [c.key for c in cells]
        texts = [cell_text(c.key, c.value or "") for c in cells]
        self.index = await EmbeddingIndex.build(self.services.embedder, texts)

    async def selected_keys(self, question: Question) -> list[str]:
        """Every current cell (the full-state read, ``k=None``) or the question's cosine top-k."""
        assert self.index is not None, "read before ingest"
        if self.k is None:
            return list(self.keys)
        hits = await self.index.query(self.services.embedder, question.text, self.k)
        return [self.keys[i] for i, _ in hits]

    def state_text(self, keys: Sequence[str]) -> str:
        """The state block: the header, then one ``key: value`` line per cell."""
        lines = [cell_text(key, self.memory.cell(key).value or "") for key in keys]
        return "\n".join([STATE_HEADER, *lines])

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot_meta(self) -> dict[str, Any]:
        """What a snapshot keeps beside the store and the vectors (subclasses add theirs)."""
        return {"keys": self.keys, "stats": self.stats}

    def restore_meta(self, meta: dict[str, Any]) -> None:
        self.keys, self.stats = list(meta["keys"]), dict(meta["stats"])

    def save(self, directory: Path) -> bool:
        save_state(directory, self.memory, self.snapshot_meta(), self.index)
        return True

    def load(self, directory: Path) -> bool:
        loaded = load_state(directory)
        if loaded is None:
            return False
        self.memory, meta, self.index = loaded
        self.restore_meta(meta)
        return len(self.index) == len(self.keys)


class StateArm(CellStateArm):
    """P-Mem state arm with the LLM write path (extraction over B.4 chunks, soft identity).

    `pmem.write.WritePath` extracts ``{key, value}`` facts from B.4's 1,000-character
    line-aligned chunks, routes keys by soft identity at the embedder's threshold and writes one
    revise patch per fact. Iterative readout (B.4, ``lookups: 3``): the reader may answer or
    name an entity and a relation; each lookup retrieves ``lookup_k`` (six) further cells,
    deduplicated against those shown, at most ``lookups`` times before an answer is forced. The
    lookup instruction is ours (the paper gives the protocol, not its wording); it is appended
    to the state block inside the benchmark's answer prompt and hashed into the manifest.
    """

    needs: ClassVar[tuple[str, ...]] = ("writer", "embedder")
    prompts: ClassVar[dict[str, str]] = {
        **WRITE_PROMPTS,
        "state_header": STATE_HEADER,
        "lookup": LOOKUP_PROMPT,
    }
    writer_name: ClassVar[str] = "llm"

    def __init__(
        self,
        services: Services | None = None,
        writer: str | None = None,
        k: int | None = 12,
        soft_identity: float | None = SOFT_IDENTITY,
        chunk_size: int = 1000,
        lookups: int = 0,
        lookup_k: int = 6,
    ) -> None:
        if writer is not None and writer != self.writer_name:
            other = "OracleStateArm" if writer == "oracle" else "StateArm"
            raise ValueError(
                f"arm.writer={writer!r} does not match {type(self).__name__} "
                f"(writer {self.writer_name!r}); choose one of {', '.join(WRITERS)}, "
                f"with _target_ baselines.pmem_arms.state.{other}"
            )
        super().__init__(services, k)
        if lookups < 0 or lookup_k < 1:
            raise ValueError(
                f"arm.lookups must be >= 0 and arm.lookup_k >= 1 ({lookups}, {lookup_k})"
            )
        if lookups and k is None:
            raise ValueError("arm.lookups needs a retrieval read (arm.k), not the full state")
        self.lookups = lookups
        self.lookup_k = lookup_k
        self.soft_identity = soft_identity
        self.chunk_size = chunk_size

    # -- write ---------------------------------------------------------------------------------

    async def write(self, events: Sequence[Event]) -> None:
        """B.4: the stream in 1,000-character line-aligned chunks, extracted, applied in order."""
        writer, embedder = self.services.writer, self.services.embedder
        if writer is None:
            raise ValueError("the llm state arm needs a writer model (the llm profile)")
        records = chunks([e.text for e in events], self.chunk_size)
        path = WritePath(
            self.memory,
            writer,
            embedder,
            soft_identity=self.soft_identity,
            index=NumpyKeyIndex(),
        )
        with self.memory.batch():
            await path.write(records, sources=[SOURCE] * len(records))
        s = path.stats
        self.stats = {
            "writer": self.writer_name,
            "records": s.records,
            "facts": s.facts,
            "dropped_empty": s.dropped_empty,
            "extraction_failures": s.extraction_failures,
            "gated": s.gated,
            "merged": s.merged,
            "annotation_fallbacks": s.annotation_fallbacks,
            "decisions": dict(sorted(s.decisions.items())),
        }

    # -- read ----------------------------------------------------------------------------------

    async def read(self, question: Question) -> Context:
        return self.render(await self.selected_keys(question))  # k=None: B.4's full state

    def render(self, keys: Sequence[str], **meta: Any) -> Context:
        meta = {**self.stats, "cells": len(self.keys), "shown": len(keys), **meta}
        return Context(self.state_text(keys), tuple(keys), meta)

    async def respond(self, question: Question, ask: Ask) -> tuple[Context, Any]:
        """B.4's iterative readout when `lookups` > 0, else the single read."""
        if not self.lookups:
            return await super().respond(question, ask)
        assert self.index is not None, "read before ingest"
        keys = list((await self.read(question)).ids)
        issued: list[str] = []
        while True:
            left = self.lookups - len(issued)
            context = self.render(keys, lookups=len(issued), lookup_queries=list(issued))
            prompt = context.text + (LOOKUP_PROMPT.format(left=left) if left else "")
            reply = await ask(prompt)
            query = parse_lookup(reply.text) if left else None
            if query is None:  # an answer, or the last turn (the answer is forced)
                return Context(prompt, context.ids, context.meta), reply
            issued.append(query)
            shown = set(keys)
            hits = await self.index.query(self.services.embedder, query, len(keys) + self.lookup_k)
            keys += [k for k in (self.keys[i] for i, _ in hits) if k not in shown][: self.lookup_k]


class OracleStateArm(StateArm):
    """The template-oracle writer (B.4, labelled): a parser instead of extraction, no model.

    MQuAKE's relation templates parse each ``N. fact`` line into (subject, relation, object):
    key ``"{subject} | {relation}"``, value the object.
    """

    needs: ClassVar[tuple[str, ...]] = ("embedder",)
    prompts: ClassVar[dict[str, str]] = {"state_header": STATE_HEADER, "lookup": LOOKUP_PROMPT}
    writer_name: ClassVar[str] = "oracle"

    async def write(self, events: Sequence[Event]) -> None:
        self.stats = {"writer": "template-oracle", "facts": 0, "decisions": {}}
        decisions: dict[str, int] = {}
        with self.memory.batch():
            for event in events:  # stream order fixes the direction of supersession (B.4)
                subject, relation, obj = fact_triple(event)
                evidence = self.memory.observe(event.text, source=SOURCE)
                patch = {
                    "op": "revise",
                    "key": oracle_key(subject, relation),
                    "new_value": obj,
                    "evidence": evidence,
                }
                decision = self.memory.apply(patch).decision
                decisions[decision] = decisions.get(decision, 0) + 1
        self.stats["facts"] = len(events)
        self.stats["decisions"] = dict(sorted(decisions.items()))


def save_state(
    directory: Path, memory: Memory, meta: dict[str, Any], index: EmbeddingIndex | None
) -> None:
    """A state arm's snapshot: the store (SQLite), its cell order and stats, the cell vectors,
    and its current cells as records (FRONTIER_FILE)."""
    for stale in directory.glob(f"{STORE_FILE}*"):
        stale.unlink()  # a half-written earlier save
    with Memory(directory / STORE_FILE) as disk:
        copy_log(memory, disk)
    (directory / META_FILE).write_text(json.dumps(meta, ensure_ascii=False))
    cells = ({"key": c.key, "value": c.value or ""} for c in memory.frontier())
    text = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cells)
    (directory / FRONTIER_FILE).write_text(text, encoding="utf-8")
    if index is not None:
        index.save(directory / VECTORS_FILE)


def load_state(directory: Path) -> tuple[Memory, dict[str, Any], EmbeddingIndex] | None:
    """What `save_state` wrote, or None if any part is missing."""
    paths = [directory / name for name in (STORE_FILE, META_FILE, VECTORS_FILE)]
    if not all(p.exists() for p in paths):
        return None
    memory = Memory()
    with Memory(paths[0]) as disk:
        copy_log(disk, memory)
    return memory, json.loads(paths[1].read_text()), EmbeddingIndex.load(paths[2])


def fact_triple(event: Event) -> tuple[str, str, str]:
    """(subject, relation, object) of a fact event: the benchmark's own parse (its labels)."""
    m = event.meta
    if m.get("subject") and m.get("relation") and m.get("object"):
        return str(m["subject"]), str(m["relation"]), str(m["object"])
    raise InputError(
        f"event {event.id!r}: the template-oracle state arm reads the benchmark's parse of each "
        "fact (meta subject, relation, object); this event has none"
    )
