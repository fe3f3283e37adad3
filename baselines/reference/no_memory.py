"""No-memory baseline (Table 4, Appendix B.1): "No-memory answers from empty context."

The row shows that LongMemEval cannot be answered from the question alone (4.0% in the paper),
so every memory arm's accuracy is read against it. The reader, prompt and answer budget are the
benchmark's, as for every other arm; only the history is empty.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.runner.arm import Context, MemoryArm
from benchmarks.runner.types import Event, Question


class NoMemoryArm(MemoryArm):
    """Stores nothing and reads nothing: the reading prompt's history is the empty string."""

    async def ingest(self, events: Sequence[Event]) -> None:
        return None

    async def read(self, question: Question) -> Context:
        return Context("", (), {"shown": 0})
