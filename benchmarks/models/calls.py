"""Which model calls a piece of work made: a recorder the runner opens around one ingest or one
question, and every chat and embedding client adds to.

Why a context variable: a run ingests and answers many episodes and questions at once on one
event loop, and the clients are shared between them. `asyncio` gives every task a copy of the
context it was created in, so a recorder opened inside one question's task sees that question's
calls only (the reader's, a judge's, a writer's at read time), whatever else is in flight, with no
client told whom it works for. Nothing is recorded when no recorder is open.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

Call = dict[str, Any]
_OPEN: ContextVar[tuple[list[Call], Callable[[], None] | None] | None] = ContextVar(
    "pmem_model_calls", default=None
)


@contextmanager
def recording(on_call: Callable[[], None] | None = None) -> Iterator[list[Call]]:
    """``with recording() as calls:`` the model calls made inside the block (and in tasks it
    starts), in the order they finished. `on_call` runs after each one (a progress bar's tick)."""
    calls: list[Call] = []
    token = _OPEN.set((calls, on_call))
    try:
        yield calls
    finally:
        _OPEN.reset(token)


def record(call: Call) -> None:
    """Add one finished call to the open recorder, if any."""
    current = _OPEN.get()
    if current is None:
        return
    calls, on_call = current
    calls.append(call)
    if on_call is not None:
        on_call()
