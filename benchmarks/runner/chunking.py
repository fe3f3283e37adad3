"""Line-aligned chunking (B.4: 1,000-character pieces): the unit the chunk-based arms ingest
(``baselines.base.items_of``) and the P-Mem state arm commits, so every arm sees the same units.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

__all__ = ["CHUNK_SIZE", "chunks"]

CHUNK_SIZE = 1000  # B.4: "1,000-character line-aligned pieces"


class HasLine(Protocol):
    """A record that knows its context line (a benchmark's fact)."""

    @property
    def line(self) -> str: ...


def chunks(lines: Iterable[str | HasLine], size: int = CHUNK_SIZE) -> list[str]:
    """Group lines into line-aligned chunks of at most ``size`` characters (B.4).

    A chunk is its lines joined by newlines and holds as many whole lines as fit; a line is
    never split, so a single line longer than ``size`` is its own chunk. Joining the chunks
    with newlines gives back the lines joined with newlines. A record is taken as its context
    line (``.line``).
    """
    if size < 1:
        raise ValueError(f"chunk size must be positive, not {size}")
    out: list[str] = []
    current: list[str] = []
    length = 0
    for item in lines:
        line = item if isinstance(item, str) else item.line
        added = len(line) + (1 if current else 0)
        if current and length + added > size:
            out.append("\n".join(current))
            current, length, added = [], 0, len(line)
        current.append(line)
        length += added
    if current:
        out.append("\n".join(current))
    return out
