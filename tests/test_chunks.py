"""MemoryOS-style chunk retrieval (the paper's MemoryOS row, B.1/B.4)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from baselines.reference.chunks import GENERIC_KEY, ChunkArm
from benchmarks.models.scripted import embed_text
from benchmarks.runner.arm import Services
from benchmarks.runner.types import Event, Question


class HashEmbedder:
    """Word-hash vectors wide enough that one shared rare word outweighs collisions."""

    async def embed(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        return np.asarray([embed_text(t, 1024) for t in texts], dtype=np.float32)


def events() -> list[Event]:
    lines = [f"{i + 1}. The capital of Country{i} is City{i}." for i in range(200)]
    return [Event(f"f{i}", t, at=f"2024-01-{i % 28 + 1:02d}") for i, t in enumerate(lines)]


def test_chunks_are_line_aligned_and_read_whole_top5_in_retrieval_order(tmp_path) -> None:
    arm = ChunkArm(Services(embedder=HashEmbedder()), k=5, chunk_size=200)
    evs = events()
    asyncio.run(arm.ingest(evs))
    assert all(len(u.text) <= 200 for u in arm.units) and len(arm.units) > 40
    assert "\n".join(u.text for u in arm.units) == "\n".join(e.text for e in evs)  # nothing lost
    question = Question("q", "Which city is the capital of Country123", ("City123",))
    context = asyncio.run(arm.read(question))
    assert len(context.ids) == 5 and context.meta["units"] == len(arm.units)
    first = arm.units[int(context.ids[0].removeprefix("unit"))]
    assert context.text.startswith(first.text)  # read whole, best first
    assert "124. The capital of Country123 is City123." in context.text
    # snapshots restore the same read
    assert arm.save(tmp_path)
    again = ChunkArm(Services(embedder=HashEmbedder()), k=5)
    assert again.load(tmp_path) and asyncio.run(again.read(question)) == context


def test_generic_keys_make_retrieval_blind_to_content() -> None:
    """B.1: under MemoryOS's default key every session looks alike to the question."""
    content = ChunkArm(Services(embedder=HashEmbedder()), k=1, chunk_size=None)
    generic = ChunkArm(Services(embedder=HashEmbedder()), k=1, chunk_size=None, key="generic")
    evs = events()
    asyncio.run(content.ingest(evs))
    asyncio.run(generic.ingest(evs))
    question = Question("q", "Which city is the capital of Country57", ("City57",))
    assert "City57" in asyncio.run(content.read(question)).text
    assert "City57" not in asyncio.run(generic.read(question)).text
    assert GENERIC_KEY.format(date="2024-01-01") == "Conversation session on 2024-01-01"
    with pytest.raises(ValueError, match=r"arm\.key"):
        ChunkArm(key="title")
