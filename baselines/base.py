"""The one interface every memory arm implements, P-Mem and the baselines alike.

An arm is built per episode with the services it may use (its writer and embedder models), sees
the episode's events once in arrival order (`ingest`), may save and restore what it built
(`save` / `load`, so reruns never re-pay ingestion), and turns a question into the context the
shared reader answers from (`read`). Same reader, prompts and budget for every arm: only the
context differs (the paper's Eq. 1).
"""

from __future__ import annotations

import abc
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.types import Event, Question


@dataclass(frozen=True, slots=True)
class Context:
    text: str
    ids: tuple[str, ...] = ()  # which stored items were read (events, cells, chunks)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Item:
    """One ingest unit of the arms that store text as given: an event, or a chunk of lines."""

    index: int  # arrival order
    text: str
    at: str | None = None  # the event's date; chunks have none


def items_of(events: Sequence[Event], chunk_size: int | None) -> list[Item]:
    """The episode as ingest units.

    With `chunk_size`, the lines packed into line-aligned chunks of at most that many
    characters (B.4's 1,000-character chunks). Without, one unit per event with its date, except
    that consecutive turns of one conversation session (events sharing ``meta["session_id"]``,
    as LongMemEval's are) form one unit: the peers and chunk retrieval ingest and key sessions
    (B.1), not single turns.
    """
    if chunk_size is not None:
        from benchmarks.factconsolidation import chunks

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


#: the benchmark's answer prompt around a context, sent to the shared reader: context -> reply
Ask = Callable[[str], Awaitable[Any]]


@dataclass(slots=True)
class Services:
    """Model clients an arm may call; None when the profile has no such model."""

    writer: Any = None  # pmem.models.client.ChatModel
    embedder: Any = None  # pmem.models.client.Embedder
    judge: Any = None  # a larger chat model some read paths consult (Table 9's 35B router)


class MemoryArm(abc.ABC):
    """Subclass, implement `ingest` and `read`, and register a config under configs/arm/."""

    #: prompts the arm sends to models, by name; hashed into the run manifest
    prompts: ClassVar[dict[str, str]] = {}
    #: model roles the arm calls (writer, embedder); the runner starts and passes only these
    needs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, services: Services | None = None) -> None:
        self.services = services or Services()

    @abc.abstractmethod
    async def ingest(self, events: Sequence[Event]) -> None: ...

    @abc.abstractmethod
    async def read(self, question: Question) -> Context: ...

    async def respond(self, question: Question, ask: Ask) -> tuple[Context, Any]:
        """Read, then let the reader answer: (the context it answered from, its reply).

        Arms whose read is a dialogue with the reader (P-Mem's iterative readout, B.4) override
        this; the prompt, the reader and the budget stay the benchmark's (`ask`).
        """
        context = await self.read(question)
        return context, await ask(context.text)

    async def aclose(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Release what the arm holds (servers, open files); the runner calls it once the
        episode's questions are answered."""

    def save(self, directory: Path) -> bool:
        """Persist what ingest built; return False if the arm cannot (it is re-ingested)."""
        return False

    def load(self, directory: Path) -> bool:
        """Restore a saved ingest; return False if there is nothing usable."""
        return False


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
