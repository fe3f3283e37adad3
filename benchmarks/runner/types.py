"""What flows through the harness: episodes of events and questions, and predictions."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class Event:
    """One observation in arrival order (a fact line, a session turn, an update sentence)."""

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


class InputError(Exception):
    """Something the user can fix: a data file, a path, a missing extra. `pmem-bench` prints
    the message as one line and exits 2, without a traceback (PMEM_DEBUG=1 shows it)."""


class Benchmark(Protocol):
    """A dataset loader or generator plus its answer prompt (ported word for word, hashed)."""

    name: str

    def episodes(self) -> list[Episode]: ...

    def answer_messages(self, question: Question, context: str) -> list[dict[str, str]]: ...

    def prompts(self) -> dict[str, str]: ...

    def fingerprint(self) -> dict[str, Any]: ...
