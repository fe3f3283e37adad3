"""B.4's chunking: a source's fact lines packed into line-aligned 1,000-character chunks.

The chunk-based arms ingest these (``baselines.base.items_of``), and the P-Mem state arm
commits one per chunk, so every arm sees the same units.
"""

from __future__ import annotations

from collections.abc import Iterable

from benchmarks.factconsolidation.facts import Fact

__all__ = ["CHUNK_SIZE", "chunks"]

CHUNK_SIZE = 1000  # B.4: "1,000-character line-aligned pieces"


def chunks(lines: Iterable[str | Fact], size: int = CHUNK_SIZE) -> list[str]:
    """Group lines into line-aligned chunks of at most ``size`` characters (B.4).

    A chunk is its lines joined by newlines and holds as many whole lines as fit; a line is
    never split, so a single line longer than ``size`` is its own chunk. Joining the chunks
    with newlines gives back the lines joined with newlines. ``Fact`` items are taken as
    their context line ("N. sentence").
    """
    if size < 1:
        raise ValueError(f"chunk size must be positive, not {size}")
    out: list[str] = []
    current: list[str] = []
    length = 0
    for item in lines:
        line = item.line if isinstance(item, Fact) else item
        added = len(line) + (1 if current else 0)
        if current and length + added > size:
            out.append("\n".join(current))
            current, length, added = [], 0, len(line)
        current.append(line)
        length += added
    if current:
        out.append("\n".join(current))
    return out
