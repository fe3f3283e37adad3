"""The LLM write path (§3.3, Appendix A.2, A.4, B.4): extraction -> soft key identity ->
(optional) annotation -> the patch interface, in stream order.

Extraction of different records is independent, so it runs concurrently; everything that reads
or changes the store (soft identity against the registered keys, annotation against the head,
the patch itself) runs strictly in arrival order, because arrival order is what fixes the
direction of supersession.

The models are the caller's (`pmem.protocols.Writer`, `Embedder`); soft identity is
`pmem.identity.SoftIdentity` (shared with the patch-prediction path's key routing), its
nearest-key search a `pmem.protocols.KeyIndex`, by default `FlatKeyIndex`, a plain-Python exact
scan. (Patch prediction, the other write path, is `pmem.revise`.)
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pmem.graph import InvalidOperation
from pmem.identity import SAME_PROMPT, SOFT_IDENTITY, FlatKeyIndex, SoftIdentity
from pmem.memory import Memory
from pmem.protocols import Embedder, KeyIndex, Writer

__all__ = [
    "ANNOTATE_PROMPT",
    "EXTRACT_PROMPT",
    "PROMPTS",
    "SAME_PROMPT",
    "SOFT_IDENTITY",
    "Fact",
    "FlatKeyIndex",
    "SoftIdentity",
    "WritePath",
    "WriteStats",
    "fact_items",
    "normalize_key",
    "parse_facts",
]

# A.4: value-independent snake_case keys, values verbatim, order preserved, nothing deduplicated.
EXTRACT_PROMPT = """\
Extract every fact stated in the text below as a JSON list of {{"key": ..., "value": ...}} objects.
- key: a snake_case identifier naming the subject and the attribute, never the value \
(personal_best_5k_time, not personal_best_27_12). The same attribute must always get the same key.
- value: the value copied verbatim from the text.
Keep the facts in the order they appear and do not merge or drop repeated ones.

Text:
{text}"""

# §3.2 Eq. 4 / A.2: one typed operation relating the fact to the key's current head.
ANNOTATE_PROMPT = """\
A memory holds one current value per key. Decide how a new observation relates to it.
Key: {key}
Current value: {current}
New value: {value}
Observation: {evidence}

