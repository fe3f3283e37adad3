"""What flows through the harness: episodes of events and questions, and predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Event:
    """One observation in arrival order (a fact line, a session turn, an update sentence).

    `meta` keys an arm may read: `session_id` (turns of one conversation session), `serial` (the
    order number the text starts with as ``N. ``: an unordered arm stores the text without it).
    Labels only oracle arms and audits read: `object` (what the event is about), `subject`,
    `relation`, `object` of a fact (the benchmark's own parse).
    """

    id: str
    text: str
    at: str | None = None  # ISO 8601 date of the observation, when the benchmark has one
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Question:
    id: str  # unique across the benchmark: the resume key
    text: str
    golds: tuple[str, ...]
    at: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Episode:
    """A history ingested once, then asked one or more questions."""

    id: str
    events: tuple[Event, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class Wording:
    """How a generated benchmark words its events and questions (`str.format` templates), for
    what may read labels: template-oracle writers, oracle routing and routing audits.

    `key`: an object's cell key (field `obj`); `question`: the question form (field `obj`);
    `events`: (kind, template) per event kind, tried in order."""

    key: str
    question: str
    events: tuple[tuple[str, str], ...] = ()


class InputError(Exception):
    """Something the user can fix: a data file, a path, a missing extra. `pmem-bench` prints
    the message as one line and exits 2, without a traceback (PMEM_DEBUG=1 shows it)."""


class Benchmark(Protocol):
    """A dataset loader or generator plus its answer prompt (ported word for word, hashed)."""

    name: str
    #: how a generated benchmark words its events (None for benchmarks of natural text)
    wording: Wording | None

    def episodes(self) -> list[Episode]: ...

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]: ...

    def prompts(self) -> dict[str, str]: ...

    def fingerprint(self) -> dict[str, Any]: ...
