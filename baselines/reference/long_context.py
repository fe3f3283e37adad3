"""Long-context baseline: no memory structure, the most recent history that fits the budget.

The paper's FactConsolidation long-context arm reads the most recent 56,000 characters
(Appendix B.4); LongMemEval's reads the full haystack oldest first up to the reader's window.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from baselines.base import load_events, save_events
from benchmarks.runner.arm import Context, MemoryArm, Services
from benchmarks.runner.types import Event, Question


class LongContextArm(MemoryArm):
    def __init__(
        self, services: Services | None = None, max_chars: int = 56_000, separator: str = "\n"
    ) -> None:
        super().__init__(services)
        self.max_chars = max_chars
        self.separator = separator
        self.events: list[Event] = []

    async def ingest(self, events: Sequence[Event]) -> None:
        self.events.extend(events)

    async def read(self, question: Question) -> Context:
        kept: list[Event] = []
        size = 0
        for event in reversed(self.events):  # newest first until the budget is spent
            size += len(event.text) + len(self.separator)
            if size > self.max_chars + len(self.separator):
                break
            kept.append(event)
        kept.reverse()
        text = self.separator.join(e.text for e in kept)
        return Context(text, tuple(e.id for e in kept), {"dropped": len(self.events) - len(kept)})

    def save(self, directory: Path) -> bool:
        save_events(directory, self.events)
        return True

    def load(self, directory: Path) -> bool:
        events = load_events(directory)
        if events is None:
            return False
        self.events = events
        return True
