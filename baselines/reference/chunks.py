"""MemoryOS-style chunk retrieval: the paper's "MemoryOS" row (§4 baselines, B.1, B.4).

"Top-five content-keyed chunk retrieval": each 1,000-character chunk (B.4) or session (B.1) is
stored under a key and the five with keys nearest the question are read whole, in retrieval
order. The key decides LongMemEval (B.1: 45.8% content-keyed vs 11.2% with MemoryOS's generic
key), so ``key: content`` (the paper's arm) and ``key: generic`` (``Conversation session on
{date}``) are both options. The same protocol stands in for MemRL (B.4: no reward signal when
each question is posed once); the MemoryOS package itself is the `memoryos` peer arm.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from baselines.base import Item, items_of
from baselines.retrieval import EmbeddingIndex
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.types import Event, Question

KEYS = ("content", "generic")
GENERIC_KEY = "Conversation session on {date}"  # MemoryOS's default session key (B.1)
UNITS_FILE = "units.json"
VECTORS_FILE = "keys.npy"


def unit_key(item: Item, key: str) -> str:
    """What a unit is embedded under."""
    if key == "generic":
        return GENERIC_KEY.format(date=item.at or "an unknown date")
    return item.text


class ChunkArm(MemoryArm):
    """Chunks (or sessions) stored whole, top-k by key similarity, listed in retrieval order."""

    needs: ClassVar[tuple[str, ...]] = ("embedder",)
    prompts: ClassVar[dict[str, str]] = {"generic_key": GENERIC_KEY}

    def __init__(
        self,
        services: Services | None = None,
        k: int = 5,
        chunk_size: int | None = 1000,
        key: str = "content",
        separator: str = "\n\n",
    ) -> None:
        super().__init__(services)
        if k < 1:
            raise ValueError(f"arm.k must be >= 1, not {k}")
        if key not in KEYS:
            raise ValueError(f"arm.key={key!r}; choose one of {', '.join(KEYS)}")
        if chunk_size is not None and chunk_size < 1:
            raise ValueError("arm.chunk_size must be >= 1 (or null: one unit per event)")
        self.k = k
        self.chunk_size = chunk_size
        self.key = key
        self.separator = separator
        self.units: list[Item] = []
        self.index: EmbeddingIndex | None = None

    async def ingest(self, events: Sequence[Event]) -> None:
        self.units = items_of(events, self.chunk_size)
        keys = [unit_key(u, self.key) for u in self.units]
        self.index = await EmbeddingIndex.build(self.services.embedder, keys)

    async def read(self, question: Question) -> Context:
        assert self.index is not None, "read before ingest"
        hits = await self.index.query(self.services.embedder, question.text, self.k)
        chosen = [self.units[i] for i, _ in hits]
        return Context(
            self.separator.join(u.text for u in chosen),
            tuple(f"unit{u.index}" for u in chosen),
            {"units": len(self.units), "shown": len(chosen), "key": self.key},
        )

    def save(self, directory: Path) -> bool:
        rows = [{"index": u.index, "text": u.text, "at": u.at} for u in self.units]
        (directory / UNITS_FILE).write_text(json.dumps(rows, ensure_ascii=False))
        if self.index is not None:
            self.index.save(directory / VECTORS_FILE)
        return True

    def load(self, directory: Path) -> bool:
        units, vectors = directory / UNITS_FILE, directory / VECTORS_FILE
        if not (units.exists() and vectors.exists()):
            return False
        self.units = [
            Item(r["index"], r["text"], r.get("at")) for r in json.loads(units.read_text())
        ]
        self.index = EmbeddingIndex.load(vectors)
        return len(self.index) == len(self.units)