Choose one operation:
- accept: the new value replaces the current one (it changed)
- reject: the current value was wrong; the new value corrects it
- contest: the two conflict and nothing says which holds; keep both open
- resolve: the observation settles an open conflict in favour of the new value
- revoke: the observation retracts the current value
- noop: the observation repeats or supports the current value
Reply as JSON: {{"op": ...}}"""

EXTRACT_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "required": ["key", "value"],
    },
}
# The extraction reply's own budget: a 1,000-character chunk holds about ten facts, ~25 tokens
# of JSON each. Set here, not by the profile, whose max_tokens is the reader's answer budget
# (32 in experiment=table7), which would cut the JSON list short.
EXTRACT_MAX_TOKENS = 1024

OPS = ("accept", "reject", "contest", "resolve", "revoke", "noop")
ANNOTATE_SCHEMA = {
    "type": "object",
    "properties": {"op": {"type": "string", "enum": list(OPS)}},
    "required": ["op"],
}
PROMPTS = {"extract": EXTRACT_PROMPT, "same": SAME_PROMPT, "annotate": ANNOTATE_PROMPT}


@dataclass(frozen=True, slots=True)
class Fact:
    key: str
    value: str


@dataclass
class WriteStats:
    """What the write path did, for the Appendix F audit and the cost tables."""

    records: int = 0
    facts: int = 0
    dropped_empty: int = 0
    extraction_failures: int = 0
    gated: int = 0  # candidates whose nearest registered key reached the threshold
    merged: int = 0  # ... and were judged "same"
    annotation_fallbacks: int = 0  # failed or invalid annotations, applied as noop
    decisions: dict[str, int] = field(default_factory=dict)

    def count(self, decision: str) -> None:
        self.decisions[decision] = self.decisions.get(decision, 0) + 1


def normalize_key(key: str) -> str:
    """A.2: keys in lower-case underscore form."""
    return re.sub(r"[^0-9a-z]+", "_", key.strip().lower()).strip("_")


def fact_items(parsed: Any) -> tuple[list[tuple[str, str, dict[str, Any]]], int]:
    """(normalized key, value, the raw item) of each usable fact in an extraction reply (a list,
    or an object wrapping one), and how many items were dropped as empty or malformed."""
    if isinstance(parsed, dict):
        parsed = next((v for v in parsed.values() if isinstance(v, list)), [])
    items, dropped = [], 0
    for item in parsed if isinstance(parsed, list) else []:
        if not isinstance(item, dict):
            dropped += 1
            continue
        key = normalize_key(str(item.get("key") or ""))
        value = str(item.get("value") or "").strip()
        if key and value:
            items.append((key, value, item))
        else:
            dropped += 1
    return items, dropped


def parse_facts(parsed: Any) -> tuple[list[Fact], int]:
    """Facts from an extraction reply (a list, or an object wrapping one); empty ones dropped."""
    items, dropped = fact_items(parsed)
    return [Fact(key, value) for key, value, _ in items], dropped


class WritePath:
    """Folds records into a `Memory` as the paper's write path does.

    `soft_identity`: the cosine threshold of §3.3 (None turns the merge off, the Appendix F
    ablation); it belongs to the embedder profile. `annotate`: choose a typed operation per fact
    (§3.3 "Applying operations"); off, every fact is a revise patch: the first write of a key
    creates its cell and each later one supersedes the head (B.4). `index`: an empty
    `KeyIndex` for the registered keys (None: a `FlatKeyIndex`).
    """

    def __init__(
        self,
        memory: Memory,
        writer: Writer,
        embedder: Embedder | None = None,
        *,
        soft_identity: float | None = SOFT_IDENTITY,
        annotate: bool = False,
        concurrency: int = 8,
        index: KeyIndex | None = None,
    ) -> None:
        if soft_identity is not None and embedder is None:
            raise ValueError("soft identity needs an embedder (or soft_identity=None)")
        self.memory = memory
        self.writer = writer
        self.embedder = embedder
        self.threshold = soft_identity
        self.annotate = annotate
        self.concurrency = concurrency
        self.stats = WriteStats()
        self.identity = (
            None
            if soft_identity is None or embedder is None
            else SoftIdentity(embedder, writer, threshold=soft_identity, index=index)
        )

    async def extract(self, text: str) -> list[Fact]:
        result = await self.writer.complete(
            EXTRACT_PROMPT.format(text=text),
            schema=EXTRACT_SCHEMA,
            schema_name="facts",
            max_tokens=EXTRACT_MAX_TOKENS,
        )
        if result.parsed is None:
            self.stats.extraction_failures += 1
            return []
        facts, dropped = parse_facts(result.parsed)
        self.stats.dropped_empty += dropped
        return facts

    async def write(self, records: Sequence[str], sources: Sequence[str] | None = None) -> None:
        """Extract every record (concurrently), then apply their facts in arrival order."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(text: str) -> list[Fact]:
            async with gate:
                return await self.extract(text)

        extracted = await asyncio.gather(*(one(t) for t in records))
        for i, (text, facts) in enumerate(zip(records, extracted, strict=True)):
            source = sources[i] if sources else "record"
            await self.apply_facts(text, facts, source=source)

    async def apply_facts(self, text: str, facts: Sequence[Fact], source: str = "record") -> None:
        self.stats.records += 1
        evidence = self.memory.observe(text, source=source)
        for fact in facts:
            self.stats.facts += 1
            key = await self.identify(fact.key)
            op = await self.choose_op(key, fact, text) if self.annotate else "revise"
            self._apply(key, fact.value, op, evidence)

    async def identify(self, key: str) -> str:
        """Soft key identity (§3.3): route a candidate key to the registered key it names
        (`pmem.identity.SoftIdentity`); without it every key is its own cell."""
        if self.identity is None:
            return key
        routed = await self.identity.identify(key)
        self.stats.gated, self.stats.merged = self.identity.gated, self.identity.merged
        return routed

    @property
    def index(self) -> KeyIndex | None:
        """The registered keys' index (None with soft identity off)."""
        return None if self.identity is None else self.identity.index

    async def choose_op(self, key: str, fact: Fact, evidence: str) -> str:
        current = self.memory.cell(key).value
        prompt = ANNOTATE_PROMPT.format(
            key=key, current=current or "(none)", value=fact.value, evidence=evidence
        )
        result = await self.writer.complete(
            prompt, schema=ANNOTATE_SCHEMA, schema_name="operation", max_tokens=16
        )
        op = result.parsed.get("op") if isinstance(result.parsed, dict) else None
        if op not in OPS:
            self.stats.annotation_fallbacks += 1
            return "noop"
        return op

    def _apply(self, key: str, value: str, op: str, evidence: str) -> None:
        patch: dict[str, Any] = {
            "op": "support" if op == "noop" else op,
            "key": key,
            "evidence": evidence,
        }
        if op not in ("noop", "revoke"):
            patch["new_value"] = value
        try:
            self.stats.count(self.memory.apply(patch).decision)
        except InvalidOperation:
            # §3.3: an annotation whose precondition fails (contest on an empty cell, resolve on
            # an uncontested one, ...) falls back to noop; on an empty cell that writes nothing.
            self.stats.annotation_fallbacks += 1
            self.stats.count("noop")
