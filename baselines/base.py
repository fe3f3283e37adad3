"""Helpers the arms share: ingest units (events, sessions or chunks) and the events snapshot.

The interface itself (`MemoryArm`, `Context`, `Services`) is the harness's
(`benchmarks.runner.arm`): arms implement it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.runner.chunking import chunks
from benchmarks.runner.types import Event


@dataclass(frozen=True, slots=True)
class Item:
    """One ingest unit of the arms that store text as given: an event, or a chunk of lines."""

    index: int  # arrival order
    text: str
    at: str | None = None  # the event's date; chunks have none

    def date(self) -> dt.datetime | None:
        """`at` as a datetime (aware when it names a zone), or None: missing or not ISO 8601."""
        if not self.at:
            return None
        try:
            return dt.datetime.fromisoformat(self.at.strip().replace("Z", "+00:00"))
        except ValueError:
            return None


def items_of(events: Sequence[Event], chunk_size: int | None) -> list[Item]:
    """The episode as ingest units.

    With `chunk_size`, the lines packed into line-aligned chunks of at most that many
    characters (B.4's 1,000-character chunks). Without, one unit per event with its date, except
    that consecutive turns of one conversation session (events sharing ``meta["session_id"]``,
    as LongMemEval's are) form one unit: the peers and chunk retrieval ingest and key sessions
    (B.1), not single turns.
    """
    if chunk_size is not None:
        texts = chunks([e.text for e in events], chunk_size)
        return [Item(i, text) for i, text in enumerate(texts)]
    groups: list[list[Event]] = []
    for event in events:
        session = event.meta.get("session_id")
        if groups and session is not None and groups[-1][0].meta.get("session_id") == session:
            groups[-1].append(event)
        else:
            groups.append([event])
    return [Item(i, "\n".join(e.text for e in g), g[0].at) for i, g in enumerate(groups)]


# -- snapshots of arms that keep the events themselves ------------------------------------------

EVENTS_FILE = "events.json"


def save_events(directory: Path, events: Sequence[Event]) -> None:
    """The events an arm keeps (ids, texts, dates, meta) as its snapshot's events.json."""
    rows = [{"id": e.id, "text": e.text, "at": e.at, "meta": e.meta} for e in events]
    (directory / EVENTS_FILE).write_text(json.dumps(rows, ensure_ascii=False))


def load_events(directory: Path) -> list[Event] | None:
    """What `save_events` wrote, or None when the snapshot has no events."""
    path = directory / EVENTS_FILE
    if not path.exists():
        return None
    rows = json.loads(path.read_text())
    return [Event(r["id"], r["text"], r.get("at"), r.get("meta") or {}) for r in rows]
