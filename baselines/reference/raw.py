"""The raw (archival, query-time) arms of Table 6 and Table 8 (paper §4.2, Appendix B.2).

Every event is kept as a line of text; nothing is committed at write time, so the reader must
reassemble what holds now at query time. One class per model need (the runner starts the models
an arm class names in `needs`), one option per variant; `OracleOrderArm` is the control that
shows the evidence suffices when the order is given. Retrieval coverage of the target chain is
reported in `Context.meta` (B.2's control).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from baselines.base import load_events, save_events
from baselines.retrieval import EmbeddingIndex
from benchmarks.runner.arm import Change, Context, MemoryArm, Services
from benchmarks.runner.types import Event, InputError, Question

TARGET_CHAIN = 0  # the generator's chain number of the queried object (Event.meta["chain"])

# The reconstruction call (§4.2.1, "a query-time reconstruction call"): it sees exactly what
# the raw reader sees, in the same similarity order, and must recover the order itself.
RECON_PROMPT = (
    "Below are entries retrieved from a household agent's memory for a question, most similar "
    "first. They are not in the order in which the events happened.\n\n"
    "Entries:\n{evidence}\n\n"
    "Question: {question}\n"
    "Reconstruct the current state of the object the question asks about: work out the order "
    "of the events about it and where it is now. Reply with one sentence stating its current "
    'location exactly as written in the entries, for example "The mug is in cabinet 3."'
)
RECON_MAX_TOKENS = 64
# How the retrieved lines are listed: by similarity (B.2, B.4 raw facts) or by arrival index
# (B.4's raw + order tags: "sorted by stream index").
ORDERS = ("similarity", "stream")


def tag(index: int, text: str) -> str:
    """B.2's arrival tag: the event's index in arrival order, ``[t=i]``, before its text."""
    return f"[t={index}] {text}"


class RawArm(MemoryArm):
    """Raw top-k by embedding similarity, listed in similarity order (B.2's raw path).

    Cosine top-k (k=10) of the pool against the question. `tags=True` prefixes each line with
    its arrival index ``[t=i]`` (still in similarity order: the reader must sort);
    `order="stream"` (B.4's raw + order tags) lists the same top-k by arrival index, tagged.
    """

    needs: ClassVar[tuple[str, ...]] = ("embedder",)
    changes: ClassVar[tuple[Change, ...]] = (
        Change(
            since="2026-12-02T21:22:21+00:00",
            what="raw facts are stored and listed without the stream's serial 'N.' (an arrival "
            "signal the unordered row must not carry; `RawFactsArm`)",
            configs=("raw_facts", "raw_facts_tags"),
        ),
    )

    def __init__(
        self,
        services: Services | None = None,
        k: int = 10,
        tags: bool = False,
        order: str = "similarity",
    ) -> None:
        super().__init__(services)
        if k < 1:
            raise ValueError(f"arm.k must be >= 1, not {k}")
        if order not in ORDERS:
            raise ValueError(f"arm.order={order!r}; choose one of {', '.join(ORDERS)}")
        self.k = k
        self.tags = tags
        self.order = order
        self.events: list[Event] = []
        self.index: EmbeddingIndex | None = None

    # -- write: keep everything --------------------------------------------------------------

    async def ingest(self, events: Sequence[Event]) -> None:
        self.events.extend(events)
        await self._build()

    def stored(self, event: Event) -> str:
        """The text the store keeps for an event: what is embedded and what a read lists."""
        return event.text

    async def _build(self) -> None:
        # The stored text is embedded, tagged or not, so every raw variant ranks the same pool
        # identically and shares one set of cached embeddings.
        texts = [self.stored(e) for e in self.events]
        self.index = await EmbeddingIndex.build(self.services.embedder, texts)

    # -- read ----------------------------------------------------------------------------------

    async def select(self, question: Question) -> list[int]:
        """Positions of the pool lines to show, in the order shown."""
        assert self.index is not None, "read before ingest"
        hits = await self.index.query(self.services.embedder, question.text, self.k)
        chosen = [i for i, _ in hits]
        return sorted(chosen) if self.order == "stream" else chosen

    async def read(self, question: Question) -> Context:
        chosen = await self.select(question)
        texts = [self.stored(self.events[i]) for i in chosen]
        lines = [tag(i, t) if self.tags else t for i, t in zip(chosen, texts, strict=True)]
        return Context(
            "\n".join(lines), tuple(self.events[i].id for i in chosen), self.coverage(chosen)
        )

    def coverage(self, chosen: Sequence[int]) -> dict[str, Any]:
        """B.2's retrieval control. `coverage`: the share of the target chain's lines that are
        in the read (the reading under which the paper's ">= 98.8% at every L" is possible:
        at L=1 the target holds 2 of 10 slots); `slot_share`: the share of read slots holding
        target-chain lines (the literal wording)."""
        target = {i for i, e in enumerate(self.events) if e.meta.get("chain") == TARGET_CHAIN}
        hit = sum(1 for i in chosen if i in target)
        return {
            "k": self.k,
            "pool": len(self.events),
            "shown": len(chosen),
            "target_lines": len(target),
            "target_shown": hit,
            "coverage": hit / len(target) if target else None,
            "slot_share": hit / len(chosen) if chosen else None,
        }

    # -- snapshots -----------------------------------------------------------------------------

    def save(self, directory: Path) -> bool:
        save_events(directory, self.events)
        if self.index is not None:
            self.index.save(directory / "vectors.npy")
        return True

    def load(self, directory: Path) -> bool:
        events = load_events(directory)
        if events is None:
            return False
        self.events = events
        return self._load_index(directory)

    def _load_index(self, directory: Path) -> bool:
        vectors = directory / "vectors.npy"
        if not vectors.exists():
            return False
        self.index = EmbeddingIndex.load(vectors)
        return len(self.index) == len(self.events)


class RawFactsArm(RawArm):
    """B.4's raw facts: every fact version a separate item, without the context's serial.

    Not `RawArm` over the events as they come: a FactConsolidation event is the context's
    line ``N. sentence``, and its serial ``N`` is the stream's order (the official query prompt
    tells the reader that a larger number is newer). Listing it would make the plain row an
    order-tagged one, and RQ6's contrast (Table 7: raw vs + order tags) is between an unordered
    store of fact versions and the same store with order tags. So the store holds the sentence
    alone (embedded and listed as is); the plain read is the top-12 in similarity order with no
    serial and no index, and the tagged read (``tags=True, order="stream"``) gives the order
    back only as the arrival index tag ``[t=i]`` (the event's position in the stream; B.4:
    "sorts by stream index and prefixes it"). A line that is not ``N. sentence`` is refused.
    """

    def __init__(
        self,
        services: Services | None = None,
        k: int = 12,
        tags: bool = False,
        order: str = "similarity",
    ) -> None:
        super().__init__(services, k=k, tags=tags, order=order)

    def stored(self, event: Event) -> str:
        """The event's text without the serial it starts with (`meta["serial"]`, ``N. ``)."""
        serial = event.meta.get("serial")
        prefix = f"{serial}. "
        if serial is None or not event.text.startswith(prefix):
            raise InputError(
                f"raw_facts: event {event.id!r} is not a fact line 'N. <fact>' with the serial N "
                f"its benchmark gives (meta serial {serial!r}): {event.text[:80]!r}"
            )
        return event.text[len(prefix) :]


class RawReconArm(RawArm):
    """Raw top-k plus one query-time reconstruction call; the reader answers from its output.

    Design: the writer model gets the retrieved lines exactly as `RawArm` would show them and
    the question, and replies with one sentence naming the current location; that sentence is
    the whole context the reader sees (so the answer is the reconstruction's, read by the same
    reader as every other arm). The retrieved listing's size is reported as `evidence_chars`.
    """

    needs: ClassVar[tuple[str, ...]] = ("embedder", "writer")
    prompts: ClassVar[dict[str, str]] = {"reconstruct": RECON_PROMPT}

    async def read(self, question: Question) -> Context:
        retrieved = await super().read(question)
        writer = self.services.writer
        if writer is None:
            raise ValueError("raw_recon needs a writer model (the llm profile)")
        prompt = RECON_PROMPT.format(evidence=retrieved.text, question=question.text)
        result = await writer.complete(
            [{"role": "user", "content": prompt}], max_tokens=RECON_MAX_TOKENS, temperature=0.0
        )
        text = " ".join(result.text.split())
        meta = {**retrieved.meta, "evidence_chars": len(retrieved.text)}
        return Context(text, retrieved.ids, meta)


class OracleOrderArm(RawArm):
    """The target's stale record and chain in arrival order, bypassing retrieval (B.2)."""

    needs: ClassVar[tuple[str, ...]] = ()

    async def _build(self) -> None:
        self.index = None  # nothing is retrieved

    async def select(self, question: Question) -> list[int]:
        return [i for i, e in enumerate(self.events) if e.meta.get("chain") == TARGET_CHAIN]

    def _load_index(self, directory: Path) -> bool:
        return True
